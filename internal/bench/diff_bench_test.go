//go:build linux

package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/object"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxkustomize "github.com/fluxcd/pkg/apis/kustomize"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/appspec"
	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/argorender"
	fluxdiff "github.com/kubectl-fleet/kubectl-fleet/internal/flux/diff"
	"github.com/kubectl-fleet/kubectl-fleet/internal/sandbox"
)

// The knobs of BenchmarkDiff, from the environment (make bench sets them).
const (
	// envDiffApps is the hub's Applications, and the Kustomizations of the
	// anchor (default 500).
	envDiffApps = "FLEET_BENCH_DIFF_APPS"
	// envDiffPairs is how many times each diff runs, the two in turn
	// (default 1: the anchor takes two minutes at 500).
	envDiffPairs = "FLEET_BENCH_DIFF_PAIRS"
	// envDiffOut is the file the table is written to.
	envDiffOut = "FLEET_BENCH_DIFF_OUT"
)

// diffHubSpec is an Argo CD hub and its child spoke, which the hub's
// Argo CD reaches by its cluster Secret and Flux by its CAPI kubeconfig
// Secret.
const diffHubSpec = `name: hub
argocd: true
clusters:
  - name: spoke
    namespace: spokes
    provider: aws
    edges: [capi, argocd]
`

// The namespaces of the hub's Kustomizations: those applying to the hub,
// and those applying to the spoke through its kubeconfig Secret, which
// must be in the Cluster's namespace.
const (
	fluxNamespace  = "flux-system"
	spokeNamespace = "spokes"
	fluxRepoName   = "bench-apps"
)

// BenchmarkDiff times `kubectl fleet diff --kind app` of a hub of
// real-sized Argo CD Applications (FLEET_BENCH_DIFF_APPS, default 500;
// directory, Kustomize and Helm sources of five objects each, a fifth
// deploying to a child cluster, four in ten drifted) with the real
// binary, as a user runs it, against its anchor in the same run: `argocd
// app diff` needs an Argo CD API server, which the sandbox does not run,
// so the anchor is `kubectl fleet diff --kind ks` of as many Flux
// Kustomizations rendering the same objects from the same checkout, on
// the same clusters, drifted alike. The two run in turn, each -o json,
// its summary checked: every drift found, nothing else.
func BenchmarkDiff(b *testing.B) {
	ctrllog.SetLogger(logr.Discard())
	n := envInt(b, envDiffApps, 500)
	pairs := envInt(b, envDiffPairs, 1)
	bin := buildPlugin(b)
	apps := benchApps(n)
	dir := writeDiffCheckout(b, apps)
	f, took := startSpec(b, diffHubSpec)
	defer stopFleet(b, f)
	b.Logf("the hub and its spoke started in %s", took.Round(time.Second))
	start := time.Now()
	populateDiff(b, f, dir, apps)
	b.Logf("%d Applications, %d Kustomizations and their objects written in %s", n, n, time.Since(start).Round(time.Second))

	want := wantSummary(apps)
	commands := []struct {
		kind string
		want diffSummary
	}{{"app", want.app}, {"ks", want.ks}}
	var runs [2][]run
	b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
		for b.Loop() {
			for range pairs {
				for i, c := range commands {
					runs[i] = append(runs[i], runDiff(b, bin, f.Kubeconfig, dir, c.kind, c.want))
				}
			}
		}
		app := medianRun(runs[0])
		b.ReportMetric(app.wall.Seconds(), "wall-s")
		b.ReportMetric(app.toolCPU.Seconds(), "tool-CPU-s")
		b.ReportMetric(app.rssMB, "peak-RSS-MB")
		b.ReportMetric(ratioOf(runs[0], runs[1], func(r run) float64 { return r.wall.Seconds() }), "wall-x-flux")
	})
	writeTable(b, envDiffOut, "benchmarks-diff.md", diffTable(n, apps, runs[0], runs[1]))
}

// runDiff runs `diff --kind KIND --git DIR -o json` and checks its
// summary: every drift found, nothing else.
func runDiff(b *testing.B, bin, kubeconfig, dir, kind string, want diffSummary) run {
	b.Helper()
	r := runPlugin(b, bin, kubeconfig, "diff", "--kind", kind, "--git", dir, "-o", "json")
	if r.code != 1 {
		b.Fatalf("diff --kind %s: exit %d, want 1: %s", kind, r.code, firstLine(r.stderr))
	}
	if lines := strings.Count(r.stderr, "\n"); lines > 0 {
		b.Logf("diff --kind %s wrote %d lines to stderr, the first: %s", kind, lines, firstLine(r.stderr))
	}
	var got struct {
		Summary diffSummary `json:"summary"`
	}
	if err := json.Unmarshal(r.stdout, &got); err != nil {
		b.Fatalf("diff --kind %s -o json: %v", kind, err)
	}
	if got.Summary != want {
		b.Errorf("diff --kind %s: summary %+v, want %+v", kind, got.Summary, want)
	}
	return r
}

// diffSummary is what the bench checks of diff -o json's summary.
type diffSummary struct {
	Failed     int `json:"failed"`
	NotDiffed  int `json:"notDiffed"`
	Unreadable int `json:"unreadable"`
	Created    int `json:"created"`
	Configured int `json:"configured"`
	Pruned     int `json:"pruned"`
	Prunable   int `json:"prunable"`
	Unchanged  int `json:"unchanged"`
}

// wantSummary is what each diff must report of the apps: each drift once,
// every other object unchanged; Argo CD prunes only where automated.
func wantSummary(apps []benchApp) (want struct{ app, ks diffSummary }) {
	for _, a := range apps {
		unchanged := 5
		for _, s := range []*diffSummary{&want.app, &want.ks} {
			switch a.drift {
			case handEdited:
				s.Configured++
				unchanged = 4
			case missing:
				s.Created++
				unchanged = 4
			case leftOver:
				switch {
				case s == &want.ks, a.automated:
					s.Pruned++
				default:
					s.Prunable++
				}
			}
			s.Unchanged += unchanged
		}
	}
	return want
}

// ratioOf is the median of a figure's ratios, pair by pair.
func ratioOf(as, bs []run, of func(run) float64) float64 {
	v := make([]float64, 0, len(as))
	for i := range min(len(as), len(bs)) {
		v = append(v, of(as[i])/of(bs[i]))
	}
	return median(v)
}

// diffTable renders the two rows as docs/benchmarks.md shows them.
func diffTable(n int, apps []benchApp, argo, flux []run) string {
	spoke := 0
	for _, a := range apps {
		if a.spoke {
			spoke++
		}
	}
	a, f := medianRun(argo), medianRun(flux)
	x := func(of func(run) float64) string { return fmt.Sprintf("×%.2f", ratioOf(argo, flux, of)) }
	var s strings.Builder
	fmt.Fprintf(&s, "%d units of 5 objects (%d on the hub, %d on its spoke), 4 in 10 drifted; %d runs of each, in turn: medians, and the medians of the ratios pair by pair\n\n", n, n-spoke, spoke, len(argo))
	s.WriteString("| command | wall | CPU of the plugin (user+sys) | peak RSS | CPU of the sandbox | requests |\n|---|---:|---:|---:|---:|---:|\n")
	row := func(cmd string, r run) {
		fmt.Fprintf(&s, "| %s | %.2f s | %.2f s | %.0f MB | %.1f s | %d |\n", cmd, r.wall.Seconds(), r.toolCPU.Seconds(), r.rssMB, r.fleetCPU.Seconds(), r.requests)
	}
	row(fmt.Sprintf("`diff --kind app --git DIR -o json`: %d Applications", n), a)
	row(fmt.Sprintf("`diff --kind ks --git DIR -o json`: %d Kustomizations (the anchor)", n), f)
	fmt.Fprintf(&s, "| Applications / Kustomizations | %s | %s | %s | %s | %.2f |\n",
		x(func(r run) float64 { return r.wall.Seconds() }), x(func(r run) float64 { return r.toolCPU.Seconds() }),
		x(func(r run) float64 { return r.rssMB }), x(func(r run) float64 { return r.fleetCPU.Seconds() }),
		float64(a.requests)/float64(f.requests))
	return s.String()
}

// diffClients are admin clients of the hub and the spoke, unthrottled.
type diffClients struct {
	hub, spoke client.Client
	// versions are the clusters' Kubernetes versions, by "hub", "spoke".
	versions map[string]string
}

func newDiffClients(b *testing.B, f *sandbox.Fleet) diffClients {
	b.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kustomizev1.AddToScheme, sourcev1.AddToScheme} {
		if err := add(scheme); err != nil {
			b.Fatal(err)
		}
	}
	cs := diffClients{versions: map[string]string{}}
	for path, c := range map[string]*client.Client{"": &cs.hub, "spoke": &cs.spoke} {
		cfg := rest.CopyConfig(f.Members[path].Config)
		cfg.QPS, cfg.Burst = -1, 0
		var err error
		if *c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
			b.Fatal(err)
		}
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		v, err := dc.ServerVersion()
		if err != nil {
			b.Fatal(err)
		}
		cs.versions[path] = v.GitVersion
	}
	return cs
}

// populateDiff writes, on the hub and the spoke, the apps' Applications
// and Kustomizations and the live objects Argo CD and Flux would have
// applied from the checkout (each rendered from it by the diff's own
// renderers, applied as each tool applies: kubectl's client-side apply
// for Argo CD, a server-side apply as kustomize-controller for Flux),
// then the drifts: a hand edit, an object never applied, an object
// applied before and rendered no more.
func populateDiff(b *testing.B, f *sandbox.Fleet, dir string, apps []benchApp) {
	b.Helper()
	ctx := context.Background()
	cs := newDiffClients(b, f)
	head := strings.TrimSpace(gitOutput(b, dir, "rev-parse", "HEAD"))
	spokeServer := secretData(b, cs.hub, "argocd", "cluster-spoke", "server")
	for _, c := range []client.Client{cs.hub, cs.spoke} {
		for _, a := range apps {
			for _, ns := range []string{a.team, "flux-" + a.team} {
				if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
					b.Fatal(err)
				}
			}
		}
	}
	for _, ns := range []string{fluxNamespace, spokeNamespace} {
		if err := cs.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatal(err)
		}
	}
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: fluxNamespace, Name: fluxRepoName},
		Spec: sourcev1.GitRepositorySpec{URL: diffRepoURL, Interval: metav1.Duration{Duration: 10 * time.Minute},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	if err := cs.hub.Create(ctx, repo); err != nil {
		b.Fatal(err)
	}
	settings, err := appspec.ParseSettings("argocd", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	// Eight at a time, as a controller's workers write.
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	for _, a := range apps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			target, version, server := cs.hub, cs.versions[""], "https://kubernetes.default.svc"
			if a.spoke {
				target, version, server = cs.spoke, cs.versions["spoke"], spokeServer
			}
			err := populateApp(ctx, cs.hub, target, a, dir, head, version, server, settings)
			if err == nil {
				err = populateKustomization(ctx, cs.hub, target, a, dir)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("%s: %v", a.name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		b.Fatalf("populating the hub: %d errors, the first: %s", len(errs), errs[0])
	}
}

// populateApp creates a's Application on the hub, with the status Argo
// CD's controller writes of it, and its live objects on target, as the
// controller applies them: rendered from the checkout, tracked, applied
// by kubectl's client-side apply (its last-applied-configuration).
func populateApp(ctx context.Context, hub, target client.Client, a benchApp, dir, head, version, server string, settings appspec.Settings) error {
	src := map[string]any{"repoURL": diffRepoURL, "path": a.argoPath(), "targetRevision": "main"}
	switch a.source {
	case typeKustomize:
		src["kustomize"] = map[string]any{"namePrefix": a.name + "-", "commonLabels": map[string]any{"team": a.team}, "images": []any{"nginx:1.27.4"}}
	case typeHelm:
		src["helm"] = map[string]any{"valueFiles": []any{"../../values/" + a.name + ".yaml"}, "parameters": []any{map[string]any{"name": "image.tag", "value": "1.27.4"}}}
	}
	spec := map[string]any{"project": "default", "source": src, "destination": map[string]any{"server": server, "namespace": a.team}}
	if a.automated {
		spec["syncPolicy"] = map[string]any{"automated": map[string]any{"prune": true, "selfHeal": true}}
	}
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"namespace": "argocd", "name": a.name}, "spec": spec,
	}}
	raw, err := app.MarshalJSON()
	if err != nil {
		return err
	}
	parsed, err := appspec.Decode(raw)
	if err != nil {
		return err
	}
	parsed.Namespace, parsed.Name = "argocd", a.name
	req := argorender.Request{App: parsed, Source: argorender.Sources(parsed)[0], Checkout: dir, Revision: head, KubeVersion: version, Settings: settings}
	objs, err := argorender.Render(ctx, req)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if a.drift == leftOver {
		legacy := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": a.name + legacyName}, "data": map[string]any{"level": "legacy"},
		}}
		objs = append(objs, legacy)
	}
	var resources []any
	for _, o := range objs {
		if o.GetNamespace() == "" {
			o.SetNamespace(a.team)
		}
		if err := argorender.SetTracking(o, req); err != nil {
			return err
		}
		gvk := o.GroupVersionKind()
		resources = append(resources, map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind, "namespace": o.GetNamespace(), "name": o.GetName(), "status": "Synced"})
		if a.drift == missing && gvk.Kind == "Service" {
			continue
		}
		if err := kubectlApply(ctx, target, o); err != nil {
			return err
		}
		if a.drift == handEdited && gvk.Kind == "ConfigMap" {
			if err := editByHand(ctx, target, o); err != nil {
				return err
			}
		}
	}
	app.Object["status"] = map[string]any{
		"resources": resources,
		"sync":      map[string]any{"status": "Synced", "revision": head},
		"health":    map[string]any{"status": "Healthy"},
	}
	return hub.Create(ctx, app)
}

// kubectlApply creates obj as kubectl apply does: with its
// last-applied-configuration, the object as applied.
func kubectlApply(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[corev1.LastAppliedConfigAnnotation] = string(data)
	obj = obj.DeepCopy()
	obj.SetAnnotations(ann)
	return c.Create(ctx, obj)
}

// editByHand changes a live ConfigMap's level, as kubectl edit does.
func editByHand(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(live.Object, "edited-by-hand", "data", "level"); err != nil {
		return err
	}
	return c.Update(ctx, live, client.FieldOwner("kubectl-edit"))
}

// populateKustomization creates a's Kustomization on the hub, with the
// inventory kustomize-controller writes, and its live objects on target,
// as the controller applies them: built from the checkout, applied
// server-side under its field manager.
func populateKustomization(ctx context.Context, hub, target client.Client, a benchApp, dir string) error {
	ns := fluxNamespace
	k := &kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: a.name},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute}, Path: "./" + a.fluxPath(), Prune: true, TargetNamespace: "flux-" + a.team,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: fluxRepoName, Namespace: fluxNamespace},
		},
	}
	if a.spoke {
		k.Namespace = spokeNamespace
		k.Spec.KubeConfig = &fluxmeta.KubeConfigReference{SecretRef: &fluxmeta.SecretKeyReference{Name: "spoke-kubeconfig", Key: "value"}}
	}
	if a.source == typeKustomize {
		k.Spec.NamePrefix = a.name + "-"
		k.Spec.CommonMetadata = &kustomizev1.CommonMetadata{Labels: map[string]string{"team": a.team}}
		k.Spec.Images = []fluxkustomize.Image{{Name: "nginx", NewTag: "1.27.4"}}
	}
	objs, err := fluxdiff.Build(ctx, k, fluxdiff.Source{Dir: dir}, hub)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if a.drift == leftOver {
		legacy := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"level": "legacy"},
			"metadata": map[string]any{"name": a.name + legacyName, "namespace": "flux-" + a.team, "labels": map[string]any{
				kustomizev1.GroupVersion.Group + "/name": k.Name, kustomizev1.GroupVersion.Group + "/namespace": k.Namespace,
			}},
		}}
		objs = append(objs, legacy)
	}
	inventory := &kustomizev1.ResourceInventory{}
	for _, o := range objs {
		inventory.Entries = append(inventory.Entries, kustomizev1.ResourceRef{ID: object.UnstructuredToObjMetadata(o).String(), Version: o.GroupVersionKind().Version})
		if a.drift == missing && o.GetKind() == "Service" {
			continue
		}
		if err := target.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(fluxdiff.Controller.Field), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if a.drift == handEdited && o.GetKind() == "ConfigMap" {
			if err := editByHand(ctx, target, o); err != nil {
				return err
			}
		}
	}
	if err := hub.Create(ctx, k); err != nil {
		return err
	}
	k.Status = kustomizev1.KustomizationStatus{Inventory: inventory, LastAppliedRevision: "main@sha1:bench", ObservedGeneration: k.Generation}
	return hub.Status().Update(ctx, k)
}

// secretData is the value of key in the Secret namespace/name.
func secretData(b *testing.B, c client.Client, namespace, name, key string) string {
	b.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		b.Fatal(err)
	}
	return string(s.Data[key])
}

func gitOutput(b *testing.B, dir string, args ...string) string {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
