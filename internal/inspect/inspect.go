// Package inspect reads one cluster as kubectl would, for an assistant:
// any object (Get, as kubectl get -o json), the events of one object
// (Events) and the log of a controller or a pod (Logs). Every read is
// bounded: each request by a timeout, each result by a limit, each object
// by a size; and a Secret's values are never returned, only its keys.
//
// It names no integration: the controllers whose logs it reads are the
// providers' (provider.Set.Controllers).
package inspect

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// The bounds of every result.
const (
	// DefaultLimit is the number of objects or events a call returns
	// when it asks for none in particular; MaxLimit the most it may ask.
	DefaultLimit = 50
	MaxLimit     = 500
	// MaxObjectBytes is the size (as JSON) of the largest object returned
	// whole; of a larger one, only its metadata.
	MaxObjectBytes = 64 << 10
	// DefaultTailLines and MaxTailLines bound the lines of a log.
	DefaultTailLines = 200
	MaxTailLines     = 2000
	// DefaultLimitBytes and MaxLimitBytes bound the bytes of a log.
	DefaultLimitBytes = 256 << 10
	MaxLimitBytes     = 1 << 20
	// DefaultTimeout bounds each request when the caller gives no timeout.
	DefaultTimeout = 30 * time.Second
)

// bound is n as a bound of a result: def when zero, at most most.
func bound(n, def, most int64, what string) (int64, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("%s must not be negative (got %d); 0 is %d", what, n, def)
	case n == 0:
		return def, nil
	case n > most:
		return most, nil
	}
	return n, nil
}

// bounded is ctx ended after timeout (DefaultTimeout when not positive),
// and the timeout.
func bounded(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc, time.Duration) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, cancel, timeout
}

// resolve maps a resource as kubectl get is given it ("deployments",
// "deploy", "Deployment", "deployments.apps", "deployments.v1.apps",
// "ks") to its mapping, the way kubectl's resource builder does
// (k8s.io/cli-runtime/pkg/resource.Builder.mappingFor): first as a
// resource, short names expanded, then as a kind.
func resolve(mapper apimeta.RESTMapper, arg string) (*apimeta.RESTMapping, error) {
	if arg == "" {
		return nil, errors.New("no resource given: name one as kubectl get takes it (pods, deploy, Kustomization, kustomizations.kustomize.toolkit.fluxcd.io)")
	}
	fullGVR, gr := schema.ParseResourceArg(arg)
	var gvk schema.GroupVersionKind
	if fullGVR != nil {
		gvk, _ = mapper.KindFor(*fullGVR)
	}
	if gvk.Empty() {
		gvk, _ = mapper.KindFor(gr.WithVersion(""))
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK == nil {
		v := gk.WithVersion("")
		fullGVK = &v
	}
	if !fullGVK.Empty() {
		if m, err := mapper.RESTMapping(fullGVK.GroupKind(), fullGVK.Version); err == nil {
			return m, nil
		}
	}
	m, err := mapper.RESTMapping(gk)
	if err != nil {
		if apimeta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the cluster has no resource type %q: name one it serves, as kubectl api-resources lists them", arg)
		}
		return nil, err
	}
	return m, nil
}

// mapperOf is the REST mapper of conn, by discovery, for one call.
func mapperOf(conn *kube.Conn, timeout time.Duration) (apimeta.RESTMapper, error) {
	d, err := conn.Discovery(timeout)
	if err != nil {
		return nil, err
	}
	return kube.ResourceMapper(d), nil
}

// reachError is err, said without the request's URL when the cluster
// could not be reached.
func reachError(ctx context.Context, conn *kube.Conn, err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return conn.ReachError(ctx, err)
	}
	return err
}
