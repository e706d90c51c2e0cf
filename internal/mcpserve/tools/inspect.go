package tools

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/inspect"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/mcpserve"
	"github.com/kubectl-fleet/kubectl-fleet/internal/provider"
)

// clusterArgs name the one cluster a tool reads.
type clusterArgs struct {
	Path    string `json:"path" jsonschema:"the cluster: names from the root joined by / (aws/team-a); empty string for the root"`
	Timeout string `json:"timeout,omitempty" jsonschema:"time allowed for reaching the cluster and for each request, as a duration; default 10s"`
}

type getInput struct {
	clusterArgs
	Resource      string `json:"resource" jsonschema:"the kind of object, as kubectl get takes it: deployments, deploy, Deployment, kustomizations.kustomize.toolkit.fluxcd.io, ks"`
	Namespace     string `json:"namespace,omitempty" jsonschema:"the namespace of a namespaced kind; default: default"`
	AllNamespaces bool   `json:"allNamespaces,omitempty" jsonschema:"objects of every namespace"`
	Name          string `json:"name,omitempty" jsonschema:"one object by name"`
	Selector      string `json:"selector,omitempty" jsonschema:"a label selector (app=web)"`
	pageArgs
}

type getOutput struct {
	Resource   string           `json:"resource" jsonschema:"the resource, as resolved: deployments.apps"`
	Kind       string           `json:"kind"`
	Namespaced bool             `json:"namespaced"`
	Items      []map[string]any `json:"items" jsonschema:"the objects as kubectl get -o json shows them, without managedFields; a Secret's values are never returned, only its keys (dataKeys)"`
	NextCursor string           `json:"nextCursor,omitempty" jsonschema:"pass as cursor for the next page; absent on the last"`
}

type eventsInput struct {
	clusterArgs
	Resource  string `json:"resource" jsonschema:"the kind of the object: Kustomization, ks, pod, Cluster.cluster.x-k8s.io..."`
	Namespace string `json:"namespace,omitempty" jsonschema:"its namespace; default: default"`
	Name      string `json:"name" jsonschema:"its name"`
	Limit     int    `json:"limit,omitempty" jsonschema:"the newest this many events, 1 to 500; default 50"`
}

type logsInput struct {
	clusterArgs
	Controller string `json:"controller,omitempty" jsonschema:"a controller of the fleet's integrations: kustomize-controller, helm-controller, source-controller, argocd-application-controller, capi-controller-manager..."`
	Namespace  string `json:"namespace,omitempty" jsonschema:"or a pod: its namespace (default: default)"`
	Pod        string `json:"pod,omitempty" jsonschema:"or a pod: its name"`
	Container  string `json:"container,omitempty" jsonschema:"the container; default: the pod's default one"`
	TailLines  int64  `json:"tailLines,omitempty" jsonschema:"the last this many lines, at most 2000; default 200"`
	Previous   bool   `json:"previous,omitempty" jsonschema:"the log of the container's previous run"`
}

// addInspectTools registers the tools that read one cluster.
func (o *tools) addInspectTools() {
	mcpserve.AddTool(o.s, &mcp.Tool{
		Name:        "fleet_get",
		Description: "Objects of one cluster of the fleet, as kubectl get -o json shows them: one by name or a page of a list. Secrets' values are never returned, only their keys." + dataNote,
		Annotations: readOnly("Get objects"),
	}, o.get)
	mcpserve.AddTool(o.s, &mcp.Tool{
		Name:        "fleet_events",
		Description: "The events of one object of one cluster of the fleet, oldest first, as kubectl describe lists them." + dataNote,
		Annotations: readOnly("Events of an object"),
	}, o.events)
	names := make([]string, 0)
	for _, c := range o.Controllers {
		names = append(names, c.Name)
	}
	mcpserve.AddTool(o.s, &mcp.Tool{
		Name:        "fleet_logs",
		Description: "The tail of a log on one cluster of the fleet: of a controller (" + strings.Join(names, ", ") + ") or of a pod. Bounded in lines and bytes." + dataNote,
		Annotations: readOnly("Logs"),
	}, o.logs)
}

func (o *tools) get(ctx context.Context, req *mcp.CallToolRequest, in getInput) (*mcp.CallToolResult, *getOutput, error) {
	var res *inspect.GetResult
	err := o.s.OnCluster(ctx, req, in.Path, in.Timeout, func(ctx context.Context, conn *kube.Conn, timeout time.Duration, _ []provider.Controller) (err error) {
		res, err = inspect.Get(ctx, conn, inspect.GetQuery{
			Resource: in.Resource, Namespace: in.Namespace, AllNamespaces: in.AllNamespaces,
			Name: in.Name, Selector: in.Selector, Limit: in.Limit, Continue: in.Cursor,
		}, timeout)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	items, err := mcpserve.Safe[[]map[string]any](res.Items, "ask for fewer objects (limit), or one (name)")
	if err != nil {
		return nil, nil, err
	}
	if items == nil {
		items = []map[string]any{}
	}
	out := &getOutput{Resource: escape.String(res.Resource), Kind: escape.String(res.Kind), Namespaced: res.Namespaced, Items: items, NextCursor: escape.String(res.Continue)}
	return mcpserve.Text("%d %s", len(items), res.Resource), out, nil
}

func (o *tools) events(ctx context.Context, req *mcp.CallToolRequest, in eventsInput) (*mcp.CallToolResult, map[string]any, error) {
	var res *inspect.EventsResult
	err := o.s.OnCluster(ctx, req, in.Path, in.Timeout, func(ctx context.Context, conn *kube.Conn, timeout time.Duration, _ []provider.Controller) (err error) {
		res, err = inspect.Events(ctx, conn, inspect.ObjectRef{Resource: in.Resource, Namespace: in.Namespace, Name: in.Name}, in.Limit, timeout)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	out, err := mcpserve.Safe[map[string]any](res, "ask for fewer events (limit)")
	if err != nil {
		return nil, nil, err
	}
	return mcpserve.Text("%d events of %s", len(res.Events), res.Object), out, nil
}

func (o *tools) logs(ctx context.Context, req *mcp.CallToolRequest, in logsInput) (*mcp.CallToolResult, map[string]any, error) {
	if (in.Controller == "") == (in.Pod == "") {
		return nil, nil, errors.New("fleet_logs reads one log: give controller, or pod (with its namespace)")
	}
	var res *inspect.LogsResult
	err := o.s.OnCluster(ctx, req, in.Path, in.Timeout, func(ctx context.Context, conn *kube.Conn, timeout time.Duration, controllers []provider.Controller) (err error) {
		res, err = inspect.Logs(ctx, conn, inspect.LogQuery{
			Controller: in.Controller, Namespace: in.Namespace, Pod: in.Pod, Container: in.Container,
			TailLines: in.TailLines, Previous: in.Previous,
		}, controllers, timeout)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	out, err := mcpserve.Safe[map[string]any](res, "ask for fewer lines (tailLines)")
	if err != nil {
		return nil, nil, err
	}
	return mcpserve.Text("%d lines of %s/%s", len(res.Lines), res.Namespace, res.Pod), out, nil
}
