package appdiff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-fleet/kubectl-fleet/internal/argocd/argocompare"
	"github.com/kubectl-fleet/kubectl-fleet/internal/diffreport"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/render"
)

// Object is one object of an Application's diff, as the comparison
// reports it.
type Object = argocompare.Object

// Application is the diff of one Application.
type Application struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// On is the fleet path of the hub that holds it; Target that of its
	// destination cluster, empty when it is none the walk reached.
	On     string `json:"on"`
	Target string `json:"target"`
	// Destination is its spec.destination, as Argo CD names it.
	Destination string `json:"destination"`
	// Sources are its sources, as diffed.
	Sources []Source `json:"sources"`
	// Automated: an automated sync; Prune: with prune.
	Automated bool `json:"automated,omitempty"`
	Prune     bool `json:"prune,omitempty"`
	// NotDiffed says why it was not diffed (no checkout, a source that is
	// not rendered here); Error why its diff failed.
	NotDiffed string   `json:"notDiffed,omitempty" escape:"oneline"`
	Error     string   `json:"error,omitempty" escape:"oneline"`
	Objects   []Object `json:"objects"`
}

// Source is one source of an Application, as diffed.
type Source struct {
	RepoURL string `json:"repoURL"`
	// Path is the source's path in the repository, or its chart.
	Path string `json:"path,omitempty"`
	// Checkout is the directory it was rendered from.
	Checkout string `json:"checkout,omitempty"`
}

// Changes counts the objects a sync would change.
func (a *Application) Changes() int {
	n := 0
	for _, o := range a.Objects {
		switch o.Action {
		case diffreport.Created, diffreport.Configured, diffreport.Pruned, diffreport.Prunable:
			n++
		}
	}
	return n
}

// Failed reports whether the Application, or one of its objects, could
// not be diffed.
func (a *Application) Failed() bool {
	if a.Error != "" {
		return true
	}
	for _, o := range a.Objects {
		if o.Action == diffreport.Failed {
			return true
		}
	}
	return false
}

// Applications are Argo CD's part of a cluster in the diff's report: the
// Applications that deploy to it.
type Applications []Application

var _ diffreport.Part = Applications{}

// Tally counts the Applications diffed, not diffed and failed, and their
// objects by action.
func (as Applications) Tally() diffreport.Tally {
	var t diffreport.Tally
	for i := range as {
		a := &as[i]
		if a.NotDiffed != "" {
			t.NotDiffed++
			continue
		}
		t.Diffed++
		if a.Failed() {
			t.Failed++
		}
		for _, o := range a.Objects {
			t.Count(o.Action)
		}
	}
	return t
}

// Draw draws each Application and the objects a sync would create,
// configure (under Argo CD's header, with their diff), prune or skip;
// unchanged objects are counted, not listed.
func (as Applications) Draw(b *strings.Builder, st render.Painter, cluster string) {
	for i := range as {
		drawApplication(b, st, cluster, &as[i])
	}
}

func drawApplication(b *strings.Builder, st render.Painter, cluster string, a *Application) {
	remote := a.On != cluster
	a = escape.Copy(a)
	var where []string
	if remote {
		where = append(where, "on "+fleet.DisplayPath(a.On))
	}
	for _, s := range a.Sources {
		where = append(where, strings.TrimSpace(s.RepoURL+" "+s.Path))
	}
	if a.Automated {
		where = append(where, "automated")
	}
	fmt.Fprintf(b, "  Application %s %s", st.Paint(fleet.StyleBold, a.Namespace+"/"+a.Name), st.Paint(fleet.StyleDim, "("+strings.Join(where, ", ")+")"))
	switch {
	case a.NotDiffed != "":
		fmt.Fprintf(b, ": %s\n", st.Paint(fleet.StyleWarn, "not diffed: "+a.NotDiffed))
		return
	case a.Error != "" && len(a.Objects) == 0:
		fmt.Fprintf(b, ": %s\n", st.Paint(fleet.StyleBad, a.Error))
		return
	case a.Changes() == 0 && !a.Failed() && !hasSkipped(a):
		fmt.Fprintf(b, ": %s\n", st.Paint(fleet.StyleGood, fmt.Sprintf("no changes (%s)", fleet.Plural(len(a.Objects), "object"))))
		return
	}
	b.WriteString("\n")
	if a.Error != "" {
		fmt.Fprintf(b, "    %s\n", st.Paint(fleet.StyleBad, a.Error))
	}
	for _, o := range a.Objects {
		if o.Action == diffreport.Unchanged {
			continue
		}
		line := fmt.Sprintf("%s %s", o.Header(), actionText(o.Action))
		if o.Reason != "" {
			line += ": " + o.Reason
		}
		fmt.Fprintf(b, "    %s\n", st.Paint(o.Action.Style(), line))
		diffreport.DrawDiff(b, st, o.Diff)
	}
}

// actionText is what the report says of an action.
func actionText(a diffreport.Action) string {
	if a == diffreport.Prunable {
		return "would be pruned by a sync with prune"
	}
	return string(a)
}

func hasSkipped(a *Application) bool {
	return slices.ContainsFunc(a.Objects, func(o Object) bool { return o.Action == diffreport.Skipped })
}

// NewEngine groups the Applications by the cluster they deploy to (their
// hub's when it is none the walk reached), keeping their order, with the
// clusters that could not be read (path → error): Argo CD's part of the
// diff's report.
func NewEngine(apps []Application, unreadable map[string]string) diffreport.Engine {
	e := diffreport.Engine{
		Key: "applications", Unit: "Application", NotDiffed: "(see above)",
		Clusters: map[string]diffreport.ClusterPart{}, Empty: Applications{},
	}
	for path, err := range unreadable {
		e.Clusters[path] = diffreport.ClusterPart{Error: err, Part: Applications{}}
	}
	for _, a := range apps {
		at := a.Target
		if at == "" {
			at = a.On
		}
		c := e.Clusters[at]
		part, _ := c.Part.(Applications)
		part = append(part, a)
		c.Part = part
		e.Clusters[at] = c
	}
	return e
}
