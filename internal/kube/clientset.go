package kube

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// ErrNoServer marks a connection that has no apiserver to ask: one dialled
// in memory (Options.Dial) or around a client alone. What needs the
// apiserver itself (discovery, logs) cannot be read through it.
var ErrNoServer = errors.New("the connection has no apiserver to ask (an in-memory cluster)")

// Clientset returns client-go's typed clients of the connection: what
// reads the built-in kinds kubectl reads (events, pods, their logs). It
// shares the connection's transport and request log, as Discovering does,
// and each of its requests is bounded by timeout, the reading of its body
// (a log's stream) included.
func (c *Conn) Clientset(timeout time.Duration) (kubernetes.Interface, error) {
	cfg, hc, err := c.bounded(timeout)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("failed to build a client for %s: %w", RedactURL(c.cfg.Host), err)
	}
	return cs, nil
}

// Dynamic returns a client of the connection for any resource, read as
// unstructured objects, as kubectl get reads them; bounded as Clientset.
func (c *Conn) Dynamic(timeout time.Duration) (dynamic.Interface, error) {
	cfg, hc, err := c.bounded(timeout)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("failed to build a dynamic client for %s: %w", RedactURL(c.cfg.Host), err)
	}
	return dc, nil
}

// Discovery returns a discovery client of the connection that remembers
// what it was told for its own lifetime (one call of a tool), bounded as
// Clientset. Nothing is asked until it is first used.
func (c *Conn) Discovery(timeout time.Duration) (discovery.CachedDiscoveryInterface, error) {
	cfg, hc, err := c.bounded(timeout)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("failed to set up discovery for %s: %w", RedactURL(c.cfg.Host), err)
	}
	return memory.NewMemCacheClient(dc), nil
}

// ResourceMapper is the REST mapper kubectl resolves its resource
// arguments with: discovery's kinds and resources, and the short names
// ("deploy", "ks") and categories the cluster declares.
func ResourceMapper(d discovery.CachedDiscoveryInterface) apimeta.RESTMapper {
	return restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(d), d, nil)
}

// bounded is the connection's config and HTTP client with every request
// bounded by timeout.
func (c *Conn) bounded(timeout time.Duration) (*rest.Config, *http.Client, error) {
	if c.http == nil {
		return nil, nil, fmt.Errorf("%s: %w", RedactURL(c.cfg.Host), ErrNoServer)
	}
	cfg := rest.CopyConfig(c.cfg)
	cfg.Timeout = timeout
	hc := *c.http
	hc.Timeout = timeout
	return cfg, &hc, nil
}
