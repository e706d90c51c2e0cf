package flux

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
)

// DriftCheck is Flux's part of drift: what is wrong with the Flux
// objects of a read cluster (drift.Objects), and the probe that reads
// what only drift needs.
func DriftCheck() drift.Check {
	return drift.Check{
		Kinds:  []drift.Kind{drift.Revision, drift.Failing, drift.NotReady, drift.Stalled, drift.Suspended, drift.HelmDrift, drift.SourceBehindGit},
		Probes: []fleet.Probe[*reach.Cluster]{DriftProbe[*reach.Cluster]()},
		Find: func(n *fleet.Node, at drift.Stage, opts *drift.Options) []drift.Finding {
			if f := Of(n); at == drift.Objects && f != nil {
				return driftOf(n.Path, f, opts)
			}
			return nil
		},
	}
}

// DriftProbe reads what drift needs beyond the walk's Flux probe, which
// must come before it: the HelmCharts (the revision a HelmRelease should
// be at) and the version of Flux, from the labels of its CRDs. Its name,
// "drift", is the key of its error in a node's probeErrors.
func DriftProbe[C kube.Connected]() fleet.Probe[C] {
	return fleet.NewProbe("drift", func(ctx context.Context, c C) (func(*fleet.Node), error) {
		var (
			charts     []Object
			version    string
			errC, errV error
			wg         sync.WaitGroup
		)
		wg.Go(func() { charts, errC = HelmCharts(ctx, c.Kube()) })
		wg.Go(func() { version, errV = Version(ctx, c.Kube()) })
		wg.Wait()
		return func(n *fleet.Node) {
			f := Of(n)
			drift.SetFluxVersion(n, version, f != nil && f.Installed)
			if f != nil {
				read := *f
				read.HelmCharts = charts
				Set(n, &read)
			}
		}, errors.Join(errC, errV)
	})
}

// driftOf is what is wrong with the Flux objects of the cluster at path.
func driftOf(path string, f *Status, opts *drift.Options) []drift.Finding {
	sources := map[string]Object{}
	for _, o := range slices.Concat(f.Objects, f.HelmCharts) {
		sources[o.Kind+"/"+o.Namespace+"/"+o.Name] = o
	}
	var out []drift.Finding
	for _, o := range f.Objects {
		ref := &fleet.ObjectRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
		add := func(fd drift.Finding) {
			fd.Object = ref
			out = append(out, fd)
		}
		if o.Suspended {
			if fd, ok := opts.Suspension(o.Suspension, fleet.ObjectRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}, path); ok {
				add(fd)
			}
			// A suspended object's status is frozen: what else is wrong
			// with it follows from the suspension.
			continue
		}
		applier := o.Kind == kustomizev1.KustomizationKind || o.Kind == helmv2.HelmReleaseKind
		if src, ok := sources[o.ArtifactSource]; applier && ok && src.Revision != "" && o.Revision != "" && !sameRevision(src.Revision, o.Revision) {
			add(drift.Finding{Kind: drift.Revision, Expected: src.Revision, Actual: o.Revision, Since: src.ArtifactUpdated,
				Message: "behind its source " + o.ArtifactSource})
		}
		failing := applier && o.AttemptedRevision != "" && o.Revision != "" && o.AttemptedRevision != o.Revision
		if failing {
			add(drift.Finding{Kind: drift.Failing, Expected: o.AttemptedRevision, Actual: o.Revision, Since: o.ReadySince, Message: o.Message})
		}
		if !o.IsReady() && !failing {
			msg := o.ReadyReason
			if o.Message != "" {
				msg = strings.TrimPrefix(msg+": "+o.Message, ": ")
			}
			add(drift.Finding{Kind: drift.NotReady, Expected: "Ready=True", Actual: "Ready=" + o.Ready, Since: o.ReadySince, Message: msg})
		}
		if o.ObservedGeneration < o.Generation && opts.Older(o.ReadySince, opts.Grace) {
			add(drift.Finding{Kind: drift.Stalled, Expected: fmt.Sprintf("generation %d observed", o.Generation), Actual: fmt.Sprintf("observed %d", o.ObservedGeneration),
				Since: o.ReadySince, Message: "the controller has not caught up with the spec"})
		}
		if o.Drifted != nil {
			add(drift.Finding{Kind: drift.HelmDrift, Expected: "release as applied", Actual: "drifted", Since: o.Drifted.Since, Message: o.Drifted.Message})
		}
		if o.Kind == sourcev1.GitRepositoryKind {
			if fd, ok := behindGit(o, opts); ok {
				add(fd)
			}
		}
	}
	return out
}

// sameRevision compares Flux revisions: main@sha1:abc is main/abc (the
// format before Flux 2.0), and a chart version is itself.
func sameRevision(a, b string) bool {
	return a == b || digest(a) == digest(b)
}

// digest is the part of a revision that names the content: the hash after
// "@sha1:" (or any "@algo:"), or after the last "/" of the legacy format.
func digest(rev string) string {
	if i := strings.LastIndex(rev, ":"); i >= 0 && strings.Contains(rev, "@") {
		return rev[i+1:]
	}
	if i := strings.LastIndex(rev, "/"); i >= 0 {
		return rev[i+1:]
	}
	return rev
}

// behindGit compares a GitRepository's artifact with the commit a checkout
// has for the branch it tracks.
func behindGit(o Object, opts *drift.Options) (drift.Finding, bool) {
	checkout, remote := opts.Sources[o.Namespace+"/"+o.Name], ""
	if checkout == nil && opts.Git != nil {
		if r, ok := opts.Git.Matches(o.URL); ok {
			checkout, remote = opts.Git, r
		}
	}
	if checkout == nil {
		return drift.Finding{}, false
	}
	branch := o.Branch
	if branch == "" {
		branch = gitops.DefaultBranch
	}
	commit, ok := checkout.Head(remote, branch)
	if !ok {
		return drift.Finding{Kind: drift.SourceBehindGit, Expected: branch + " in " + checkout.Dir, Actual: o.Revision,
			Message: "the checkout has no branch " + branch}, true
	}
	if digest(o.Revision) == commit {
		return drift.Finding{}, false
	}
	return drift.Finding{Kind: drift.SourceBehindGit, Expected: branch + "@sha1:" + commit, Actual: noArtifact(o.Revision), Since: o.ArtifactUpdated,
		Message: "the checkout " + checkout.Dir + " is at another commit"}, true
}

func noArtifact(s string) string {
	if s == "" {
		return "no artifact"
	}
	return s
}
