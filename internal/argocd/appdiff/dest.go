package appdiff

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// discover reads, once, the destination's version and the kinds it
// serves (what Argo CD gives Helm as .Capabilities, and what says which
// kinds are namespaced), and makes its client.
func (dest *destination) discover(conn *reach.Cluster, timeout time.Duration) error {
	dest.once.Do(func() {
		dest.err = dest.discoverOnce(conn, timeout)
	})
	return dest.err
}

func (dest *destination) discoverOnce(conn *reach.Cluster, timeout time.Duration) error {
	where := fleet.DisplayPath(dest.path)
	dest.timeout = max(timeout, time.Second)
	k := conn.Kube()
	dc, err := k.Discovery(dest.timeout)
	if err != nil {
		return fmt.Errorf("destination %s: %w", where, err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("destination %s: cannot read its version: %w", where, err)
	}
	dest.version = v.GitVersion
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return fmt.Errorf("destination %s: cannot read the kinds it serves: %w", where, err)
	}
	dest.resources = map[schema.GroupKind]resource{}
	seen := map[string]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		if !seen[l.GroupVersion] {
			seen[l.GroupVersion] = true
			dest.apiVersions = append(dest.apiVersions, l.GroupVersion)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") { // a subresource
				continue
			}
			dest.apiVersions = append(dest.apiVersions, l.GroupVersion+"/"+r.Kind)
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			if _, ok := dest.resources[gk]; !ok { // the preferred version comes first
				dest.resources[gk] = resource{gvr: gv.WithResource(r.Name), namespaced: r.Namespaced}
			}
		}
	}
	if dest.client, err = k.Dynamic(dest.timeout); err != nil {
		return fmt.Errorf("destination %s: %w", where, err)
	}
	return nil
}

// place sets the namespace of a namespaced object without one to the
// Application's destination namespace, and clears that of a
// cluster-scoped object that names one, as Argo CD's controller does; a
// kind the destination does not serve (its CRD is in the same
// Application, say) is taken as namespaced. It says whether it cleared a
// namespace: the object's tracking id is then set again.
func (dest *destination) place(o *unstructured.Unstructured, namespace string) (cleared bool) {
	r, known := dest.resources[o.GroupVersionKind().GroupKind()]
	switch {
	case known && !r.namespaced && o.GetNamespace() != "":
		o.SetNamespace("")
		return true
	case o.GetNamespace() == "" && namespace != "" && (!known || r.namespaced):
		o.SetNamespace(namespace)
	}
	return false
}

// get reads the live object of a kind, namespace and name; nil when it
// does not exist, or when the destination serves no such kind (it would
// be created).
func (dest *destination) get(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	r, ok := dest.resources[gvk.GroupKind()]
	if !ok {
		return nil, nil
	}
	if !r.namespaced {
		ns = ""
	}
	ctx, cancel := context.WithTimeout(ctx, dest.timeout)
	defer cancel()
	obj, err := dest.client.Resource(r.gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("cannot read %s %s on %s: %w", gvk.Kind, strings.TrimPrefix(ns+"/"+name, "/"), fleet.DisplayPath(dest.path), err)
	}
	return obj, nil
}

// dryRun applies obj on the destination as a server-side apply dry-run
// under Argo CD's field manager, for a server-side diff.
func (dest *destination) dryRun(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	r, ok := dest.resources[obj.GroupVersionKind().GroupKind()]
	if !ok {
		return nil, fmt.Errorf("%s serves no %s", fleet.DisplayPath(dest.path), obj.GroupVersionKind().GroupKind())
	}
	ns := obj.GetNamespace()
	if !r.namespaced {
		ns = ""
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, dest.timeout)
	defer cancel()
	force := true
	return dest.client.Resource(r.gvr).Namespace(ns).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		DryRun: []string{metav1.DryRunAll}, FieldManager: FieldManager, Force: &force,
	})
}
