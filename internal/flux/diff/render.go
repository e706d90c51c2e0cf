package fluxdiff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// drawKustomizationDiff draws k, which applies to the cluster at path
// cluster, escaped.
func drawKustomizationDiff(b *strings.Builder, st render.Painter, cluster string, k *Kustomization) {
	remote := k.Cluster != cluster
	k = escape.Copy(k)
	var where []string
	if remote {
		where = append(where, "on "+fleet.DisplayPath(k.Cluster)+" through secret "+k.TargetSecret)
	}
	where = append(where, k.Source+" "+k.Path)
	if k.Suspended {
		where = append(where, "suspended")
	}
	fmt.Fprintf(b, "  Kustomization %s %s", st.Paint(fleet.StyleBold, k.String()), st.Paint(fleet.StyleDim, "("+strings.Join(where, ", ")+")"))
	switch {
	case k.Skipped != "":
		fmt.Fprintf(b, ": %s\n", st.Paint(fleet.StyleWarn, "not diffed: "+flat(k.Skipped)))
		return
	case k.Error != "" && len(k.Objects) == 0:
		fmt.Fprintf(b, ": %s\n", st.Paint(fleet.StyleBad, flat(k.Error)))
		return
	case k.Changes() == 0 && !k.Failed() && !hasSkipped(k):
		fmt.Fprintf(b, ": %s\n", st.Paint(fleet.StyleGood, fmt.Sprintf("no changes (%s)", fleet.Plural(len(k.Objects), "object"))))
		return
	}
	b.WriteString("\n")
	if k.Error != "" {
		fmt.Fprintf(b, "    %s\n", st.Paint(fleet.StyleBad, flat(k.Error)))
	}
	for _, o := range k.Objects {
		if o.Action == Unchanged {
			continue
		}
		line := fmt.Sprintf("► %s %s", o, o.Action)
		if o.Reason != "" {
			line += ": " + flat(o.Reason)
		}
		fmt.Fprintf(b, "    %s\n", st.Paint(o.Action.Style(), line))
		diffreport.DrawDiff(b, st, o.Diff)
	}
}

func hasSkipped(k *Kustomization) bool {
	return slices.ContainsFunc(k.Objects, func(o Object) bool { return o.Action == Skipped })
}

// flat is s on one line, its line breaks spaces.
func flat(s string) string { return strings.ReplaceAll(s, "\n", " ") }
