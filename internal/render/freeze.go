package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ops"
)

// FreezesTable draws one row per freeze in force: its name, who, why,
// since when (an age), until when, how many objects on how many clusters,
// and whether it is overdue.
func FreezesTable(w io.Writer, freezes []ops.Freeze, now time.Time, color bool) error {
	freezes = escape.Copy(freezes)
	st := newStyles(w, color)
	rows := make([][]string, 0, len(freezes))
	for _, f := range freezes {
		until, status := "-", "in force"
		if f.Until != "" {
			until = f.Until
		}
		if f.Overdue {
			status = "overdue"
		}
		rows = append(rows, []string{f.Name, dash(strings.Join(f.By, ",")), dash(oneLine(strings.Join(f.Reasons, "; "))), Age(f.Since, now), until,
			fmt.Sprint(f.Objects), fmt.Sprintf("%d (%s)", len(f.Clusters), clusterList(f.Clusters)), status})
	}
	headers := []string{"FREEZE", "BY", "REASON", "AGE", "UNTIL", "OBJECTS", "CLUSTERS", "STATUS"}
	table := drawTable(st, headers, rows, func(row, col int) int {
		if col == 7 && freezes[row].Overdue {
			return bad
		}
		if col == 7 {
			return warn
		}
		return plain
	})
	_, err := io.WriteString(w, table)
	return err
}

// clusterList names a freeze's clusters, the first few.
func clusterList(paths []string) string {
	const shown = 3
	names := make([]string, 0, shown)
	for i, p := range paths {
		if i == shown {
			names = append(names, fmt.Sprintf("+%d", len(paths)-shown))
			break
		}
		names = append(names, fleet.DisplayPath(p))
	}
	return strings.Join(names, ", ")
}
