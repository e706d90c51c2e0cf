package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-fleet/kubectl-fleet/pkg/fleet"
)

// ActionOptions control how an action report is drawn.
type ActionOptions struct {
	Color bool
}

// ActionTable draws one row per result, then a summary line.
func ActionTable(w io.Writer, r *fleet.ActionReport, opts ActionOptions) error {
	st := newStyles(w, opts.Color)
	rows := make([][]string, 0, len(r.Results))
	for _, res := range r.Results {
		object := "-"
		if res.Kind != "" {
			object = res.Kind + " " + res.Namespace + "/" + res.Name
		}
		if res.Source {
			object += " (source)"
		}
		path := res.Cluster
		if path == "" {
			path = RootPath
		}
		rows = append(rows, []string{path, object, res.Result, duration(res.Seconds), dash(oneLine(res.Message))})
	}
	headers := []string{"CLUSTER", "OBJECT", "RESULT", "DURATION", "MESSAGE"}
	t := table.New().
		Border(lipgloss.HiddenBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderHeader(false).BorderColumn(false).BorderRow(false).
		Headers(headers...).Rows(rows...).
		StyleFunc(func(row, col int) lipgloss.Style {
			s := st.plain
			if col < len(headers)-1 {
				s = s.PaddingRight(2)
			}
			switch {
			case row == table.HeaderRow:
				return s.Inherit(st.header)
			case col != 2:
				return s
			case r.Results[row].Failed:
				return s.Inherit(st.bad)
			case strings.HasPrefix(r.Results[row].Result, "would") || r.Results[row].Result == "skipped" || strings.HasPrefix(r.Results[row].Result, "already") || r.Results[row].Result == "not suspended":
				return s.Inherit(st.warn)
			}
			return s.Inherit(st.good)
		})
	var b strings.Builder
	for _, line := range strings.Split(t.Render(), "\n") {
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteString("\n")
	}
	b.WriteString(Summary(r))
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is one line: what happened how often, on how many clusters, in how long.
func Summary(r *fleet.ActionReport) string {
	words := make([]string, 0, len(r.Summary.Results))
	for word := range r.Summary.Results {
		words = append(words, word)
	}
	sort.Strings(words)
	parts := make([]string, 0, len(words))
	for _, word := range words {
		parts = append(parts, fmt.Sprintf("%d %s", r.Summary.Results[word], word))
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing to do")
	}
	return fmt.Sprintf("%s: %s; %s on %s in %s", r.Action, strings.Join(parts, ", "), Plural(r.Summary.Objects, "object"), Plural(r.Summary.Clusters, "cluster"), duration(r.Summary.Seconds))
}

// Plural is "1 cluster", "2 clusters".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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

// ActionJSON prints the report as one JSON document.
func ActionJSON(w io.Writer, r *fleet.ActionReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("failed to encode the report as JSON: %w", err)
	}
	return nil
}

// ActionYAML prints the report as one YAML document.
func ActionYAML(w io.Writer, r *fleet.ActionReport) error {
	data, err := yaml.Marshal(r)
	if err != nil {
		return fmt.Errorf("failed to encode the report as YAML: %w", err)
	}
	_, err = w.Write(data)
	return err
}
