// Package drift finds where a fleet is not what git and CAPI say it should
// be: each finding is derived from what Flux and CAPI record on the
// clusters, from the model a walk built, without further reads.
package drift

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/capi"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/flux"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// The kinds of drift, in the order they are counted and documented.
const (
	// Revision: an applier is behind the artifact its source already has.
	Revision fleet.DriftKind = "revision"
	// Failing: a newer revision was attempted and did not apply.
	Failing fleet.DriftKind = "failing"
	// NotReady: the Ready condition is not True.
	NotReady fleet.DriftKind = "not-ready"
	// Stalled: the controller has not observed the object's spec for longer
	// than the grace period.
	Stalled fleet.DriftKind = "stalled"
	// Suspended: reconciliation is suspended.
	Suspended fleet.DriftKind = "suspended"
	// HelmDrift: helm-controller found the release's objects changed.
	HelmDrift fleet.DriftKind = "helm-drift"
	// VersionSkew: the live Kubernetes version is not the declared one, or
	// the machines run several.
	VersionSkew fleet.DriftKind = "version-skew"
	// Undeclared: no Flux object owns the CAPI Cluster: it was made by hand.
	Undeclared fleet.DriftKind = "undeclared"
	// SourceBehindGit: a GitRepository's artifact is not the checkout's commit.
	SourceBehindGit fleet.DriftKind = "source-behind-git"
	// OutOfSync: an Argo CD Application's live state is not what git says.
	OutOfSync fleet.DriftKind = "out-of-sync"
	// Degraded: an Application's health is Degraded or Missing.
	Degraded fleet.DriftKind = "degraded"
	// SyncFailed: an Application's last sync operation failed.
	SyncFailed fleet.DriftKind = "sync-failed"
	// AutoSyncOff: an Application's automated sync is turned off.
	AutoSyncOff fleet.DriftKind = "auto-sync-off"
	// NoDestination: an Application deploys to no cluster its holder knows.
	NoDestination fleet.DriftKind = "no-destination"
	// Unreadable: the cluster could not be reached or read, in whole or part.
	Unreadable fleet.DriftKind = "unreadable"
	// Paused: the registry that holds the cluster says it is paused
	// (Sveltos, HyperShift): nothing of it is reconciled. Not drift's own:
	// the checks that find it list it.
	Paused fleet.DriftKind = "paused"
)

// Kinds are every drift kind, in order: drift's own, then the checks'
// (the integrations' kinds), then unreadable.
func Kinds(checks ...fleet.DriftCheck) []fleet.DriftKind {
	kinds := []fleet.DriftKind{Revision, Failing, NotReady, Stalled, Suspended, HelmDrift, VersionSkew, Undeclared, SourceBehindGit,
		OutOfSync, Degraded, SyncFailed, AutoSyncOff, NoDestination}
	for _, c := range checks {
		for _, k := range c.Kinds {
			// Two integrations may find one kind (paused).
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	return append(kinds, Unreadable)
}

// ParseKind accepts a drift kind by its name, among drift's own and the
// checks'.
func ParseKind(s string, checks ...fleet.DriftCheck) (fleet.DriftKind, error) {
	kinds := Kinds(checks...)
	for _, k := range kinds {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		names = append(names, string(k))
	}
	return "", fmt.Errorf("unknown drift kind %q: use %s", s, strings.Join(names, ", "))
}

// Causes of a suspension, in the audit of suspensions (--git): declared
// in git, made by a freeze, by suspend (or another tool that says who), or
// unexplained (no record: by hand, or by a tool that says nothing).
const (
	CauseGit         = "git"
	CauseFreeze      = "freeze"
	CauseSuspend     = "suspend"
	CauseUnexplained = "unexplained"
)

// Options say what to look for.
type Options struct {
	// Kinds are the kinds to report; empty reports every kind.
	Kinds map[fleet.DriftKind]bool
	// Grace is how long an object may wait for its controller to observe a
	// new generation before it is reported stalled.
	Grace time.Duration
	// MaxSuspendAge, when positive, reports only suspensions older than
	// this, and those whose age is not recorded.
	MaxSuspendAge time.Duration
	// Now is the time ages are measured at.
	Now time.Time
	// Git is the checkout GitRepositories are compared with by remote URL
	// (nil: none); Sources maps GitRepositories, NAMESPACE/NAME, to
	// checkouts whatever their URL.
	Git *gitops.Checkout
	// Declared, with Git, says whether the checkout declares an object
	// suspended, and in which file: the object's holder's path, and the
	// object. It makes the suspensions a ledger: each finding's Cause.
	Declared func(holder string, o fleet.ObjectRef) (file string, ok bool)
	Sources  map[string]*gitops.Checkout
	// Checks are the integrations' parts of drift (provider.Set.DriftChecks).
	Checks []fleet.DriftCheck
}

func (o *Options) wants(k fleet.DriftKind) bool { return len(o.Kinds) == 0 || o.Kinds[k] }

// Find sets the findings of each of nodes and returns them all, in the
// order of nodes.
func Find(nodes []*fleet.Node, opts Options) []fleet.Finding {
	var all []fleet.Finding
	for _, n := range nodes {
		var out []fleet.Finding
		if n.CycleOf == nil {
			for _, f := range cluster(n, &opts) {
				if opts.wants(f.Kind) {
					f.Cluster = n.Path
					out = append(out, f)
				}
			}
		}
		SetFindings(n, out) // once: each facet write copies the node's facet map
		all = append(all, out...)
	}
	return all
}

func cluster(n *fleet.Node, opts *Options) []fleet.Finding {
	var out []fleet.Finding
	if n.Error != "" {
		// Nothing else of a cluster that was not read is known, but what
		// its parent (an OCM hub) and the Applications that deploy to it say.
		out := append(opts.parent(n), applications(n, opts)...)
		return append(out, fleet.Finding{Kind: Unreadable, Expected: "readable", Actual: "not read", Message: n.Error})
	}
	for _, u := range n.Unread() {
		out = append(out, fleet.Finding{Kind: Unreadable, Expected: "readable", Actual: "read in part", Message: u})
	}
	for _, name := range n.ProbeErrorNames() {
		out = append(out, fleet.Finding{Kind: Unreadable, Expected: "readable", Actual: "read in part", Message: name + ": " + n.ProbeErrors[name]})
	}
	out = append(out, opts.parent(n)...)
	if n.Path != "" && flux.DeclaredByOf(n) == "" && byCAPI(n) {
		out = append(out, fleet.Finding{Kind: Undeclared, Object: &fleet.ObjectRef{Kind: "Cluster", Namespace: n.Namespace, Name: n.Name},
			Expected: "owned by a Flux object", Actual: "no Flux ownership labels", Message: "made outside git"})
	}
	out = append(out, versionSkew(n, opts)...)
	if f := flux.Of(n); f != nil {
		out = append(out, objects(n.Path, f, opts)...)
	}
	return append(out, applications(n, opts)...)
}

// applications is what is wrong with the Argo CD Applications that deploy
// to n, and with those n holds that deploy to no cluster it knows.
func applications(n *fleet.Node, opts *Options) []fleet.Finding {
	var out []fleet.Finding
	s := argocd.Of(n)
	for _, a := range s.Applications {
		ref := &fleet.ObjectRef{Kind: "Application", Namespace: a.Namespace, Name: a.Name}
		held := ""
		if a.Holder != n.Path {
			held = " (held by " + fleet.DescribePath(a.Holder) + ")"
		}
		if a.Sync != "Synced" {
			out = append(out, fleet.Finding{Kind: OutOfSync, Object: ref, Expected: "Synced", Actual: orNone(a.Sync),
				Message: "the live state is not what " + orNone(a.RepoURL) + " says at " + orNone(a.TargetRevision) + held})
		}
		if a.Health == "Degraded" || a.Health == "Missing" {
			out = append(out, fleet.Finding{Kind: Degraded, Object: ref, Expected: "Healthy", Actual: a.Health, Message: "health " + a.Health + held})
		}
		if a.Operation == "Failed" || a.Operation == "Error" {
			msg := "the last sync " + strings.ToLower(a.Operation)
			if a.Message != "" {
				msg += ": " + a.Message
			}
			out = append(out, fleet.Finding{Kind: SyncFailed, Object: ref, Expected: "Succeeded", Actual: a.Operation, Message: msg + held})
		}
		if a.Automated != nil && !*a.Automated {
			fd, ok := suspension(flux.Object{Suspension: a.Suspension}, *ref, a.Holder, opts)
			if ok {
				fd.Kind, fd.Object, fd.Expected, fd.Actual = AutoSyncOff, ref, "automated sync", "automated sync off"
				fd.Message = strings.Replace(fd.Message, "suspended", "automated sync turned off", 1) + held
				out = append(out, fd)
			}
		}
	}
	// Where the cluster's Argo CD clusters could not be listed, where an
	// Application deploys is not known.
	if _, partial := n.ProbeErrors["edges/argocd"]; s.State != nil && !partial {
		for _, a := range s.State.Applications {
			if a.Target == nil && !a.TargetUnknown {
				out = append(out, fleet.Finding{Kind: NoDestination, Object: &fleet.ObjectRef{Kind: "Application", Namespace: a.Namespace, Name: a.Name},
					Expected: "a cluster the holder knows", Actual: orNone(a.Destination), Message: "no Argo CD cluster Secret of this cluster, nor in-cluster, is its destination"})
			}
		}
	}
	return out
}

// byCAPI reports whether n's parent holds a CAPI Cluster of it (a node
// with no edges is taken to be one, as the model was before edges).
func byCAPI(n *fleet.Node) bool {
	return len(n.Edges) == 0 || slices.ContainsFunc(n.Edges, func(e fleet.Edge) bool { return e.Kind == "capi" })
}

// parent is what the checks find wrong in what the cluster's parent says
// of it.
func (o *Options) parent(n *fleet.Node) []fleet.Finding {
	var out []fleet.Finding
	for _, c := range o.Checks {
		if c.Parent != nil {
			out = append(out, c.Parent(n)...)
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// versionSkew compares the declared Kubernetes version, and those the
// checks know (the one an OCM hub reports), with the live one, and reports
// machines of several versions.
func versionSkew(n *fleet.Node, opts *Options) []fleet.Finding {
	var out []fleet.Finding
	if n.Version != "" && n.LiveVersion != "" && !fleet.SameVersion(n.Version, n.LiveVersion) {
		out = append(out, fleet.Finding{Kind: VersionSkew, Expected: n.Version, Actual: n.LiveVersion, Message: "the apiserver does not run the declared version"})
	}
	for _, c := range opts.Checks {
		if c.Version != nil {
			out = append(out, c.Version(n)...)
		}
	}
	counts := map[string]int32{}
	st := capi.Of(n)
	for _, r := range []*capi.Replicas{st.ControlPlane, st.Workers} {
		if r != nil {
			for _, v := range r.Versions {
				counts[v.Version] += v.Replicas
			}
		}
	}
	if len(counts) > 1 {
		versions := make([]string, 0, len(counts))
		for v := range counts {
			versions = append(versions, v)
		}
		sort.Strings(versions)
		parts := make([]string, 0, len(versions))
		for _, v := range versions {
			parts = append(parts, fmt.Sprintf("%s ×%d", v, counts[v]))
		}
		expected := n.Version
		if expected == "" {
			expected = "one version"
		}
		out = append(out, fleet.Finding{Kind: VersionSkew, Expected: expected, Actual: strings.Join(parts, ", "), Message: "machines run several versions: an upgrade in progress or stuck"})
	}
	return out
}

func objects(path string, f *flux.Status, opts *Options) []fleet.Finding {
	sources := map[string]flux.Object{}
	for _, o := range slices.Concat(f.Objects, f.HelmCharts) {
		sources[o.Kind+"/"+o.Namespace+"/"+o.Name] = o
	}
	var out []fleet.Finding
	for _, o := range f.Objects {
		ref := &fleet.ObjectRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
		add := func(fd fleet.Finding) {
			fd.Object = ref
			out = append(out, fd)
		}
		if o.Suspended {
			if fd, ok := suspension(o, fleet.ObjectRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}, path, opts); ok {
				add(fd)
			}
			// A suspended object's status is frozen: what else is wrong
			// with it follows from the suspension.
			continue
		}
		applier := o.Kind == kustomizev1.KustomizationKind || o.Kind == helmv2.HelmReleaseKind
		if src, ok := sources[o.ArtifactSource]; applier && ok && src.Revision != "" && o.Revision != "" && !sameRevision(src.Revision, o.Revision) {
			add(fleet.Finding{Kind: Revision, Expected: src.Revision, Actual: o.Revision, Since: src.ArtifactUpdated,
				Message: "behind its source " + o.ArtifactSource})
		}
		failing := applier && o.AttemptedRevision != "" && o.Revision != "" && o.AttemptedRevision != o.Revision
		if failing {
			add(fleet.Finding{Kind: Failing, Expected: o.AttemptedRevision, Actual: o.Revision, Since: o.ReadySince, Message: o.Message})
		}
		if !o.IsReady() && !failing {
			msg := o.ReadyReason
			if o.Message != "" {
				msg = strings.TrimPrefix(msg+": "+o.Message, ": ")
			}
			add(fleet.Finding{Kind: NotReady, Expected: "Ready=True", Actual: "Ready=" + o.Ready, Since: o.ReadySince, Message: msg})
		}
		if o.ObservedGeneration < o.Generation && older(o.ReadySince, opts.Grace, opts.Now) {
			add(fleet.Finding{Kind: Stalled, Expected: fmt.Sprintf("generation %d observed", o.Generation), Actual: fmt.Sprintf("observed %d", o.ObservedGeneration),
				Since: o.ReadySince, Message: "the controller has not caught up with the spec"})
		}
		if o.Drifted != nil {
			add(fleet.Finding{Kind: HelmDrift, Expected: "release as applied", Actual: "drifted", Since: o.Drifted.Since, Message: o.Drifted.Message})
		}
		if o.Kind == sourcev1.GitRepositoryKind {
			if fd, ok := behindGit(o, opts); ok {
				add(fd)
			}
		}
	}
	return out
}

// older reports whether the time stamp is more than d before now; a time
// the cluster did not record counts as older.
func older(stamp string, d time.Duration, now time.Time) bool {
	t, err := time.Parse(time.RFC3339, stamp)
	return err != nil || now.Sub(t) > d
}

func suspension(o flux.Object, ref fleet.ObjectRef, holder string, opts *Options) (fleet.Finding, bool) {
	fd := fleet.Finding{Kind: Suspended, Expected: "reconciling", Actual: "suspended", Message: "suspended, by whom is not recorded"}
	cause := CauseUnexplained
	if s := o.Suspension; s != nil {
		fd.Since = s.At
		fd.Message = "suspended by " + s.Describe()
		cause = CauseSuspend
		if s.Freeze != "" {
			cause = CauseFreeze
		}
	}
	// The causes are the audit's, with --git.
	if opts.Declared != nil {
		if file, ok := opts.Declared(holder, ref); ok {
			cause = CauseGit
			fd.Message += "; declared in git: " + file
		}
		fd.Cause = cause
	}
	if opts.MaxSuspendAge > 0 && fd.Since != "" && !older(fd.Since, opts.MaxSuspendAge, opts.Now) {
		return fd, false
	}
	return fd, true
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
func behindGit(o flux.Object, opts *Options) (fleet.Finding, bool) {
	checkout, remote := opts.Sources[o.Namespace+"/"+o.Name], ""
	if checkout == nil && opts.Git != nil {
		if r, ok := opts.Git.Matches(o.URL); ok {
			checkout, remote = opts.Git, r
		}
	}
	if checkout == nil {
		return fleet.Finding{}, false
	}
	branch := o.Branch
	if branch == "" {
		branch = gitops.DefaultBranch
	}
	commit, ok := checkout.Head(remote, branch)
	if !ok {
		return fleet.Finding{Kind: SourceBehindGit, Expected: branch + " in " + checkout.Dir, Actual: o.Revision,
			Message: "the checkout has no branch " + branch}, true
	}
	if digest(o.Revision) == commit {
		return fleet.Finding{}, false
	}
	return fleet.Finding{Kind: SourceBehindGit, Expected: branch + "@sha1:" + commit, Actual: dash(o.Revision), Since: o.ArtifactUpdated,
		Message: "the checkout " + checkout.Dir + " is at another commit"}, true
}

func dash(s string) string {
	if s == "" {
		return "no artifact"
	}
	return s
}

// Summary counts findings by kind, in Kinds order, and the clusters they
// are on.
type Summary struct {
	Findings int                     `json:"findings"`
	Clusters int                     `json:"clusters"`
	Read     int                     `json:"clustersSelected"`
	ByKind   map[fleet.DriftKind]int `json:"byKind"`

	// kinds are the kinds in the order String counts them.
	kinds []fleet.DriftKind
}

// Summarize counts the findings of nodes, of drift's kinds and the
// checks'.
func Summarize(nodes []*fleet.Node, checks ...fleet.DriftCheck) Summary {
	s := Summary{Read: len(nodes), ByKind: map[fleet.DriftKind]int{}, kinds: Kinds(checks...)}
	for _, n := range nodes {
		fs := Findings(n)
		if len(fs) > 0 {
			s.Clusters++
		}
		for _, f := range fs {
			s.Findings++
			s.ByKind[f.Kind]++
		}
	}
	return s
}

// String is "12 findings on 5 of 305 clusters: 3 revision, 2 failing", or
// "no drift on 305 clusters".
func (s Summary) String() string {
	if s.Findings == 0 {
		return fmt.Sprintf("no drift on %s", fleet.Plural(s.Read, "cluster"))
	}
	kinds := s.kinds
	if kinds == nil { // a Summary not made by Summarize: drift's own kinds, then the others by name
		kinds = Kinds()
		for _, k := range slices.Sorted(maps.Keys(s.ByKind)) {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	var parts []string
	for _, k := range kinds {
		if n := s.ByKind[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return fmt.Sprintf("%s on %d of %s: %s", fleet.Plural(s.Findings, "finding"), s.Clusters, fleet.Plural(s.Read, "cluster"), strings.Join(parts, ", "))
}

// EnvVersions are the live Kubernetes and Flux versions of one environment:
// a master and its tenants ("/" is the root alone).
type EnvVersions struct {
	Env        string         `json:"env"`
	Kubernetes map[string]int `json:"kubernetes"`
	Flux       map[string]int `json:"flux"`
}

// Versions sums up the versions of nodes per environment, in the order
// environments first appear. A cluster not read counts as "unknown", one
// without Flux as "none".
func Versions(nodes []*fleet.Node) []EnvVersions {
	var out []EnvVersions
	index := map[string]int{}
	for _, n := range nodes {
		env, _, _ := strings.Cut(n.Path, "/")
		if env == "" {
			env = "/"
		}
		i, ok := index[env]
		if !ok {
			i = len(out)
			index[env] = i
			out = append(out, EnvVersions{Env: env, Kubernetes: map[string]int{}, Flux: map[string]int{}})
		}
		k, f := n.LiveVersion, FluxVersionOf(n)
		switch {
		case n.Error != "":
			k, f = "unknown", "unknown"
		case flux.Of(n) == nil || !flux.Of(n).Installed:
			f = "none"
		case f == "":
			f = "unlabelled"
		}
		if k == "" {
			k = "unknown"
		}
		out[i].Kubernetes[k]++
		out[i].Flux[f]++
	}
	return out
}

// Probe reads what drift needs beyond the walk's Flux probe, which must
// come before it: the HelmCharts (the revision a HelmRelease should be at)
// and the version of Flux, from the labels of its CRDs.
func Probe[C kube.Connected]() fleet.Probe[C] {
	return fleet.NewProbe("drift", func(ctx context.Context, c C) (func(*fleet.Node), error) {
		var (
			charts     []flux.Object
			version    string
			errC, errV error
			wg         sync.WaitGroup
		)
		wg.Go(func() { charts, errC = flux.HelmCharts(ctx, c.Kube()) })
		wg.Go(func() { version, errV = flux.Version(ctx, c.Kube()) })
		wg.Wait()
		return func(n *fleet.Node) {
			SetFluxVersion(n, version)
			if f := flux.Of(n); f != nil {
				read := *f
				read.HelmCharts = charts
				flux.Set(n, &read)
			}
		}, errors.Join(errC, errV)
	})
}

// Report is the document `drift -o json|yaml` prints: its schema is
// documented in docs/drift.md and kept stable.
type Report struct {
	Findings []fleet.Finding `json:"findings"`
	Summary  Summary         `json:"summary"`
	Versions []EnvVersions   `json:"versions"`
}

// NewReport finds the drift of nodes and sums it up.
func NewReport(nodes []*fleet.Node, opts Options) *Report {
	findings := Find(nodes, opts)
	if findings == nil {
		findings = []fleet.Finding{}
	}
	return &Report{Findings: findings, Summary: Summarize(nodes, opts.Checks...), Versions: Versions(nodes)}
}

// fluxVersion is drift's facet of a cluster: the app.kubernetes.io/version
// label of its Flux CRDs, the Flux distribution installed, which drift's
// probe reads and its versions per environment count.
type fluxVersion string

// facetName is the key of drift's facet.
const facetName = "drift"

func (fluxVersion) FromParent() bool { return false }
func (v fluxVersion) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "fluxVersion", After: "liveVersion", Value: string(v), OmitEmpty: true}}
}

// FluxVersionOf is the version of Flux installed on n's cluster, as drift's
// probe read it; "" when not read.
func FluxVersionOf(n *fleet.Node) string {
	v, _ := n.Facet(facetName).(fluxVersion)
	return string(v)
}

// SetFluxVersion records the version of Flux installed on n's cluster.
func SetFluxVersion(n *fleet.Node, v string) {
	if v == "" {
		n.SetFacet(facetName, nil)
		return
	}
	n.SetFacet(facetName, fluxVersion(v))
}
