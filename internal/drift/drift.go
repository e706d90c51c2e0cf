// Package drift finds where a fleet is not what git and the clusters'
// holders say it should be, from the model a walk built, without further
// reads. It names no integration: each provider's part of drift is a
// Check (check.go), which drift asks at each Stage of its pass over a
// cluster, in the registry's order.
package drift

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/gitops"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// Kind is one kind of drift finding: a fixed word scripts can rely on.
type Kind string

// Finding is one drift problem on one cluster: an object (or the cluster
// itself) that is not where git or its holder says it should be.
type Finding struct {
	// Cluster is the cluster's path; "" is the root.
	Cluster string `json:"cluster"`
	Kind    Kind   `json:"kind"`
	// Object is the object the finding is about, empty for the cluster.
	Object   *fleet.ObjectRef `json:"object,omitempty"`
	Expected string           `json:"expected,omitempty"`
	Actual   string           `json:"actual,omitempty"`
	// Since is when the cluster recorded the state (RFC 3339), if it did.
	Since   string `json:"since,omitempty"`
	Message string `json:"message,omitempty" escape:"oneline"`
	// Cause is what explains the finding, where the analysis knows:
	// a suspension's, in drift's audit of suspensions against git.
	Cause string `json:"cause,omitempty"`
}

// The kinds of drift, in the order they are counted and documented. The
// providers find them all but unreadable (each its own: Flux's objects,
// Argo CD's Applications, CAPI's Clusters and machines, what OCM,
// ClusterProfile, Sveltos and HyperShift report).
const (
	// Revision: an applier is behind the artifact its source already has.
	Revision Kind = "revision"
	// Failing: a newer revision was attempted and did not apply.
	Failing Kind = "failing"
	// NotReady: the Ready condition is not True.
	NotReady Kind = "not-ready"
	// Stalled: the controller has not observed the object's spec for longer
	// than the grace period.
	Stalled Kind = "stalled"
	// Suspended: reconciliation is suspended.
	Suspended Kind = "suspended"
	// HelmDrift: helm-controller found the release's objects changed.
	HelmDrift Kind = "helm-drift"
	// VersionSkew: the live Kubernetes version is not the declared one, or
	// the machines run several.
	VersionSkew Kind = "version-skew"
	// Undeclared: no Flux object owns the CAPI Cluster: it was made by hand.
	Undeclared Kind = "undeclared"
	// SourceBehindGit: a GitRepository's artifact is not the checkout's commit.
	SourceBehindGit Kind = "source-behind-git"
	// OutOfSync: an Argo CD Application's live state is not what git says.
	OutOfSync Kind = "out-of-sync"
	// Degraded: an Application's health is Degraded or Missing.
	Degraded Kind = "degraded"
	// SyncFailed: an Application's last sync operation failed.
	SyncFailed Kind = "sync-failed"
	// AutoSyncOff: an Application's automated sync is turned off.
	AutoSyncOff Kind = "auto-sync-off"
	// NoDestination: an Application deploys to no cluster its holder knows.
	NoDestination Kind = "no-destination"
	// NotJoined: the OCM hub has not accepted the cluster, or its agent
	// has not joined.
	NotJoined Kind = "not-joined"
	// Unavailable: the OCM hub reports the joined cluster not available.
	Unavailable Kind = "unavailable"
	// Paused: the registry that holds the cluster says it is paused
	// (Sveltos, HyperShift): nothing of it is reconciled.
	Paused Kind = "paused"
	// Unreadable: the cluster could not be reached or read, in whole or
	// part. Drift's own, always last.
	Unreadable Kind = "unreadable"
)

// known are the kinds drift documents, in order, but unreadable.
var known = []Kind{Revision, Failing, NotReady, Stalled, Suspended, HelmDrift, VersionSkew, Undeclared, SourceBehindGit,
	OutOfSync, Degraded, SyncFailed, AutoSyncOff, NoDestination, NotJoined, Unavailable, Paused}

// Kinds are every drift kind, in order: those drift documents, then any
// other a check finds (in the checks' order), then unreadable.
func Kinds(checks ...Check) []Kind {
	kinds := slices.Clone(known)
	for _, c := range checks {
		for _, k := range c.Kinds {
			// Two integrations may find one kind (paused).
			if !slices.Contains(kinds, k) && k != Unreadable {
				kinds = append(kinds, k)
			}
		}
	}
	return append(kinds, Unreadable)
}

// ParseKind accepts a drift kind by its name, among drift's own and the
// checks'.
func ParseKind(s string, checks ...Check) (Kind, error) {
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
	Kinds map[Kind]bool
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
	// Checks are the providers' parts of drift (ChecksOf), in the
	// registry's order.
	Checks []Check
}

func (o *Options) wants(k Kind) bool { return len(o.Kinds) == 0 || o.Kinds[k] }

// Find sets the findings of each of nodes and returns them all, in the
// order of nodes.
func Find(nodes []*fleet.Node, opts Options) []Finding {
	var all []Finding
	for _, n := range nodes {
		var out []Finding
		if n.CycleOf == nil {
			for _, f := range opts.cluster(n) {
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

// cluster is drift's pass over one cluster: the checks asked at each
// stage, drift's own findings between them.
func (o *Options) cluster(n *fleet.Node) []Finding {
	if n.Error != "" {
		// Nothing else of a cluster that was not read is known, but what
		// its holder (an OCM hub) and the Applications that deploy to it say.
		out := append(o.ask(n, Held), o.ask(n, Deployed)...)
		return append(out, Finding{Kind: Unreadable, Expected: "readable", Actual: "not read", Message: n.Error})
	}
	var out []Finding
	for _, u := range n.Unread() {
		out = append(out, Finding{Kind: Unreadable, Expected: "readable", Actual: "read in part", Message: u})
	}
	for _, name := range n.ProbeErrorNames() {
		out = append(out, Finding{Kind: Unreadable, Expected: "readable", Actual: "read in part", Message: name + ": " + n.ProbeErrors[name]})
	}
	out = append(out, o.ask(n, Held)...)
	out = append(out, o.ask(n, Declared)...)
	if n.Version != "" && n.LiveVersion != "" && !fleet.SameVersion(n.Version, n.LiveVersion) {
		out = append(out, Finding{Kind: VersionSkew, Expected: n.Version, Actual: n.LiveVersion, Message: "the apiserver does not run the declared version"})
	}
	out = append(out, o.ask(n, Version)...)
	out = append(out, o.ask(n, Objects)...)
	return append(out, o.ask(n, Deployed)...)
}

// ask is what the checks find at stage, in their order.
func (o *Options) ask(n *fleet.Node, at Stage) []Finding {
	var out []Finding
	for _, c := range o.Checks {
		if c.Find != nil {
			out = append(out, c.Find(n, at, o)...)
		}
	}
	return out
}

// Older reports whether the time stamp is more than d before Now; a time
// the cluster did not record counts as older.
func (o *Options) Older(stamp string, d time.Duration) bool {
	t, err := time.Parse(time.RFC3339, stamp)
	return err != nil || o.Now.Sub(t) > d
}

// Suspension is the suspended finding of an object suspended by s (nil:
// not recorded) on holder's cluster, with its cause in the audit of
// suspensions (Declared); false when --max-suspend-age leaves it out.
func (o *Options) Suspension(s *ops.Suspension, ref fleet.ObjectRef, holder string) (Finding, bool) {
	fd := Finding{Kind: Suspended, Expected: "reconciling", Actual: "suspended", Message: "suspended, by whom is not recorded"}
	cause := CauseUnexplained
	if s != nil {
		fd.Since = s.At
		fd.Message = "suspended by " + s.Describe()
		cause = CauseSuspend
		if s.Freeze != "" {
			cause = CauseFreeze
		}
	}
	// The causes are the audit's, with --git.
	if o.Declared != nil {
		if file, ok := o.Declared(holder, ref); ok {
			cause = CauseGit
			fd.Message += "; declared in git: " + file
		}
		fd.Cause = cause
	}
	if o.MaxSuspendAge > 0 && fd.Since != "" && !o.Older(fd.Since, o.MaxSuspendAge) {
		return fd, false
	}
	return fd, true
}

// Summary counts findings by kind, in Kinds order, and the clusters they
// are on.
type Summary struct {
	Findings int          `json:"findings"`
	Clusters int          `json:"clusters"`
	Read     int          `json:"clustersSelected"`
	ByKind   map[Kind]int `json:"byKind"`

	// kinds are the kinds in the order String counts them.
	kinds []Kind
}

// Summarize counts the findings of nodes, of drift's kinds and the
// checks'.
func Summarize(nodes []*fleet.Node, checks ...Check) Summary {
	s := Summary{Read: len(nodes), ByKind: map[Kind]int{}, kinds: Kinds(checks...)}
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
		v, _ := n.Facet(facetName).(fluxVersion)
		k, f := n.LiveVersion, v.version
		switch {
		case n.Error != "":
			k, f = "unknown", "unknown"
		case !v.installed:
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

// Report is the document `drift -o json|yaml` prints: its schema is
// documented in docs/drift.md and kept stable.
type Report struct {
	Findings []Finding     `json:"findings"`
	Summary  Summary       `json:"summary"`
	Versions []EnvVersions `json:"versions"`
}

// NewReport finds the drift of nodes and sums it up.
func NewReport(nodes []*fleet.Node, opts Options) *Report {
	findings := Find(nodes, opts)
	if findings == nil {
		findings = []Finding{}
	}
	return &Report{Findings: findings, Summary: Summarize(nodes, opts.Checks...), Versions: Versions(nodes)}
}

// fluxVersion is drift's facet of a cluster: whether Flux is installed,
// and the app.kubernetes.io/version label of its CRDs, the Flux
// distribution, which Flux's drift probe reads and drift's versions per
// environment count.
type fluxVersion struct {
	version   string
	installed bool
}

// facetName is the key of drift's facet.
const facetName = "drift"

func (fluxVersion) FromParent() bool { return false }
func (v fluxVersion) JSONFields() []fleet.JSONField {
	return []fleet.JSONField{{Key: "fluxVersion", After: "liveVersion", Value: v.version, OmitEmpty: true}}
}

// FluxVersionOf is the version of Flux installed on n's cluster, as Flux's
// drift probe read it; "" when not read.
func FluxVersionOf(n *fleet.Node) string {
	v, _ := n.Facet(facetName).(fluxVersion)
	return v.version
}

// SetFluxVersion records whether Flux is installed on n's cluster, and
// its version ("": not labelled).
func SetFluxVersion(n *fleet.Node, version string, installed bool) {
	if version == "" && !installed {
		n.SetFacet(facetName, nil)
		return
	}
	n.SetFacet(facetName, fluxVersion{version: version, installed: installed})
}
