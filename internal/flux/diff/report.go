package fluxdiff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Report is a diff of the fleet: the Kustomizations grouped by the
// cluster they apply to, and the totals.
type Report struct {
	Clusters []ClusterReport `json:"clusters"`
	Summary  Summary         `json:"summary"`
}

// ClusterReport is what would change on one cluster.
type ClusterReport struct {
	// Path is the cluster's fleet path.
	Path string `json:"path"`
	// Error says why the cluster, or its Flux objects, could not be read.
	Error          string          `json:"error,omitempty" escape:"oneline"`
	Kustomizations []Kustomization `json:"kustomizations"`
}

// Changes counts the objects that would change on the cluster.
func (c *ClusterReport) Changes() int {
	n := 0
	for i := range c.Kustomizations {
		n += c.Kustomizations[i].Changes()
	}
	return n
}

// Summary are a Report's totals.
type Summary struct {
	// Clusters counts the clusters reported; Changed those that would change.
	Clusters int `json:"clusters"`
	Changed  int `json:"changed"`
	// Kustomizations counts those diffed; NotDiffed those skipped for want
	// of a checkout; Failed those (or their objects) that could not be
	// diffed, and Unreadable the clusters that could not be read.
	Kustomizations int `json:"kustomizations"`
	NotDiffed      int `json:"notDiffed"`
	Failed         int `json:"failed"`
	Unreadable     int `json:"unreadable"`
	// The objects, by what the apply would do.
	Created    int `json:"created"`
	Configured int `json:"configured"`
	Pruned     int `json:"pruned"`
	Skipped    int `json:"skipped"`
	Unchanged  int `json:"unchanged"`
}

// Changes reports whether anything would change.
func (s Summary) Changes() bool { return s.Created+s.Configured+s.Pruned > 0 }

// Errors reports whether anything could not be diffed.
func (s Summary) Errors() bool { return s.Failed+s.Unreadable > 0 }

// String is the summary line: "3 clusters would change: 5 configured, 1
// created, 2 pruned", then what could not be diffed.
func (s Summary) String() string {
	var b strings.Builder
	if s.Changes() {
		var parts []string
		for _, p := range []struct {
			n    int
			verb string
		}{{s.Configured, "configured"}, {s.Created, "created"}, {s.Pruned, "pruned"}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", p.n, p.verb))
			}
		}
		fmt.Fprintf(&b, "%s would change: %s.", fleet.Plural(s.Changed, "cluster"), strings.Join(parts, ", "))
	} else {
		fmt.Fprintf(&b, "No changes: %s on %s match the checkout.", fleet.Plural(s.Kustomizations-s.Failed, "Kustomization"), fleet.Plural(s.Clusters-s.Unreadable, "cluster"))
	}
	var more []string
	if s.Skipped > 0 {
		more = append(more, fmt.Sprintf("%s left alone by the controller's rules", fleet.Plural(s.Skipped, "object")))
	}
	if s.NotDiffed > 0 {
		more = append(more, fmt.Sprintf("%s not diffed for want of a checkout", fleet.Plural(s.NotDiffed, "Kustomization")))
	}
	if s.Failed > 0 {
		more = append(more, fmt.Sprintf("%s could not be diffed", fleet.Plural(s.Failed, "Kustomization")))
	}
	if s.Unreadable > 0 {
		more = append(more, fmt.Sprintf("%s could not be read", fleet.Plural(s.Unreadable, "cluster")))
	}
	if len(more) > 0 {
		b.WriteString(" " + strings.ToUpper(more[0][:1]) + more[0][1:])
		if len(more) > 1 {
			b.WriteString("; " + strings.Join(more[1:], "; "))
		}
		b.WriteString(".")
	}
	return b.String()
}

// NewReport groups the diffs by the cluster they apply to, in path order,
// keeping the order of each cluster's Kustomizations, and adds the
// clusters that could not be read (path → error).
func NewReport(ks []Kustomization, unreadable map[string]string) *Report {
	byPath := map[string]*ClusterReport{}
	var order []string
	group := func(path string) *ClusterReport {
		c, ok := byPath[path]
		if !ok {
			c = &ClusterReport{Path: path, Kustomizations: []Kustomization{}}
			byPath[path] = c
			order = append(order, path)
		}
		return c
	}
	for path, err := range unreadable {
		group(path).Error = err
	}
	for _, k := range ks {
		c := group(k.Target)
		c.Kustomizations = append(c.Kustomizations, k)
	}
	sort.SliceStable(order, func(i, j int) bool { return fleet.ComparePaths(order[i], order[j]) < 0 })
	r := &Report{Clusters: make([]ClusterReport, 0, len(order))}
	for _, p := range order {
		c := byPath[p]
		r.Clusters = append(r.Clusters, *c)
		r.Summary.add(c)
	}
	return r
}

func (s *Summary) add(c *ClusterReport) {
	s.Clusters++
	if c.Error != "" {
		s.Unreadable++
	}
	if c.Changes() > 0 {
		s.Changed++
	}
	for i := range c.Kustomizations {
		k := &c.Kustomizations[i]
		if k.Skipped != "" {
			s.NotDiffed++
			continue
		}
		s.Kustomizations++
		if k.Failed() {
			s.Failed++
		}
		for _, o := range k.Objects {
			switch o.Action {
			case Created:
				s.Created++
			case Configured:
				s.Configured++
			case Pruned:
				s.Pruned++
			case Skipped:
				s.Skipped++
			case Unchanged:
				s.Unchanged++
			}
		}
	}
}
