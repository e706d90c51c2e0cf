package kube

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Store is what a connection that keeps its reads (Options.Retain) kept
// of one list: the values a Lister kept of each object, which a watch
// keeps up to date from the list's resourceVersion on, and from which
// the connection answers that Lister's later reads.
type Store struct {
	r reading

	mu      sync.Mutex
	listing Listing
	items   *items
}

// keepStore keeps what a list read, as the Store of r; a list read again
// (by two probes at once) replaces nothing: the first Store stands.
func (c *Conn) keepStore(r reading, l Listing, it *items) *Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.stores[r.key()]; s != nil {
		return s
	}
	if c.stores == nil {
		c.stores = map[string]*Store{}
	}
	s := &Store{r: r, listing: l, items: it}
	c.stores[r.key()] = s
	return s
}

// store is the Store of the reading named key; nil when none was kept.
func (c *Conn) store(key string) *Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stores[key]
}

// Stores are what the connection keeps of its lists, in a fixed order.
func (c *Conn) Stores() []*Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Store, 0, len(c.stores))
	for _, s := range c.stores {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].r.key() < out[j].r.key() })
	return out
}

// Key names what the store keeps: its Lister's name, kind and selectors.
func (s *Store) Key() string { return s.r.key() }

// Listing is the list the store keeps, at the resourceVersion it was
// listed at: where a watch of it starts.
func (s *Store) Listing() Listing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listing
}

func (s *Store) values() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items.values()
}

// Rows reports whether what the store keeps of each object is how a
// watch shows the object (Lister.Rows).
func (s *Store) Rows() bool { return s.r.rows }

// Change is a change of what a store keeps of one object: Before is nil
// for an object added, After nil for one deleted.
type Change struct {
	// Namespace and Name are the object's.
	Namespace, Name string
	Before, After   any
}

// Apply applies one event of a watch of the store's list: the object it
// carries added, replaced or deleted, as its Lister keeps it. It returns
// the change of what is kept, false where none: an object of which
// nothing kept changed (its status's clock, its managedFields) changes
// nothing, nor does a bookmark.
func (s *Store) Apply(ev WatchEvent) (Change, bool, error) {
	if ev.Type == "BOOKMARK" {
		return Change{}, false, nil
	}
	k, v, keep, err := s.r.keep(ev.Object)
	if err != nil {
		return Change{}, false, fmt.Errorf("%s: %w", objectName(s.r.listing, nameOf(ev.Object, k), 0), err)
	}
	key := keyOf(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.items.byKey[key]
	if ev.Type == "DELETED" || !keep {
		if !had {
			return Change{}, false, nil
		}
		s.items.remove(key)
		return Change{Namespace: k.Namespace, Name: k.Name, Before: old}, true, nil
	}
	if had && reflect.DeepEqual(old, v) {
		return Change{}, false, nil
	}
	s.items.put(key, v)
	c := Change{Namespace: k.Namespace, Name: k.Name, After: v}
	if had {
		c.Before = old
	}
	return c, true, nil
}

// Relist lists the store's objects again, as the Lister did: after a
// watch's resourceVersion expired (410 Gone). It returns the changes of
// what is kept, in key order, and the Listing to watch from.
func (c *Conn) Relist(ctx context.Context, s *Store) ([]Change, Listing, error) {
	fresh, rv, err := c.listAll(ctx, s.r)
	if err != nil {
		return nil, s.Listing(), err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var changes []Change
	change := func(key string, before, after any) {
		ns, name, ok := strings.Cut(key, "/")
		if !ok {
			ns, name = "", key
		}
		changes = append(changes, Change{Namespace: ns, Name: name, Before: before, After: after})
	}
	keys := map[string]bool{}
	for k := range fresh.byKey {
		keys[k] = true
	}
	for k := range s.items.byKey {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		old, had := s.items.byKey[k]
		v, has := fresh.byKey[k]
		switch {
		case !has:
			change(k, old, nil)
		case !had:
			change(k, nil, v)
		case !reflect.DeepEqual(old, v):
			change(k, old, v)
		}
	}
	s.items = fresh
	s.listing.ResourceVersion = rv
	return changes, s.listing, nil
}
