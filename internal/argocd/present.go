package argocd

import (
	"fmt"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// Presentation is Argo CD's column of the tree and the list, its field
// of describe, its lines under each cluster and its section of describe:
// the Applications that deploy to each cluster, and those a cluster holds
// that deploy to none it knows.
func Presentation() fleet.Presentation {
	return fleet.Presentation{
		Columns: []fleet.Column{{Header: "ARGO CD", After: "FLUX", Cell: Summary, Show: shown}},
		Lines:   []fleet.TreeLines{{Notes: lines}},
		Fields: []fleet.Field{{Title: "Argo CD", After: "Flux", Value: func(n *fleet.Node) (string, fleet.Health, string) {
			text, health := Summary(n)
			return text, health, ""
		}}},
		Sections: []fleet.Section{section},
	}
}

// shown: the column is drawn where some cluster runs Argo CD with
// Applications (or failed to list them), or is deployed to by it.
func shown(n *fleet.Node) bool {
	s := Of(n)
	return len(s.Applications) > 0 || s.State != nil && (len(s.State.Applications) > 0 || s.State.Error != "")
}

// Summary is the state of the Applications that deploy to n: how many
// are synced and healthy, how many have automated sync off.
func Summary(n *fleet.Node) (string, fleet.Health) {
	s := Of(n)
	if s.State != nil && s.State.Error != "" {
		return "error", fleet.HealthBad
	}
	if len(s.Applications) == 0 {
		return "", fleet.HealthNone
	}
	fine, off, health := 0, 0, fleet.HealthGood
	for _, a := range s.Applications {
		switch {
		case a.Good():
			fine++
		case a.Health == "Degraded" || a.Health == "Missing" || a.Operation == "Failed" || a.Operation == "Error":
			health = fleet.HealthBad
		}
		if a.Automated != nil && !*a.Automated {
			off++
		}
	}
	if fine < len(s.Applications) && health == fleet.HealthGood {
		health = fleet.HealthWarn
	}
	cell := fmt.Sprintf("apps %d/%d", fine, len(s.Applications))
	if off > 0 {
		cell += fmt.Sprintf(", %d auto-sync off", off)
		health = max(health, fleet.HealthWarn)
	}
	return cell, health
}

// lines are drawn under n in the tree: each Application that deploys to
// it, dim when all is well with it, and a warning for each it holds that
// deploys to no cluster it knows.
func lines(n *fleet.Node) [][]fleet.Span {
	var out [][]fleet.Span
	for _, a := range ApplicationsOf(n) {
		text, fine := applicationText(n, a)
		style := fleet.StyleWarn
		if fine {
			style = fleet.StyleDim
		}
		out = append(out, fleet.Styled(style, "← "+text))
	}
	for _, a := range elsewhere(n) {
		if a.Target == nil && !a.TargetUnknown {
			out = append(out, fleet.Styled(fleet.StyleWarn, fmt.Sprintf("! Application %s/%s here deploys to no cluster this one knows (destination %s)", a.Namespace, a.Name, a.Destination)))
		}
	}
	return out
}

// section is describe's "Argo CD Applications": those that deploy to n,
// and where those it holds deploy.
func section(n *fleet.Node, _ func(string) any) (string, string, []fleet.Item) {
	s := Of(n)
	if len(s.Applications) == 0 && (s.State == nil || len(s.State.Applications) == 0) {
		return "", "", nil
	}
	var out []fleet.Item
	for _, a := range s.Applications {
		text, fine := applicationText(n, a)
		style := fleet.StyleWarn
		if fine {
			style = fleet.StylePlain
		}
		out = append(out, fleet.Item{Line: fleet.Styled(style, text)})
	}
	for _, a := range elsewhere(n) {
		target := fleet.Span{Text: "no cluster the hub knows (destination " + a.Destination + ")", Style: fleet.StyleBad}
		switch {
		case a.Target != nil:
			target = fleet.Span{Text: fleet.DescribePath(*a.Target)}
		case a.TargetUnknown:
			target = fleet.Span{Text: "destination " + a.Destination}
		}
		out = append(out, fleet.Item{Line: []fleet.Span{{Text: fmt.Sprintf("Application %s/%s here deploys to ", a.Namespace, a.Name)}, target}})
	}
	return "Argo CD Applications", "", out
}

// elsewhere are the Applications n holds that deploy to another cluster,
// or to none it knows.
func elsewhere(n *fleet.Node) []Application {
	st := StateOf(n)
	if st == nil {
		return nil
	}
	var out []Application
	for _, a := range st.Applications {
		if a.Target == nil || *a.Target != n.Path {
			out = append(out, a)
		}
	}
	return out
}

// applicationText says of an Application that deploys to n where it is
// held and its state, and whether all is well with it.
func applicationText(n *fleet.Node, a Application) (string, bool) {
	where := "applies here (in-cluster)"
	if a.Holder != n.Path {
		where = "on " + fleet.DescribePath(a.Holder) + " applies here"
	}
	state := []string{orUnknown(a.Sync), orUnknown(a.Health)}
	if a.Operation != "" && a.Operation != "Succeeded" {
		state = append(state, "sync "+a.Operation)
	}
	switch {
	case a.Automated == nil:
		state = append(state, "manual sync")
	case !*a.Automated:
		off := "auto-sync off"
		if s := a.Suspension; s != nil && s.By != "" {
			off += " by " + s.By
		}
		state = append(state, off)
	}
	if a.SkipReconcile {
		state = append(state, "skip-reconcile")
	}
	line := fmt.Sprintf("Application %s/%s %s, %s", a.Namespace, a.Name, where, strings.Join(state, ", "))
	if a.Message != "" && !a.Good() {
		line += ": " + a.Message
	}
	return line, a.Good() && a.Automated != nil && *a.Automated && !a.SkipReconcile
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}
