package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	kubeduration "k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// DriftOptions control how drift is drawn.
type DriftOptions struct {
	Color bool
	// Now is the time ages are measured at.
	Now time.Time
}

// DriftTable draws the findings grouped by cluster, the summary line, and
// the versions of each environment.
func DriftTable(w io.Writer, r *drift.Report, opts DriftOptions) error {
	r = escape.Copy(r)
	st := newStyles(w, opts.Color)
	var b strings.Builder
	if len(r.Findings) > 0 {
		headers := []string{"CLUSTER", "DRIFT", "OBJECT", "EXPECTED", "ACTUAL", "SINCE", "MESSAGE"}
		rows := make([][]string, 0, len(r.Findings))
		for i, f := range r.Findings {
			cluster := fleet.DisplayPath(f.Cluster)
			if i > 0 && r.Findings[i-1].Cluster == f.Cluster {
				cluster = ""
			}
			object := "-"
			if f.Object != nil {
				object = f.Object.String()
			}
			rows = append(rows, []string{cluster, string(f.Kind), object, dash(oneLine(shortRevisions(f.Expected))), dash(oneLine(shortRevisions(f.Actual))), Age(f.Since, opts.Now), dash(oneLine(f.Message))})
		}
		b.WriteString(drawTable(st, headers, rows, func(row, col int) int {
			if col == 1 {
				return driftHealth(r.Findings[row].Kind)
			}
			return plain
		}))
		b.WriteString("\n")
	}
	b.WriteString(r.Summary.String())
	b.WriteString("\n\n")
	vrows := make([][]string, 0, len(r.Versions))
	for _, v := range r.Versions {
		vrows = append(vrows, []string{v.Env, counted(v.Kubernetes), counted(v.Flux)})
	}
	b.WriteString(drawTable(st, []string{"ENV", "KUBERNETES", "FLUX"}, vrows, func(int, int) int { return plain }))
	_, err := io.WriteString(w, b.String())
	return err
}

func driftHealth(k drift.Kind) int {
	switch k {
	case drift.Suspended, drift.Undeclared, drift.Stalled, drift.AutoSyncOff:
		return warn
	}
	return bad
}

// counted is "v1.36.3 ×4, v1.35.0 ×1": most common first.
func counted(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return dash(strings.Join(parts, ", "))
}

// Age is how long before now an RFC 3339 time stamp is, as kubectl prints
// ages; "-" when there is none.
func Age(stamp string, now time.Time) string {
	t, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return "-"
	}
	return kubeduration.HumanDuration(now.Sub(t))
}

// findingLines are the leaves tree --drift draws under a cluster.
func findingLines(findings []drift.Finding, st styles) []string {
	out := make([]string, 0, len(findings))
	for _, f := range findings {
		s := "≠ " + string(f.Kind)
		if f.Object != nil {
			s += " " + f.Object.String()
		}
		if f.Expected != "" || f.Actual != "" {
			s += ": expected " + dash(shortRevisions(f.Expected)) + ", actual " + dash(shortRevisions(f.Actual))
		}
		if f.Message != "" {
			s += " (" + oneLine(f.Message) + ")"
		}
		out = append(out, st.warn.Render(s))
	}
	return out
}

// shortRevisions shortens the commit hashes of Flux revisions to 12
// digits, as git log --oneline does: main@sha1:0123456789ab. JSON keeps
// them whole.
func shortRevisions(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "@sha1:")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := i + len("@sha1:")
		end := start
		for end < len(s) && strings.ContainsRune("0123456789abcdef", rune(s[end])) {
			end++
		}
		if end-start > 12 {
			b.WriteString(s[:start+12])
		} else {
			b.WriteString(s[:end])
		}
		s = s[end:]
	}
}
