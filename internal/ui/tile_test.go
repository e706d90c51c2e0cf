package ui

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/golden"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// A fleet of a MoM, two masters and their tenants, one of each kind of
// tile: ready, failing by one provider and ready by another, unread, down,
// drifting, frozen, a cycle.
func testFleet() watch.Snapshot {
	cycle := ""
	tenant := func(path, name string) *fleet.Node { return &fleet.Node{Name: name, Namespace: "tenants", Path: path} }
	bad := tenant("aws/team-a", "team-a")
	bad.Labels = map[string]string{"tier": "prod"}
	unread := tenant("aws/team-b", "team-b")
	unread.Error = "dial tcp 10.0.0.1:6443: i/o timeout"
	down := tenant("azure/team-c", "team-c")
	loop := tenant("azure/back", "back")
	loop.CycleOf = &cycle
	root := &fleet.Node{Name: "mom", Children: []*fleet.Node{
		{Name: "aws", Namespace: "masters", Path: "aws", Version: "v1.36.3", Children: []*fleet.Node{bad, unread}},
		{Name: "azure", Namespace: "masters", Path: "azure", Children: []*fleet.Node{down, loop}},
	}}
	since := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return watch.Snapshot{Root: root, Down: map[string]watch.Down{"azure/team-c": {Since: since, Error: "connection refused"}},
		Changed: map[string]time.Time{"aws": since}}
}

// Columns as two providers draw them: one says team-a fails, the other
// that every cluster is ready; FROZEN is a mark, not a health.
func testMarks() Marks {
	return Marks{
		Columns: []fleet.Column{
			{Header: "PROVIDER", Cell: func(*fleet.Node) (string, fleet.Health) { return "aws", fleet.HealthNone }},
			{Header: "PHASE", Cell: func(n *fleet.Node) (string, fleet.Health) {
				if n.Name == "team-a" {
					return "Failed", fleet.HealthBad
				}
				return "Provisioned", fleet.HealthGood
			}},
			{Header: "FLUX", Cell: func(n *fleet.Node) (string, fleet.Health) {
				if n.Path == "" {
					return "", fleet.HealthNone
				}
				return "ks 1/1", fleet.HealthGood
			}},
		},
		Frozen: func(n *fleet.Node) []string {
			if n.Path == "azure" {
				return []string{"change-window"}
			}
			return nil
		},
		Drift: func(n *fleet.Node) []string {
			if n.Path == "aws/team-a" {
				return []string{"revision"}
			}
			return nil
		},
	}
}

// The tiles of a fleet: parents first, each with its env, its worst
// health across the providers, unread and down greyed, its marks.
func TestTiles(t *testing.T) {
	tiles := Tiles(testFleet(), testMarks())
	data, err := json.MarshalIndent(tiles, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.AssertFile(t, "tiles.json", append(data, '\n'))
	health := map[string]string{}
	for _, tile := range tiles {
		health[tile.Path] = tile.Health
	}
	want := map[string]string{"": HealthGood, "aws": HealthGood, "aws/team-a": HealthBad, "aws/team-b": HealthUnread,
		"azure": HealthGood, "azure/team-c": HealthDown, "azure/back": HealthGood}
	for path, h := range want {
		if health[path] != h {
			t.Errorf("%q: health %q, want %q", path, health[path], h)
		}
	}
}

// The stream sends what changed, only that, and keeps no more batches
// than its bounds: an older id gets a snapshot.
func TestStreamBatches(t *testing.T) {
	s := NewStream("e")
	tiles := Tiles(testFleet(), testMarks())
	s.Update(tiles, watch.Stats{})
	if b, _, ok := s.Since("e.0"); !ok || len(b) != 1 || len(b[0].Tiles) != len(tiles) {
		t.Fatalf("the first batch: %+v %v, want every tile", b, ok)
	}
	s.Update(Tiles(testFleet(), testMarks()), watch.Stats{})
	if b, _, ok := s.Since("e.1"); !ok || len(b) != 0 {
		t.Errorf("an update that changed nothing made a batch: %+v", b)
	}
	changed := Tiles(testFleet(), testMarks())
	changed[1].Health = HealthWarn
	s.Update(changed, watch.Stats{})
	if b, _, ok := s.Since("e.1"); !ok || len(b) != 1 || len(b[0].Tiles) != 1 || b[0].Tiles[0].Path != "aws" {
		t.Errorf("one tile changed: %+v", b)
	}
	// The batches kept hold no more tiles than the fleet has: a page
	// whose resume would carry more (the first batch's 7, and this one)
	// gets the snapshot.
	if _, _, ok := s.Since("e.0"); ok {
		t.Error("a resume that would carry more tiles than the fleet has did not ask for a snapshot")
	}
	for i := range maxBatches + 5 {
		s.Add(watch.Event{Name: "x", Time: time.Unix(int64(i), 0)})
		s.Update(changed, watch.Stats{})
	}
	if _, _, ok := s.Since("e.1"); ok {
		t.Error("an id older than every batch kept did not ask for a snapshot")
	}
	doc := s.Document()
	if len(doc.Events) != feedSize || !doc.Events[feedSize-1].Time.Equal(time.Unix(maxBatches+4, 0)) {
		t.Errorf("the document's feed: %d events, the last at %v", len(doc.Events), doc.Events[len(doc.Events)-1].Time)
	}
	if b, _, ok := s.Since(doc.ID); !ok || len(b) != 0 {
		t.Errorf("the document's own id: %+v %v", b, ok)
	}
}

// The change feed keeps the newest events at far less than a copy per
// event: a walk's first emission, thousands of events, does not copy the
// feed for each.
func TestStreamFeedIsAmortized(t *testing.T) {
	s := NewStream("e")
	ev := watch.Event{Name: "x", Kind: "Kustomization"}
	const n = 10 * feedSize
	allocs := testing.AllocsPerRun(5, func() {
		for range n {
			s.Add(ev)
		}
	})
	if per := allocs / n; per > 0.05 {
		t.Errorf("%.2f allocations per event; want a copy per %d events at most", per, feedSize)
	}
	if doc := s.Document(); len(doc.Events) != 0 {
		t.Errorf("events before an update in the document: %d", len(doc.Events))
	}
	s.Update(nil, watch.Stats{})
	if b, _, ok := s.Since("e.0"); !ok || len(b) != 1 || len(b[0].Events) != feedSize {
		t.Errorf("the batch's events: %+v, want the newest %d", b, feedSize)
	}
}

// The vendored library is the version hack/tools/ui pins, with its
// licence: make ui-vendor wrote it.
func TestVendoredLibraryIsThePinnedOne(t *testing.T) {
	pins, err := os.ReadFile("../../hack/tools/ui/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(pins, &pkg); err != nil {
		t.Fatal(err)
	}
	for name, version := range pkg.Dependencies {
		js, err := web.ReadFile("web/vendor/" + name + ".min.js")
		if err != nil {
			t.Fatalf("%s is pinned and not vendored: run make ui-vendor: %v", name, err)
		}
		header := regexp.MustCompile(`v(\d+\.\d+\.\d+)`).FindStringSubmatch(strings.SplitN(string(js), "\n", 2)[0])
		if len(header) < 2 || header[1] != version {
			t.Errorf("web/vendor/%s.min.js is %v, the pin %s: run make ui-vendor", name, header, version)
		}
		if _, err := web.ReadFile("web/vendor/" + name + ".LICENSE"); err != nil {
			t.Errorf("%s's licence is not vendored: %v", name, err)
		}
	}
}
