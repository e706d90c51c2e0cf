package capi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/tree"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/describe"
)

// DescribeCluster reads the object tree of the CAPI Cluster namespace/name
// through c, a client that discovers kinds (infrastructure and control
// plane objects are of any kind), with cluster-api's own discovery:
// clusterctl's tree.Discovery.
func DescribeCluster(ctx context.Context, c client.Client, namespace, name string, opts describe.Options) (*describe.Object, error) {
	t, err := tree.Discovery(ctx, c, namespace, name, tree.DiscoverOptions{
		ShowOtherConditions: opts.ShowConditions,
		Grouping:            opts.Grouping,
		Echo:                opts.Echo,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to read the CAPI objects of cluster %s/%s: %w", namespace, name, err)
	}
	return objectOf(t, t.GetRoot()), nil
}

func objectOf(t *tree.ObjectTree, obj client.Object) *describe.Object {
	o := &describe.Object{Kind: obj.GetObjectKind().GroupVersionKind().Kind, Name: obj.GetName(), Role: tree.GetMetaName(obj)}
	if tree.IsVirtualObject(obj) {
		o.Kind = ""
	}
	conds := tree.GetConditions(obj)
	o.Available = conditionOf(apimeta.FindStatusCondition(conds, "Available"))
	o.Ready = conditionOf(apimeta.FindStatusCondition(conds, "Ready"))
	o.UpToDate = conditionOf(apimeta.FindStatusCondition(conds, "UpToDate"))
	if tree.IsGroupObject(obj) {
		o.Group = strings.Split(tree.GetGroupItems(obj), tree.GroupItemsSeparator)
		o.Name = fmt.Sprintf("%d Machines", len(o.Group))
		// A group's conditions are made up by the grouping, with times of
		// its own: the status and reason are its members', the time is not.
		for _, c := range []*describe.Condition{o.Available, o.Ready, o.UpToDate} {
			if c != nil {
				c.Since = ""
			}
		}
	}
	if tree.IsShowConditionsObject(obj) {
		for i := range conds {
			switch conds[i].Type {
			case "Available", "Ready", "UpToDate":
			default:
				o.Other = append(o.Other, conditionOf(&conds[i]))
			}
		}
	}
	children := t.GetObjectsByParent(obj.GetUID())
	sort.SliceStable(children, func(i, j int) bool {
		a, b := children[i], children[j]
		if za, zb := tree.GetZOrder(a), tree.GetZOrder(b); za != zb {
			return za > zb
		}
		if ka, kb := a.GetObjectKind().GroupVersionKind().Kind, b.GetObjectKind().GroupVersionKind().Kind; ka != kb {
			return ka < kb
		}
		return a.GetName() < b.GetName()
	})
	for _, c := range children {
		o.Children = append(o.Children, objectOf(t, c))
	}
	return o
}

func conditionOf(c *metav1.Condition) *describe.Condition {
	if c == nil {
		return nil
	}
	out := &describe.Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
	if !c.LastTransitionTime.IsZero() {
		out.Since = c.LastTransitionTime.UTC().Format(time.RFC3339)
	}
	return out
}
