package fleet

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Facets are what the integrations know of one cluster, each under its
// provider's name and owned by that provider's package, which reads and
// writes its own (ocm.Of(node)). The core stores them, copies them with
// the node, merges them when two edges lead to one cluster, and shows
// them in the node's JSON flat among its own fields; it knows nothing
// else of them. A Facets map is never changed once set on a node: every
// change makes a new one, so that a copy of a node (the watch's
// snapshots, its next state) shares nothing that changes under it.
type Facets map[string]Facet

// Facet is one integration's knowledge of a cluster.
type Facet interface {
	// FromParent reports whether the parent said it (the walk had it
	// before it read the cluster: an OCM hub's registration) rather than
	// the cluster itself; a cluster read again keeps its parent's.
	FromParent() bool
	// JSONFields are the facet's fields in the node's JSON.
	JSONFields() []JSONField
}

// JSONField is one field a facet shows in its node's JSON, placed right
// after the field After of the node (or of another facet), so that a
// field an integration owns keeps the place it had in the node's JSON.
type JSONField struct {
	Key, After string
	Value      any
	// OmitEmpty leaves the field out when Value is empty, as the
	// omitempty option of a struct tag does.
	OmitEmpty bool
	// Rank orders the fields that follow one field: lower first, and
	// those of one rank in the order of their facets' names. A reader's
	// facet that follows every provider's at its place (drift's findings,
	// after the edges and OCM's registration) ranks above zero.
	Rank int
}

// EnvFacet is a facet that places its cluster in environments beside its
// name and infrastructure provider: an OCM ManagedClusterSet.
type EnvFacet interface {
	Facet
	// Envs are the environments, each with how an error describes it
	// ("clusterset blue").
	Envs() []Env
}

// PartialFacet is a facet of an integration that may have read its part
// of the cluster in part (Flux's, when some kinds could not be listed).
type PartialFacet interface {
	Facet
	// Unread says what could not be read, after the integration's name
	// ("flux: list HelmReleases: …"); "" when all was.
	Unread() string
}

// RowFacet is a facet that shows fields in its cluster's row of a stream
// of changes (--watch): a change of one of them is a change of the
// cluster. A facet's row fields are placed among the row's own (path,
// name, namespace, version, liveVersion, labels, error) as its JSONFields
// are among the node's.
type RowFacet interface {
	Facet
	// RowFields are the facet's fields in the row.
	RowFields() []JSONField
}

// RowFields are the fields the node's facets show in its row (RowFacet),
// in the order of their facets' names.
func (n *Node) RowFields() []JSONField {
	var out []JSONField
	for _, name := range slices.Sorted(maps.Keys(n.Facets)) {
		if r, ok := n.Facets[name].(RowFacet); ok {
			out = append(out, r.RowFields()...)
		}
	}
	return out
}

// ObjectFacet is a facet of objects its cluster holds that a stream of
// changes (--watch) shows each as an event of its own: Flux's objects,
// Argo CD's Applications.
type ObjectFacet interface {
	Facet
	// HeldObjects are the objects, in the facet's order.
	HeldObjects() []HeldObject
}

// HeldObject is an object a cluster holds, as a stream of changes shows
// it: its kind, namespace and name, and its row (the event's before and
// after).
type HeldObject struct {
	Kind, Namespace, Name string
	Row                   any
}

// HeldObjects are the objects of the node's ObjectFacets, the facets in the order
// their fields come in the node's JSON (Flux's "flux" before Argo CD's
// "argocd"), those that show none after, by name.
func (n *Node) HeldObjects() []HeldObject {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(n.Facets)) {
		if _, ok := n.Facets[name].(ObjectFacet); ok {
			names = append(names, name)
		}
	}
	if len(names) > 1 {
		pos := n.facetOrder()
		slices.SortStableFunc(names, func(a, b string) int {
			pa, oka := pos[a]
			pb, okb := pos[b]
			switch {
			case oka && okb:
				return cmp.Compare(pa, pb)
			case oka:
				return -1
			case okb:
				return 1
			}
			return 0
		})
	}
	var out []HeldObject
	for _, name := range names {
		out = append(out, n.Facets[name].(ObjectFacet).HeldObjects()...)
	}
	return out
}

// facetOrder maps the name of each facet that shows a field in the node's
// JSON to the place of its first field there.
func (n *Node) facetOrder() map[string]int {
	type placed struct{ key, facet string }
	after := map[string][]placed{}
	ranks := map[placed]int{}
	for _, name := range slices.Sorted(maps.Keys(n.Facets)) {
		for _, f := range n.Facets[name].JSONFields() {
			p := placed{key: f.Key, facet: name}
			after[f.After] = append(after[f.After], p)
			ranks[p] = f.Rank
		}
	}
	for _, ps := range after {
		slices.SortStableFunc(ps, func(a, b placed) int { return cmp.Compare(ranks[a], ranks[b]) })
	}
	pos := map[string]int{}
	var follow func(key string)
	follow = func(key string) {
		ps := after[key]
		delete(after, key)
		for _, p := range ps {
			if _, ok := pos[p.facet]; !ok {
				pos[p.facet] = len(pos)
			}
			follow(p.key)
		}
	}
	for _, f := range nodeFields() {
		follow(f.key)
	}
	return pos
}

// Unread are what the integrations could not read of the cluster, each
// after its name, in the order of their facets' names.
func (n *Node) Unread() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(n.Facets)) {
		if p, ok := n.Facets[name].(PartialFacet); ok {
			if u := p.Unread(); u != "" {
				out = append(out, u)
			}
		}
	}
	return out
}

// Env is an environment a facet puts its cluster in.
type Env struct{ Name, About string }

// Facet returns the facet named name, or nil.
func (n *Node) Facet(name string) Facet { return n.Facets[name] }

// SetFacet stores f under name (in a new map); a nil f removes it.
func (n *Node) SetFacet(name string, f Facet) { n.Facets = setFacet(n.Facets, name, f) }

// SetFacet stores what the parent says of the child under name; a nil f
// removes it.
func (c *Child) SetFacet(name string, f Facet) { c.Facets = setFacet(c.Facets, name, f) }

func setFacet(fs Facets, name string, f Facet) Facets {
	if isNil(f) {
		if _, ok := fs[name]; !ok {
			return fs
		}
		fs = maps.Clone(fs)
		delete(fs, name)
		return fs
	}
	fs = maps.Clone(fs)
	if fs == nil {
		fs = Facets{}
	}
	fs[name] = f
	return fs
}

// isNil reports whether f is nil, or a nil pointer, map or slice.
func isNil(f Facet) bool {
	if f == nil {
		return true
	}
	switch v := reflect.ValueOf(f); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// merge adds to fs the facets of other it does not have: what another
// edge's parent object says of the same cluster.
func (fs Facets) merge(other Facets) Facets {
	for name, f := range other {
		if _, ok := fs[name]; !ok {
			fs = setFacet(fs, name, f)
		}
	}
	return fs
}

// MergeFacets fills in dst's facets with those src has and dst has not:
// two edges' children that are one cluster.
func MergeFacets(dst *Child, src Child) { dst.Facets = dst.Facets.merge(src.Facets) }

// envs are the environments the facets put the cluster in, in the order
// of the facets' names.
func (fs Facets) envs() []Env {
	var out []Env
	for _, name := range slices.Sorted(maps.Keys(fs)) {
		if e, ok := fs[name].(EnvFacet); ok {
			out = append(out, e.Envs()...)
		}
	}
	return out
}

// nodeFields are Node's own JSON fields, in order, read once.
var nodeFields = sync.OnceValue(func() []nodeField {
	t := reflect.TypeFor[nodeJSON]()
	var out []nodeField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		out = append(out, nodeField{index: i, key: name, omitEmpty: strings.Contains(opts, "omitempty")})
	}
	return out
})

type nodeField struct {
	index     int
	key       string
	omitEmpty bool
}

// nodeJSON is Node without its methods, so that encoding a field of it
// does not come back to MarshalJSON.
type nodeJSON Node

// MarshalJSON writes the node's fields and, flat among them, each facet's
// fields after the field it names.
func (n *Node) MarshalJSON() ([]byte, error) { return n.marshalJSON(false) }

// MarshalJSONAlone writes the node as MarshalJSON does, without its
// subtree: no "children" field at all (a list's item).
func (n *Node) MarshalJSONAlone() ([]byte, error) { return n.marshalJSON(true) }

func (n *Node) marshalJSON(alone bool) ([]byte, error) {
	var b bytes.Buffer
	if err := n.appendJSON(&b, json.NewEncoder(&b), alone); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// appendJSON writes the node's JSON to b, through enc (which writes to b),
// and its children's by recursion: encoding/json would compact a node's
// subtree again at every level above it.
func (n *Node) appendJSON(b *bytes.Buffer, enc *json.Encoder, alone bool) error {
	o := jsonObject{b: b, enc: enc, path: n.Path}
	for _, name := range slices.Sorted(maps.Keys(n.Facets)) {
		o.place(n.Facets[name].JSONFields())
	}
	o.open()
	v := reflect.ValueOf((*nodeJSON)(n)).Elem()
	for _, f := range nodeFields() {
		switch {
		case f.key == "children" && alone:
			continue
		case f.key == "children":
			o.key(f.key)
			if err := n.appendChildren(b, enc); err != nil {
				return err
			}
		default:
			value := v.Field(f.index)
			if !f.omitEmpty || !isEmpty(value) {
				if err := o.field(f.key, value.Interface()); err != nil {
					return err
				}
			}
		}
		if err := o.followers(f.key); err != nil {
			return err
		}
	}
	return o.close()
}

// MarshalFields writes a JSON object of a cluster's fields own, in their
// order, with each of placed right after the field it names, as a node's
// JSON places its facets' fields (by Rank, then in placed's order; an
// omitted field still places those after it): a cluster's row in a
// stream of changes, its facets' RowFields among its own. path names the
// cluster in an error.
func MarshalFields(path string, own, placed []JSONField) ([]byte, error) {
	var b bytes.Buffer
	o := jsonObject{b: &b, enc: json.NewEncoder(&b), path: path}
	o.place(placed)
	o.open()
	for _, f := range own {
		if !f.OmitEmpty || !isEmpty(reflect.ValueOf(f.Value)) {
			if err := o.field(f.Key, f.Value); err != nil {
				return nil, err
			}
		}
		if err := o.followers(f.Key); err != nil {
			return nil, err
		}
	}
	if err := o.close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// jsonObject writes one JSON object of a cluster to b, through enc (which
// writes to b): the caller's fields in order, each followed by the fields
// placed after it.
type jsonObject struct {
	b     *bytes.Buffer
	enc   *json.Encoder
	path  string                 // the cluster's, for errors
	after map[string][]JSONField // by the field they follow; most nodes have no facet: no map
	first bool
}

// place adds fields to those placed after another.
func (o *jsonObject) place(fields []JSONField) {
	for _, f := range fields {
		if o.after == nil {
			o.after = map[string][]JSONField{}
		}
		o.after[f.After] = append(o.after[f.After], f)
	}
}

// open orders the fields placed after each field by rank, and begins the
// object.
func (o *jsonObject) open() {
	for _, fields := range o.after {
		slices.SortStableFunc(fields, func(a, b JSONField) int { return cmp.Compare(a.Rank, b.Rank) })
	}
	o.b.WriteByte('{')
	o.first = true
}

// key writes a field's key, after a comma but for the first.
func (o *jsonObject) key(k string) {
	if !o.first {
		o.b.WriteByte(',')
	}
	o.first = false
	o.b.WriteByte('"')
	o.b.WriteString(k) // keys are the model's own: no escaping needed
	o.b.WriteString(`":`)
}

// field writes a field.
func (o *jsonObject) field(k string, value any) error {
	o.key(k)
	if err := o.enc.Encode(value); err != nil {
		return fmt.Errorf("failed to encode field %s of cluster %q: %w", k, o.path, err)
	}
	o.b.Truncate(o.b.Len() - 1) // Encode's newline
	return nil
}

// followers writes the fields placed after the field key, each followed
// by its own.
func (o *jsonObject) followers(key string) error {
	fields := o.after[key]
	delete(o.after, key)
	for _, f := range fields {
		// An omitted field still places the fields that follow it.
		if !f.OmitEmpty || !isEmpty(reflect.ValueOf(f.Value)) {
			if err := o.field(f.Key, f.Value); err != nil {
				return err
			}
		}
		if err := o.followers(f.Key); err != nil {
			return err
		}
	}
	return nil
}

// close ends the object: an error if a field placed followed none.
func (o *jsonObject) close() error {
	if len(o.after) > 0 {
		return fmt.Errorf("cluster %q: a facet's fields follow no field of the node: %v", o.path, slices.Sorted(maps.Keys(o.after)))
	}
	o.b.WriteByte('}')
	return nil
}

// appendChildren writes the node's children as encoding/json writes a
// slice: null when nil.
func (n *Node) appendChildren(b *bytes.Buffer, enc *json.Encoder) error {
	if n.Children == nil {
		b.WriteString("null")
		return nil
	}
	b.WriteByte('[')
	for i, c := range n.Children {
		if i > 0 {
			b.WriteByte(',')
		}
		if c == nil {
			b.WriteString("null")
			continue
		}
		if err := c.appendJSON(b, enc, false); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// isEmpty is encoding/json's test for omitempty.
func isEmpty(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
