package inspect

import (
	"context"
	"errors"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// GetQuery asks for objects of one resource of one cluster, as kubectl
// get does.
type GetQuery struct {
	// Resource is the resource as kubectl get takes it: "deployments",
	// "deploy", "Deployment", "deployments.apps",
	// "kustomizations.kustomize.toolkit.fluxcd.io", "ks"; resolved by the
	// cluster's discovery, short names included.
	Resource string
	// Namespace is that of a namespaced resource's objects: "default"
	// when empty, every namespace with AllNamespaces. A cluster-scoped
	// resource has none.
	Namespace     string
	AllNamespaces bool
	// Name asks for one object; with it, Selector must be empty.
	Name string
	// Selector is a label selector.
	Selector string
	// Limit is the most objects returned: DefaultLimit when 0, at most
	// MaxLimit.
	Limit int
	// Continue is the apiserver's continue token of a previous page.
	Continue string
}

// GetResult is a page of objects.
type GetResult struct {
	// Resource is the resource resolved: "deployments.apps".
	Resource   string `json:"resource"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
	// Items are the objects as kubectl get -o json shows them, without
	// metadata.managedFields; a Secret's values left out (sanitize).
	Items []map[string]any `json:"items"`
	// Continue asks for the next page; empty on the last.
	Continue  string `json:"continue,omitempty"`
	Remaining *int64 `json:"remainingItemCount,omitempty"`
}

// Get reads the objects q asks for from the cluster of conn: one by
// name, or a page of a list. Each request is bounded by timeout.
func Get(ctx context.Context, conn *kube.Conn, q GetQuery, timeout time.Duration) (*GetResult, error) {
	ctx, cancel, timeout := bounded(ctx, timeout)
	defer cancel()
	n, err := bound(int64(q.Limit), DefaultLimit, MaxLimit, "limit")
	if err != nil {
		return nil, err
	}
	switch {
	case q.Name != "" && q.Selector != "":
		return nil, errors.New("give a name or a label selector, not both")
	case q.Name != "" && q.AllNamespaces:
		return nil, errors.New("an object cannot be read by name across all namespaces: give its namespace")
	case q.Name != "" && q.Continue != "":
		return nil, errors.New("a continue token pages a list: give no name with it")
	}
	if q.Selector != "" {
		if _, err := labels.Parse(q.Selector); err != nil {
			return nil, fmt.Errorf("invalid label selector %q: %w", q.Selector, err)
		}
	}
	mapper, err := mapperOf(conn, timeout)
	if err != nil {
		return nil, err
	}
	m, err := resolve(mapper, q.Resource)
	if err != nil {
		return nil, reachError(ctx, conn, err)
	}
	dyn, err := conn.Dynamic(timeout)
	if err != nil {
		return nil, err
	}
	namespaced := m.Scope.Name() == apimeta.RESTScopeNameNamespace
	ns := ""
	if namespaced && !q.AllNamespaces {
		ns = q.Namespace
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
	}
	out := &GetResult{Resource: m.Resource.GroupResource().String(), Kind: m.GroupVersionKind.Kind, Namespaced: namespaced, Items: []map[string]any{}}
	secret := m.GroupVersionKind.Group == "" && m.GroupVersionKind.Kind == "Secret"
	r := dyn.Resource(m.Resource).Namespace(ns)
	if q.Name != "" {
		obj, err := r.Get(ctx, q.Name, metav1.GetOptions{})
		if err != nil {
			return nil, reachError(ctx, conn, fmt.Errorf("failed to get %s %s: %w", out.Resource, objectName(ns, q.Name), err))
		}
		out.Items = append(out.Items, sanitize(obj.Object, secret))
		return out, nil
	}
	list, err := r.List(ctx, metav1.ListOptions{LabelSelector: q.Selector, Limit: n, Continue: q.Continue})
	if err != nil {
		return nil, reachError(ctx, conn, fmt.Errorf("failed to list %s%s: %w", out.Resource, inNamespace(namespaced, ns), err))
	}
	for i := range list.Items {
		out.Items = append(out.Items, sanitize(list.Items[i].Object, secret))
	}
	out.Continue = list.GetContinue()
	out.Remaining = list.GetRemainingItemCount()
	return out, nil
}

// objectName is namespace/name, or name for a cluster-scoped object.
func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func inNamespace(namespaced bool, ns string) string {
	switch {
	case !namespaced:
		return ""
	case ns == "":
		return " in every namespace"
	}
	return " in namespace " + ns
}
