package render

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// ActionOptions control how an action report is drawn.
type ActionOptions struct {
	Color bool
}

// ActionTable draws one row per result, then a summary line.
func ActionTable(w io.Writer, r *ops.Report, opts ActionOptions) error {
	r = escape.Copy(r)
	st := newStyles(w, opts.Color)
	rows := make([][]string, 0, len(r.Results))
	waves := false
	for _, res := range r.Results {
		waves = waves || res.Wave > 0
	}
	for _, res := range r.Results {
		object := "-"
		if res.Kind != "" {
			object = res.Kind + " " + res.Namespace + "/" + res.Name
		}
		if res.Source {
			object += " (source)"
		}
		if res.Target != nil {
			object += " → " + fleet.DisplayPath(*res.Target)
		}
		row := []string{fleet.DisplayPath(res.Cluster), object, string(res.Result), duration(res.Seconds), dash(oneLine(res.Message))}
		if waves {
			wave := "-"
			if res.Wave > 0 {
				wave = fmt.Sprint(res.Wave)
			}
			row = slices.Insert(row, 2, wave)
		}
		rows = append(rows, row)
	}
	headers := []string{"CLUSTER", "OBJECT", "RESULT", "DURATION", "MESSAGE"}
	resultCol := 2
	if waves {
		// A thaw's: the order the waves went in.
		headers = []string{"CLUSTER", "OBJECT", "WAVE", "RESULT", "DURATION", "MESSAGE"}
		resultCol = 3
	}
	var b strings.Builder
	b.WriteString(drawTable(st, headers, rows, func(row, col int) int {
		res := r.Results[row]
		switch {
		case col != resultCol:
			return plain
		case res.Failed:
			return bad
		case !res.Result.Changes():
			return warn
		}
		return good
	}))
	b.WriteString(Summary(r))
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is one line: what happened how often, on how many clusters, in how long.
func Summary(r *ops.Report) string {
	words := make([]string, 0, len(r.Summary.Results))
	for word := range r.Summary.Results {
		words = append(words, string(word))
	}
	sort.Strings(words)
	parts := make([]string, 0, len(words))
	for _, word := range words {
		parts = append(parts, fmt.Sprintf("%d %s", r.Summary.Results[ops.Outcome(word)], word))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing to do")
	}
	return fmt.Sprintf("%s: %s; %s on %s in %s", r.Action, strings.Join(parts, ", "), fleet.Plural(r.Summary.Objects, "object"), fleet.Plural(r.Summary.Clusters, "cluster"), duration(r.Summary.Seconds))
}

func duration(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second))
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(100 * time.Millisecond).String()
	}
}
