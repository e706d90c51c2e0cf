package ui

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// The stream's bounds: a page that reconnects after more changes than the
// stream keeps gets a fresh snapshot, which loses nothing (it is the whole
// fleet) but the feed's older lines.
const (
	// maxBatches bounds the batches kept for pages that reconnect by
	// count; the tiles they hold in all are bounded by the fleet's own
	// count: a resume that would send more tiles than a snapshot holds
	// is no cheaper than the snapshot, and the server keeps at most a
	// second fleet's worth of tiles, however long the fleet moves.
	maxBatches = 1024
	// feedSize is how many of the watch's events the snapshot carries
	// and a batch at most: the change feed shows the newest.
	feedSize = 200
)

// Event is a line of the change feed: a change the watch saw.
type Event struct {
	Time      time.Time    `json:"time"`
	Path      string       `json:"path"`
	Kind      string       `json:"kind"`
	Namespace string       `json:"namespace,omitempty"`
	Name      string       `json:"name"`
	Change    watch.Change `json:"change"`
	Error     string       `json:"error,omitempty"`
}

// Batch is one message of the stream after the snapshot: the tiles that
// changed, whole; the paths of those gone; the watch's events since the
// last batch (the newest feedSize of them, oldest first).
type Batch struct {
	ID      string   `json:"id"`
	Tiles   []Tile   `json:"tiles,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Events  []Event  `json:"events,omitempty"`
	// Stats are the watch's counts after the batch.
	Stats watch.Stats `json:"stats"`
	seq   uint64
}

// Document is the fleet as a page starts from: every tile, parents before
// children, and the newest events, oldest first. ID is the stream's id of
// the last batch it includes: the stream resumes after it.
type Document struct {
	ID     string      `json:"id"`
	Tiles  []Tile      `json:"tiles"`
	Events []Event     `json:"events"`
	Stats  watch.Stats `json:"stats"`
}

// Stream is the fleet as the page sees it: the tiles now, the batches of
// changes that led there (the newest, for pages that reconnect), and a
// signal for pages waiting on the next. Its ids are EPOCH.SEQ: a page
// that reconnects to another process (a restart) gets a fresh snapshot.
type Stream struct {
	mu      sync.Mutex
	epoch   string
	seq     uint64
	tiles   []Tile
	stats   watch.Stats
	batches []Batch
	kept    int // tiles held by batches
	events  []Event
	pending []Event
	next    chan struct{}
	// ready is closed by the first Update: the walk's fleet is in.
	ready chan struct{}
}

// NewStream returns an empty stream whose ids start with epoch.
func NewStream(epoch string) *Stream {
	return &Stream{epoch: epoch, next: make(chan struct{}), ready: make(chan struct{})}
}

// Add queues the watch's event for the next batch: the Emit of the watch.
func (s *Stream) Add(ev watch.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = appendBounded(s.pending, Event{Time: ev.Time, Path: ev.Path, Kind: ev.Kind, Namespace: ev.Namespace,
		Name: ev.Name, Change: ev.Change, Error: ev.Error})
}

// appendBounded appends e, keeping at least the newest feedSize: the
// slice grows to twice that before its newest are copied to an array of
// their own, a copy per event at most however many come (the walk's
// first emission is thousands: copying the newest for each made the
// server allocate 35 MB more than tree --watch at 1000 tenants, and hold
// it). A slice handed out before stays as it was. newest gives the
// newest feedSize.
func appendBounded(events []Event, e ...Event) []Event {
	events = append(events, e...)
	if len(events) > 2*feedSize {
		events = append(make([]Event, 0, 2*feedSize), newest(events)...)
	}
	return events
}

// newest is the newest feedSize of events.
func newest(events []Event) []Event { return events[max(len(events)-feedSize, 0):] }

// Update makes tiles the stream's, with the events queued since the last
// batch: a batch of what changed, when something did.
func (s *Stream) Update(tiles []Tile, stats watch.Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := make(map[string]*Tile, len(s.tiles))
	for i := range s.tiles {
		old[s.tiles[i].Path] = &s.tiles[i]
	}
	b := Batch{Events: newest(s.pending), Stats: stats}
	seen := make(map[string]bool, len(tiles))
	for i := range tiles {
		t := &tiles[i]
		seen[t.Path] = true
		if o, ok := old[t.Path]; !ok || !sameTile(o, t) {
			b.Tiles = append(b.Tiles, *t)
		}
	}
	for i := range s.tiles {
		if !seen[s.tiles[i].Path] {
			b.Removed = append(b.Removed, s.tiles[i].Path)
		}
	}
	s.tiles, s.stats, s.pending = tiles, stats, nil
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
	if len(b.Tiles) == 0 && len(b.Removed) == 0 && len(b.Events) == 0 && s.seq > 0 {
		return
	}
	s.seq++
	b.seq, b.ID = s.seq, s.id(s.seq)
	s.events = appendBounded(s.events, b.Events...)
	s.batches = append(s.batches, b)
	s.kept += len(b.Tiles)
	for len(s.batches) > maxBatches || len(s.batches) > 1 && s.kept > len(tiles) {
		s.kept -= len(s.batches[0].Tiles)
		s.batches = s.batches[1:]
	}
	close(s.next)
	s.next = make(chan struct{})
}

// Ready is closed once the stream has the fleet the walk found: before
// that, a snapshot would be an empty map.
func (s *Stream) Ready() <-chan struct{} { return s.ready }

func (s *Stream) id(seq uint64) string { return s.epoch + "." + strconv.FormatUint(seq, 10) }

// Document is the stream's snapshot now.
func (s *Stream) Document() Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Document{ID: s.id(s.seq), Tiles: s.tiles, Events: newest(s.events), Stats: s.stats}
}

// Since returns the batches after the one of id, and a channel closed
// when the next comes. ok is false when id is not this stream's or older
// than the batches it keeps: the page needs a snapshot.
func (s *Stream) Since(id string) (batches []Batch, next <-chan struct{}, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	epoch, seqText, found := strings.Cut(id, ".")
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if !found || err != nil || epoch != s.epoch || seq > s.seq {
		return nil, s.next, false
	}
	if seq == s.seq {
		return nil, s.next, true
	}
	if len(s.batches) == 0 || s.batches[0].seq > seq+1 {
		return nil, s.next, false
	}
	first := int(seq + 1 - s.batches[0].seq)
	return s.batches[first:], s.next, true
}

// Follow keeps s up to date with the watch behind feed until ctx ends or
// the watch does: a batch per change the feed signals, at most one per
// every (changes in between are one batch), so that a fleet where
// everything moves stays smooth.
func Follow(ctx context.Context, feed watch.Feed, s *Stream, m Marks, every time.Duration) {
	update := func() {
		snap := feed.Snapshot()
		s.Update(Tiles(snap, m), snap.Stats)
	}
	update()
	pace := time.NewTimer(0)
	defer pace.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, open := <-feed.Updates():
			if !open {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-pace.C:
		}
		update()
		pace.Reset(every)
	}
}
