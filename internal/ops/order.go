package ops

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Key names an object on the cluster it is written on, as a target's
// After names those it waits for: KIND/NAMESPACE/NAME.
func Key(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// KeyOn names an object across the fleet: the path of the cluster that
// holds it, and its Key there.
func KeyOn(holder, key string) string { return holder + "\x00" + key }

// depth is how far below the root the cluster a target acts for is
// (actsOn).
func depth(t *Target) int {
	path := actsOn(t)
	if path == "" {
		return 0
	}
	return strings.Count(path, "/") + 1
}

// Waves orders the targets for a resume that must not wake a dependent
// before what it depends on: parents before children across the tree (a
// master's objects before its tenants'), and on one cluster, each target
// after the targets of its After among them (a dependency that is not
// among them is not waited for). A wave's targets may act at once; each
// wave is the indexes of its targets in order. Targets on a dependency
// cycle come in a wave of their own after their level's others, and are
// in cycle.
func Waves(targets []Target) (waves [][]int, cycle map[int]bool) {
	cycle = map[int]bool{}
	byDepth := map[int][]int{}
	for i := range targets {
		d := depth(&targets[i])
		byDepth[d] = append(byDepth[d], i)
	}
	depths := make([]int, 0, len(byDepth))
	for d := range byDepth {
		depths = append(depths, d)
	}
	slices.Sort(depths)
	for _, d := range depths {
		idx := byDepth[d]
		at := map[string]int{}
		for _, i := range idx {
			t := &targets[i]
			at[KeyOn(t.Node.Path, Key(t.Object.Kind, t.Object.Namespace, t.Object.Name))] = i
		}
		level := map[int]int{}
		// Each round places those whose dependencies are placed, one
		// level after the deepest of them; a round that places none
		// leaves a cycle.
		for len(level) < len(idx) {
			progress := false
			for _, i := range idx {
				if _, ok := level[i]; ok {
					continue
				}
				l, ready := 0, true
				for _, dep := range targets[i].After {
					j, ok := at[KeyOn(targets[i].Node.Path, dep)]
					if !ok || j == i {
						continue
					}
					dl, placed := level[j]
					if !placed {
						ready = false
						break
					}
					l = max(l, dl+1)
				}
				if ready {
					level[i], progress = l, true
				}
			}
			if !progress {
				break
			}
		}
		var layers [][]int
		for _, i := range idx {
			l, ok := level[i]
			if !ok {
				continue
			}
			for len(layers) <= l {
				layers = append(layers, nil)
			}
			layers[l] = append(layers[l], i)
		}
		var rest []int
		for _, i := range idx {
			if _, ok := level[i]; !ok {
				cycle[i] = true
				rest = append(rest, i)
			}
		}
		if rest != nil {
			layers = append(layers, rest)
		}
		waves = append(waves, layers...)
	}
	return waves, cycle
}

// InOrder executes a plan wave by wave (Waves), each wave by Executor,
// the next only once the last is done. A wave with a failure stops the
// rest unless ContinueOnError: their targets are left as they are,
// skipped, saying why, as are those of the waves not begun when ctx
// ends. Each result says its wave.
type InOrder struct {
	Executor        Executor
	ContinueOnError bool
	// Command is what runs the operation again, for the skipped ones'
	// message ("kubectl fleet thaw INC-9").
	Command string
}

// Execute runs the waves in order.
func (o *InOrder) Execute(ctx context.Context, plan *Plan, done func()) []Result {
	waves, cycle := Waves(plan.Targets)
	results := make([]Result, len(plan.Targets))
	var more []Result
	stopped, interrupted := "", false
	for w, idx := range waves {
		if ctx.Err() != nil && !interrupted {
			// An interruption says so, whatever the wave it ended did.
			stopped, interrupted = fmt.Sprintf("interrupted before wave %d: left as it was; run %s again", w+1, o.Command), true
		}
		if stopped != "" {
			for _, i := range idx {
				results[i] = Result{Result: Skipped, Failed: ctx.Err() != nil, Message: stopped, Wave: w + 1}
				done()
			}
			continue
		}
		sub := &Plan{Verb: plan.Verb, Named: plan.Named}
		for _, i := range idx {
			sub.Targets = append(sub.Targets, plan.Targets[i])
		}
		rs := o.Executor.Execute(ctx, sub, done)
		failed := 0
		for k, i := range idx {
			results[i] = rs[k]
			results[i].Wave = w + 1
			if cycle[i] {
				results[i].Warning = "its dependencies form a cycle: resumed after the others of its level"
			}
			if rs[k].Failed {
				failed++
			}
		}
		more = append(more, rs[len(idx):]...)
		if failed > 0 && !o.ContinueOnError {
			stopped = fmt.Sprintf("left as it was: wave %d failed (%d of %d); fix it and run %s again, or add --continue-on-error", w+1, failed, len(idx), o.Command)
		}
	}
	return append(results, more...)
}
