package fluxdiff

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cluster is one cluster whose Kustomizations are diffed, with what the
// diff needs of it; the caller connects.
type Cluster struct {
	// Path is the cluster's fleet path.
	Path string
	// Kustomizations are the Kustomizations to diff, read fresh from Client.
	Kustomizations []types.NamespacedName
	// Client reads the cluster: its Kustomizations, and the ConfigMaps and
	// Secrets postBuild.substituteFrom names.
	Client client.Client
	// Target returns a client of the cluster k applies to: Client, or
	// the cluster spec.kubeConfig reaches; TargetPath that cluster's fleet
	// path, known before any connection.
	Target     func(ctx context.Context, k *kustomizev1.Kustomization) (client.Client, error)
	TargetPath func(key types.NamespacedName) string
	// Source returns the checkout to compare k with; a non-empty skip says
	// why there is none, and k is not diffed.
	Source func(ctx context.Context, k *kustomizev1.Kustomization) (src Source, skip string, err error)
}

// Kustomization is the diff of one Kustomization.
type Kustomization struct {
	// Cluster is the fleet path of the cluster the Kustomization is on.
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Target is the fleet path of the cluster it applies to; TargetSecret,
	// NAMESPACE/NAME, the spec.kubeConfig Secret that reaches it.
	Target       string `json:"target"`
	TargetSecret string `json:"targetSecret,omitempty"`
	// Source is KIND/NAMESPACE/NAME of its sourceRef; Checkout the
	// directory it was compared with; Path its spec.path.
	Source    string `json:"source"`
	Checkout  string `json:"checkout,omitempty"`
	Path      string `json:"path"`
	Suspended bool   `json:"suspended,omitempty"`
	// Skipped says why the Kustomization was not diffed; Error why the
	// diff failed.
	Skipped string   `json:"skipped,omitempty" escape:"oneline"`
	Error   string   `json:"error,omitempty" escape:"oneline"`
	Objects []Object `json:"objects"`
}

// Changes counts the objects the apply would change.
func (k *Kustomization) Changes() int {
	n := 0
	for _, o := range k.Objects {
		if o.Action.Changes() {
			n++
		}
	}
	return n
}

// Failed reports whether the Kustomization, or one of its objects, could
// not be diffed.
func (k *Kustomization) Failed() bool {
	if k.Error != "" {
		return true
	}
	for _, o := range k.Objects {
		if o.Action == Failed {
			return true
		}
	}
	return false
}

// String is NAMESPACE/NAME.
func (k *Kustomization) String() string { return k.Namespace + "/" + k.Name }

// Options tune a Run.
type Options struct {
	// Concurrency bounds how many clusters are diffed at once.
	Concurrency int
	// Done, when set, is called after each Kustomization, from any goroutine.
	Done func()
}

// Run diffs the Kustomizations of every cluster: clusters in parallel,
// under opts.Concurrency, and the Kustomizations of one cluster one after
// the other, in dependsOn order. The results come in that order, cluster
// by cluster as given. Failures are results; only ctx ends Run early.
func Run(ctx context.Context, clusters []Cluster, opts Options) []Kustomization {
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.Done == nil {
		opts.Done = func() {}
	}
	results := make([][]Kustomization, len(clusters))
	sem := make(chan struct{}, opts.Concurrency)
	var wg sync.WaitGroup
	for i := range clusters {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			results[i] = diffCluster(ctx, &clusters[i], opts.Done)
		})
	}
	wg.Wait()
	var out []Kustomization
	for _, r := range results {
		out = append(out, r...)
	}
	return out
}

// diffCluster reads the cluster's Kustomizations and diffs them in order.
func diffCluster(ctx context.Context, c *Cluster, done func()) []Kustomization {
	var (
		out   []Kustomization
		found []*kustomizev1.Kustomization
	)
	for _, key := range c.Kustomizations {
		k := &kustomizev1.Kustomization{}
		if err := c.Client.Get(ctx, key, k); err != nil {
			r := Kustomization{Cluster: c.Path, Namespace: key.Namespace, Name: key.Name, Target: c.TargetPath(key), Objects: []Object{}, Error: fmt.Sprintf("failed to read the Kustomization: %v", err)}
			if apierrors.IsNotFound(err) {
				r.Error = "the Kustomization is gone"
			}
			out = append(out, r)
			done()
			continue
		}
		found = append(found, k)
	}
	ordered, cycle := Order(found)
	for _, k := range ordered {
		if ctx.Err() != nil {
			break
		}
		r := diffOne(ctx, c, k)
		if cycle[k] {
			r.Error = strings.TrimPrefix(r.Error+"; ", "; ") + "its dependsOn form a cycle: diffed after the others"
		}
		out = append(out, r)
		done()
	}
	return out
}

func diffOne(ctx context.Context, c *Cluster, k *kustomizev1.Kustomization) Kustomization {
	ref := k.Spec.SourceRef
	if ref.Namespace == "" {
		ref.Namespace = k.Namespace
	}
	r := Kustomization{
		Cluster: c.Path, Namespace: k.Namespace, Name: k.Name,
		Source: ref.Kind + "/" + ref.Namespace + "/" + ref.Name, Path: k.Spec.Path, Suspended: k.Spec.Suspend,
		Target: c.TargetPath(client.ObjectKeyFromObject(k)), Objects: []Object{},
	}
	if kc := k.Spec.KubeConfig; kc != nil && kc.SecretRef != nil {
		r.TargetSecret = k.Namespace + "/" + kc.SecretRef.Name
	}
	src, skip, err := c.Source(ctx, k)
	switch {
	case err != nil:
		r.Error = err.Error()
		return r
	case skip != "":
		r.Skipped = skip
		return r
	}
	r.Checkout = src.Dir
	target, err := c.Target(ctx, k)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	objects, err := Build(ctx, k, src, c.Client)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Objects, err = Compare(ctx, target, k, objects)
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// Order sorts Kustomizations so that each comes after those of its
// dependsOn among them (a dependency that is not among them is not
// waited for), otherwise by namespace and name. Those on a dependsOn
// cycle come last, and are marked.
func Order(ks []*kustomizev1.Kustomization) ([]*kustomizev1.Kustomization, map[*kustomizev1.Kustomization]bool) {
	sorted := append([]*kustomizev1.Kustomization(nil), ks...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Namespace != sorted[j].Namespace {
			return sorted[i].Namespace < sorted[j].Namespace
		}
		return sorted[i].Name < sorted[j].Name
	})
	byKey := map[string]*kustomizev1.Kustomization{}
	for _, k := range sorted {
		byKey[k.Namespace+"/"+k.Name] = k
	}
	deps := func(k *kustomizev1.Kustomization) []*kustomizev1.Kustomization {
		var out []*kustomizev1.Kustomization
		for _, d := range k.Spec.DependsOn {
			ns := d.Namespace
			if ns == "" {
				ns = k.Namespace
			}
			if dep, ok := byKey[ns+"/"+d.Name]; ok && dep != k {
				out = append(out, dep)
			}
		}
		return out
	}
	placed := map[*kustomizev1.Kustomization]bool{}
	var out []*kustomizev1.Kustomization
	// Each round places, in name order, those whose dependencies are all
	// placed; a round that places none leaves a cycle.
	for len(out) < len(sorted) {
		progress := false
		for _, k := range sorted {
			if placed[k] {
				continue
			}
			ready := true
			for _, d := range deps(k) {
				ready = ready && placed[d]
			}
			if ready {
				placed[k], progress = true, true
				out = append(out, k)
			}
		}
		if !progress {
			break
		}
	}
	cycle := map[*kustomizev1.Kustomization]bool{}
	for _, k := range sorted {
		if !placed[k] {
			cycle[k] = true
			out = append(out, k)
		}
	}
	return out, cycle
}
