package kube_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-fleet/kubectl-fleet/internal/idle"
	"github.com/kubectl-fleet/kubectl-fleet/internal/kube"
)

// pager is an apiserver of Secrets, secret-0000 … in namespace ns, that
// serves them in pages as an apiserver does (limit, continue), and
// misbehaves as a test sets it to.
type pager struct {
	*httptest.Server
	objects int
	// pad is added to each object, as bytes of a data key.
	pad int
	// expireAt answers 410 Expired, once, to the continue of that page
	// (0: never): the snapshot of the first page is gone.
	expireAt int
	// endless hands out a continue token with every page, past the end.
	endless bool
	// stallAt never answers the page of that number (0: never).
	stallAt int
	// breakAt breaks the connection of the page of that number (0:
	// never), breaks times: alternately closed before any answer and cut
	// short in the middle of its body.
	breakAt, breaks int

	mu       sync.Mutex
	broke    int
	expired  bool
	queries  []string
	requests atomic.Int64
}

func newPager(t *testing.T, p *pager) *pager {
	t.Helper()
	p.Server = httptest.NewTLSServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *pager) serve(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	if r.URL.Path != "/api/v1/secrets" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	p.mu.Lock()
	p.queries = append(p.queries, r.URL.RawQuery)
	p.mu.Unlock()
	limit, _ := strconv.Atoi(q.Get("limit"))
	start, page := 0, 1
	if c := q.Get("continue"); c != "" {
		_, _ = fmt.Sscanf(c, "from-%d-page-%d", &start, &page)
	}
	if p.stallAt == page {
		<-r.Context().Done()
		return
	}
	p.mu.Lock()
	broken := p.breakAt == page && p.breaks > 0
	if broken {
		p.breaks--
		p.broke++
	}
	cut := p.broke%2 == 0
	p.mu.Unlock()
	if broken {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		if cut {
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"kind\":\"SecretList\",\"items\":[{\"metadata\":")
			_ = buf.Flush()
		}
		_ = conn.Close()
		return
	}
	p.mu.Lock()
	expire := p.expireAt == page && !p.expired && q.Get("continue") != ""
	if expire {
		p.expired = true
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if expire {
		w.WriteHeader(http.StatusGone)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"The provided continue parameter is too old to display a consistent list result."}`))
		return
	}
	end := p.objects
	if limit > 0 {
		end = min(start+limit, p.objects)
	}
	var items []string
	for i := start; i < end; i++ {
		items = append(items, fmt.Sprintf(`{"metadata":{"name":"secret-%04d","namespace":"ns"},"data":{"pad":%q}}`, i, strings.Repeat("A", p.pad)))
	}
	cont := ""
	if limit > 0 && (end < p.objects || p.endless) {
		cont = fmt.Sprintf("from-%d-page-%d", end, page+1)
	}
	fmt.Fprintf(w, `{"kind":"SecretList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":%q},"items":[%s]}`, cont, strings.Join(items, ","))
}

func (p *pager) connect(t *testing.T, opts kube.Options) *kube.Conn {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.Certificate().Raw})
	c, err := kube.NewConnector(scheme, kube.CoreAPIs(), opts).Connect(&rest.Config{Host: p.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// secretNames keeps the name of each Secret, and counts the objects it
// was given.
func secretNames(seen *atomic.Int64) kube.Lister[string] {
	return kube.Lister[string]{Name: "names", GVK: corev1.SchemeGroupVersion.WithKind("Secret"), Keep: func(raw []byte) (key client.ObjectKey, name string, keep bool, err error) {
		seen.Add(1)
		var o kube.Object
		if err := kube.Decode(raw, &o); err != nil {
			return key, "", false, err
		}
		return o.Metadata.Key(), o.Metadata.Name, true, nil
	}}
}

func wantNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("secret-%04d", i)
	}
	return out
}

// A list is read in pages of the chunk size, each asked from where the
// last ended, and is the same list as one request of it reads.
func TestListInPages(t *testing.T) {
	p := newPager(t, &pager{objects: 95})
	var seen atomic.Int64
	got, err := secretNames(&seen).List(context.Background(), p.connect(t, kube.Options{ChunkSize: 10}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantNames(95), got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	want := []string{"limit=10"}
	for i := 10; i < 95; i += 10 {
		want = append(want, fmt.Sprintf("continue=from-%d-page-%d&limit=10", i, i/10+1))
	}
	if diff := cmp.Diff(want, p.queries); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}

	one := newPager(t, &pager{objects: 95})
	got, err = secretNames(&seen).List(context.Background(), one.connect(t, kube.Options{ChunkSize: -1}))
	if err != nil || len(got) != 95 {
		t.Fatalf("one request: %d names, %v", len(got), err)
	}
	if diff := cmp.Diff([]string{"resourceVersion=0"}, one.queries); diff != "" {
		t.Errorf("one request's query (-want +got):\n%s", diff)
	}
}

// A continue token that expired mid-list (410 Expired: the apiserver no
// longer holds the first page's snapshot) starts the list again, and what
// the first pages read is dropped: the result is complete, once each.
func TestExpiredContinueStartsTheListAgain(t *testing.T) {
	p := newPager(t, &pager{objects: 50, expireAt: 3})
	var seen atomic.Int64
	got, err := secretNames(&seen).List(context.Background(), p.connect(t, kube.Options{ChunkSize: 10}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantNames(50), got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if n := seen.Load(); n != 20+50 {
		t.Errorf("%d objects read; want the 20 of the pages before the expiry, then the 50 again", n)
	}
	if p.queries[3] != "limit=10" {
		t.Errorf("after the 410, query %q; want the first page again", p.queries[3])
	}
}

// A page whose connection broke (closed before an answer, or cut short in
// its body), as a loaded apiserver or a proxy between may break it, is
// asked again, as client-go asks a GET again: the list is complete, each
// object once. A connection that keeps breaking is an error after a few
// tries, not a loop.
func TestBrokenConnectionAsksThePageAgain(t *testing.T) {
	p := newPager(t, &pager{objects: 30, breakAt: 2, breaks: 2})
	var seen atomic.Int64
	got, err := secretNames(&seen).List(context.Background(), p.connect(t, kube.Options{ChunkSize: 10}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantNames(30), got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	want := []string{"limit=10", "continue=from-10-page-2&limit=10", "continue=from-10-page-2&limit=10", "continue=from-10-page-2&limit=10", "continue=from-20-page-3&limit=10"}
	if diff := cmp.Diff(want, p.queries); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}

	always := newPager(t, &pager{objects: 30, breakAt: 1, breaks: 100})
	_, err = secretNames(&seen).List(context.Background(), always.connect(t, kube.Options{ChunkSize: 10}))
	if err == nil {
		t.Fatal("a connection that always breaks: no error")
	}
	if n := always.requests.Load(); n != 4 {
		t.Errorf("%d requests; want the page and 3 tries again", n)
	}
}

// An apiserver that hands out continue tokens without end is stopped at
// the bound on pages; one whose pages together pass the bound on bytes is
// stopped there: each an error that says so, not a list held in part.
func TestBoundsOnOneList(t *testing.T) {
	var seen atomic.Int64
	endless := newPager(t, &pager{objects: 3, endless: true})
	_, err := secretNames(&seen).List(context.Background(), endless.connect(t, kube.Options{ChunkSize: 10, MaxListPages: 50}))
	if !errors.Is(err, kube.ErrListTooLong) || !strings.Contains(err.Error(), "more than 50 pages") {
		t.Errorf("endless continue: %v; want ErrListTooLong after 50 pages", err)
	}
	if n := endless.requests.Load(); n != 50 {
		t.Errorf("%d requests; want 50", n)
	}

	big := newPager(t, &pager{objects: 1000, pad: 1000})
	_, err = secretNames(&seen).List(context.Background(), big.connect(t, kube.Options{ChunkSize: 10, MaxListBytes: 100_000}))
	if !errors.Is(err, kube.ErrListTooLong) || !strings.Contains(err.Error(), "more than 100000 bytes") {
		t.Errorf("pages past the bytes: %v; want ErrListTooLong", err)
	}
	if n := big.requests.Load(); n > 11 {
		t.Errorf("%d requests; want it stopped at about 100 KB (10 pages of 10 KB)", n)
	}
}

// A page past the bound on a response is asked again at half the size,
// down to one object: a list of objects each under the bound is read
// whole; one object over it is refused, naming the bound.
func TestPageTooLargeIsAskedSmaller(t *testing.T) {
	var seen atomic.Int64
	p := newPager(t, &pager{objects: 40, pad: 3000})
	got, err := secretNames(&seen).List(context.Background(), p.connect(t, kube.Options{ChunkSize: 40, MaxResponseBytes: 32 << 10}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantNames(40), got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if p.queries[0] != "limit=40" || p.queries[1] != "limit=20" || p.queries[2] != "limit=10" {
		t.Errorf("queries %v; want 40, then 20, then 10 a page", p.queries)
	}

	huge := newPager(t, &pager{objects: 2, pad: 64 << 10})
	_, err = secretNames(&seen).List(context.Background(), huge.connect(t, kube.Options{ChunkSize: 40, MaxResponseBytes: 32 << 10}))
	if !errors.Is(err, kube.ErrResponseTooLarge) {
		t.Errorf("one object past the bound: %v; want ErrResponseTooLarge", err)
	}
}

// Under an idle timeout (the walk's per-cluster one), a list whose pages
// keep coming is read however long it takes; one whose next page never
// comes ends at the timeout, with context.DeadlineExceeded.
func TestIdleTimeoutBoundsAPageNotTheList(t *testing.T) {
	const timeout = 500 * time.Millisecond
	var seen atomic.Int64
	slow := newPager(t, &pager{objects: 30})
	slowly := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(timeout / 3) // the pace of a slow cluster, not a wait for anything
			next.ServeHTTP(w, r)
		})
	}
	slow.Config.Handler = slowly(slow.Config.Handler)
	ctx, cancel := idle.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	got, err := secretNames(&seen).List(ctx, slow.connect(t, kube.Options{ChunkSize: 3}))
	if err != nil || len(got) != 30 {
		t.Fatalf("a list slower than the timeout in all: %d names, %v; want 30", len(got), err)
	}
	if time.Since(start) < timeout {
		t.Errorf("the list took %s; the test wants one longer than the timeout", time.Since(start))
	}

	stall := newPager(t, &pager{objects: 30, stallAt: 2})
	ctx, cancel = idle.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err = secretNames(&seen).List(ctx, stall.connect(t, kube.Options{ChunkSize: 10}))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a list whose second page never comes: %v; want context.DeadlineExceeded", err)
	}
}

// On a connection that retains its reads (a watch's), a list is kept:
// read again, it is answered from what was kept, with no request; a
// watch's events change what is kept, and say what changed.
func TestRetainedListIsKeptUpToDate(t *testing.T) {
	p := newPager(t, &pager{objects: 3})
	c := p.connect(t, kube.Options{ChunkSize: 10, Retain: true})
	var seen atomic.Int64
	names := secretNames(&seen)
	ctx := context.Background()
	if _, err := names.List(ctx, c); err != nil {
		t.Fatal(err)
	}
	stores := c.Stores()
	if len(stores) != 1 || stores[0].Listing().ResourceVersion != "7" {
		t.Fatalf("stores %v; want the one list, at its resourceVersion", stores)
	}
	s := stores[0]
	event := func(typ, name string) kube.WatchEvent {
		obj, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": "8"}})
		return kube.WatchEvent{Type: typ, Object: obj}
	}
	for _, tc := range []struct {
		ev      kube.WatchEvent
		changed bool
		want    []string
	}{
		{event("ADDED", "new"), true, []string{"new", "secret-0000", "secret-0001", "secret-0002"}},
		{event("MODIFIED", "new"), false, []string{"new", "secret-0000", "secret-0001", "secret-0002"}}, // nothing kept changed
		{event("DELETED", "secret-0001"), true, []string{"new", "secret-0000", "secret-0002"}},
		{kube.WatchEvent{Type: "BOOKMARK", Object: []byte(`{"metadata":{"resourceVersion":"9"}}`)}, false, []string{"new", "secret-0000", "secret-0002"}},
	} {
		change, changed, err := s.Apply(tc.ev)
		if err != nil || changed != tc.changed {
			t.Errorf("%s: changed %v, %v; want %v", tc.ev.Type, changed, err, tc.changed)
		}
		if changed && tc.ev.Type == "DELETED" && (change.Before != "secret-0001" || change.After != nil) {
			t.Errorf("delete's change %+v; want before and nothing after", change)
		}
		got, err := names.List(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", tc.ev.Type, diff)
		}
	}
	if n := p.requests.Load(); n != 1 {
		t.Errorf("%d requests; want the first list alone", n)
	}
	// Listed again (a watch whose resourceVersion expired): what changed
	// since what was kept, in key order.
	changes, l, err := c.Relist(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, ch := range changes {
		summary = append(summary, fmt.Sprintf("%s %v→%v", ch.Name, ch.Before, ch.After))
	}
	if diff := cmp.Diff([]string{"new new→<nil>", "secret-0001 <nil>→secret-0001"}, summary); diff != "" || l.ResourceVersion != "7" {
		t.Errorf("relist at %s (-want +got):\n%s", l.ResourceVersion, diff)
	}
}

// A Keep's error names the object; a body that is no list is an error,
// not an empty list, and a server's refusal keeps its reason.
func TestBadPagesAreErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       int
		want       func(error) bool
	}{
		{"an object of the wrong type", `{"metadata":{},"items":[{"metadata":{"name":"a","namespace":"ns","labels":"x"}}]}`, 200, func(err error) bool {
			return strings.Contains(err.Error(), "Secret ns/a:")
		}},
		{"not an object", `["items"]`, 200, func(err error) bool { return strings.Contains(err.Error(), "not a list") }},
		{"items not an array", `{"items":{}}`, 200, func(err error) bool { return strings.Contains(err.Error(), "not an array") }},
		{"forbidden", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`, 403, apierrors.IsForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer s.Close()
			p := &pager{Server: s}
			var seen atomic.Int64
			_, err := secretNames(&seen).List(context.Background(), p.connect(t, kube.Options{}))
			if err == nil || !tc.want(err) {
				t.Errorf("err = %v", err)
			}
		})
	}
}
