package watch

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
)

// rowOf is n's row in the stream.
func rowOf(n *fleet.Node) *Row {
	if n == nil {
		return nil
	}
	return &Row{
		Path: n.Path, Name: n.Name, Namespace: n.Namespace, Version: n.Version, LiveVersion: n.LiveVersion,
		Labels: n.Labels, Error: n.Error, Fields: n.RowFields(),
	}
}

// diff emits the events that turn old into next: the cluster's row, its
// Flux objects, Argo CD Applications and drift findings, and with
// recursive, those of the clusters below, matched by path. A nil old is a
// cluster added, a nil next one deleted. w.mu is held.
func (w *Watcher[C]) diff(old, next *fleet.Node, recursive bool) {
	w.diffShown(old, next, nil)
	if recursive {
		w.diffChildren(old, next)
	}
}

// diffShown emits the events of the cluster's row and of what it holds
// but the objects of the kinds shown already (nil: none): those whose
// changes the watch applied as events of their own (objectsChanged).
func (w *Watcher[C]) diffShown(old, next *fleet.Node, shown func(kind string) bool) {
	switch {
	case old == nil && next == nil:
		return
	case old == nil:
		w.emit(Event{Path: next.Path, Kind: KindCluster, Namespace: next.Namespace, Name: next.Name, Change: Added, After: rowOf(next)})
	case next == nil:
		w.emit(Event{Path: old.Path, Kind: KindCluster, Namespace: old.Namespace, Name: old.Name, Change: Deleted, Before: rowOf(old)})
	default:
		if before, after := rowOf(old), rowOf(next); !same(before, after) {
			w.emit(Event{Path: next.Path, Kind: KindCluster, Namespace: next.Namespace, Name: next.Name, Change: Modified, Before: before, After: after})
		}
	}
	w.diffContent(old, next, shown)
}

// diffChildren diffs the subtrees below old and next, matched by path.
func (w *Watcher[C]) diffChildren(old, next *fleet.Node) {
	before := map[string]*fleet.Node{}
	if old != nil {
		for _, c := range old.Children {
			before[c.Path] = c
		}
	}
	if next != nil {
		for _, c := range next.Children {
			w.diff(before[c.Path], c, true)
			delete(before, c.Path)
		}
	}
	if old != nil {
		for _, c := range old.Children {
			if _, gone := before[c.Path]; gone {
				w.diff(c, nil, true)
			}
		}
	}
}

// diffContent emits the events of the objects of a cluster: those of old
// and next, matched by kind, namespace and name, but of the kinds shown.
func (w *Watcher[C]) diffContent(old, next *fleet.Node, shown func(kind string) bool) {
	path := ""
	if old != nil {
		path = old.Path
	}
	if next != nil {
		path = next.Path
	}
	before, after := itemsOf(old, shown), itemsOf(next, shown)
	index := map[[3]string]fleet.HeldObject{}
	for _, it := range before {
		index[[3]string{it.Kind, it.Namespace, it.Name}] = it
	}
	for _, it := range after {
		key := [3]string{it.Kind, it.Namespace, it.Name}
		prev, ok := index[key]
		delete(index, key)
		switch {
		case !ok:
			w.emit(Event{Path: path, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name, Change: Added, After: it.Row})
		case it.Kind != KindFinding && !same(prev.Row, it.Row):
			// A finding appears or clears; what it says of the time
			// since changes with the clock.
			w.emit(Event{Path: path, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name, Change: Modified, Before: prev.Row, After: it.Row})
		}
	}
	for _, it := range before {
		if _, gone := index[[3]string{it.Kind, it.Namespace, it.Name}]; gone {
			w.emit(Event{Path: path, Kind: it.Kind, Namespace: it.Namespace, Name: it.Name, Change: Deleted, Before: it.Row})
		}
	}
}

// itemsOf are the objects of n's cluster that the stream reports, but
// those of the kinds shown: its facets' (fleet.ObjectFacet: Flux's objects,
// Argo CD's Applications), then its drift findings.
func itemsOf(n *fleet.Node, shown func(kind string) bool) []fleet.HeldObject {
	if n == nil {
		return nil
	}
	var out []fleet.HeldObject
	for _, it := range n.HeldObjects() {
		if shown == nil || !shown(it.Kind) {
			out = append(out, it)
		}
	}
	for _, f := range drift.Findings(n) {
		name, namespace := "", ""
		if f.Object != nil {
			name, namespace = f.Object.Kind+"/"+f.Object.Name, f.Object.Namespace
		}
		out = append(out, fleet.HeldObject{Kind: KindFinding, Namespace: namespace, Name: string(f.Kind) + ":" + name, Row: f})
	}
	return out
}

// same says two rows of the stream are the same as it shows them: equal,
// or written alike. A facet's fields the stream does not show (what a
// provider keeps for itself, `json:"-"`, or an empty list where there was
// none) are no change: a modified event whose before and after read the
// same would say nothing.
func same(before, after any) bool {
	if reflect.DeepEqual(before, after) {
		return true
	}
	b, errB := json.Marshal(before)
	a, errA := json.Marshal(after)
	return errB == nil && errA == nil && bytes.Equal(b, a)
}
