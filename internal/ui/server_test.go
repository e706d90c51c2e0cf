package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

const testToken = "one-time-token"

// serve starts the handler of a stream with the demo's three tiles on a
// test server, as kubectl fleet ui does on loopback.
func serve(t *testing.T, c Config) (*httptest.Server, *Stream) {
	t.Helper()
	if c.Stream == nil {
		c.Stream = NewStream("e1")
		c.Stream.Update(threeTiles(), watch.Stats{Clusters: 3})
	}
	if c.Token == "" {
		c.Token = testToken
	}
	c.Key = []byte("0123456789abcdef0123456789abcdef")
	c.Port = "1"
	c.LoopbackOnly = true
	if c.DescribeTimeout == 0 {
		c.DescribeTimeout = time.Second
	}
	srv := httptest.NewServer(NewHandler(c))
	t.Cleanup(srv.Close)
	return srv, c.Stream
}

func threeTiles() []Tile {
	return []Tile{
		{Path: "", Root: true, Name: "mom", Health: HealthGood},
		{Path: "aws", Parent: "", Name: "aws", Env: "aws", Health: HealthGood},
		{Path: "aws/team-a", Parent: "aws", Name: "team-a", Env: "aws", Health: HealthBad},
	}
}

// client is a browser's: it keeps cookies and does not follow redirects.
func client(t *testing.T) *http.Client {
	t.Helper()
	return &http.Client{
		Jar:           newJar(t),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
}

func newJar(t *testing.T) http.CookieJar {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return jar
}

func get(t *testing.T, c *http.Client, u string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			// The jar would pick the cookies of that host: a page
			// there that has the cookie anyway is the worst case.
			req.Host = v
			if c.Jar != nil {
				for _, ck := range c.Jar.Cookies(req.URL) {
					req.AddCookie(ck)
				}
			}
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// login exchanges the token as the browser does with the printed address.
func login(t *testing.T, srv *httptest.Server) *http.Client {
	t.Helper()
	c := client(t)
	resp := get(t, c, srv.URL+"/?token="+testToken+"&q=aws", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?q=aws" {
		t.Fatalf("the token's address: %s, Location %q; want 303 to /?q=aws", resp.Status, resp.Header.Get("Location"))
	}
	return c
}

// Without the token or its cookie, nothing is served: not the page, not
// the fleet, not its stream.
func TestNoTokenIsUnauthorized(t *testing.T) {
	srv, _ := serve(t, Config{})
	for _, path := range []string{"/", "/static/app.js", "/api/snapshot", "/api/events", "/api/describe?path=aws", "/?token=wrong"} {
		resp := get(t, client(t), srv.URL+path, nil)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the cookie: %s, want 401", path, resp.Status)
		}
		if strings.Contains(string(body), "team-a") {
			t.Errorf("GET %s without the cookie told of the fleet: %s", path, body)
		}
	}
}

// The printed address's token is exchanged once for an HttpOnly,
// SameSite=Strict cookie, taken out of the address; used again, it lets
// no one in.
func TestTheTokenIsExchangedOnceForTheCookie(t *testing.T) {
	srv, _ := serve(t, Config{})
	c := client(t)
	resp := get(t, c, srv.URL+"/?token="+testToken, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the token's address: %s, want 303", resp.Status)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/" || cookies[0].Name != "kubectl-fleet-ui-1" {
		t.Fatalf("cookie %+v: want one HttpOnly SameSite=Strict cookie kubectl-fleet-ui-1 on /", cookies)
	}
	if loc := resp.Header.Get("Location"); strings.Contains(loc, "token") {
		t.Errorf("redirected to %q: the token stays in the address bar", loc)
	}
	if resp := get(t, c, srv.URL+"/api/snapshot", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("with the cookie: %s, want 200", resp.Status)
	}
	if resp := get(t, client(t), srv.URL+"/?token="+testToken, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the token used a second time: %s, want 401", resp.Status)
	}
}

// A --token-file's token lets API clients in as a bearer token, and the
// browser as often as the address is opened.
func TestTheBearerToken(t *testing.T) {
	srv, _ := serve(t, Config{BearerToken: "from-the-file"})
	if resp := get(t, client(t), srv.URL+"/api/snapshot", map[string]string{"Authorization": "Bearer from-the-file"}); resp.StatusCode != http.StatusOK {
		t.Errorf("with the bearer token: %s, want 200", resp.Status)
	}
	if resp := get(t, client(t), srv.URL+"/api/snapshot", map[string]string{"Authorization": "Bearer other"}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("with another bearer token: %s, want 401", resp.Status)
	}
	for range 2 {
		if resp := get(t, client(t), srv.URL+"/?token=from-the-file", nil); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("the address with the file's token: %s, want 303", resp.Status)
		}
	}
}

// A page of another site is refused, whether it reaches the server under
// its own name (DNS rebinding) or from its own origin, even with the
// cookie.
func TestForeignHostAndCrossOriginAreForbidden(t *testing.T) {
	srv, _ := serve(t, Config{})
	c := login(t, srv)
	for _, tc := range []struct {
		name   string
		header map[string]string
		code   int
	}{
		{"same origin", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": srv.URL}, http.StatusOK},
		{"typed address", map[string]string{"Sec-Fetch-Site": "none"}, http.StatusOK},
		{"localhost", map[string]string{"Host": "localhost:1"}, http.StatusOK},
		{"foreign Host", map[string]string{"Host": "evil.example:1"}, http.StatusForbidden},
		{"foreign Host, no port", map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{"cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"same-site", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"foreign Origin", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
	} {
		for _, path := range []string{"/", "/api/snapshot", "/static/app.js"} {
			if resp := get(t, c, srv.URL+path, tc.header); resp.StatusCode != tc.code {
				t.Errorf("%s: GET %s: %s, want %d", tc.name, path, resp.Status, tc.code)
			}
		}
	}
}

// No route takes a method other than GET and HEAD: the UI never writes.
func TestOnlyGetAndHead(t *testing.T) {
	srv, _ := serve(t, Config{})
	c := login(t, srv)
	for _, path := range []string{"/", "/?token=" + testToken, "/static/app.js", "/api/snapshot", "/api/events", "/api/describe", "/api/reconcile", "/nothing"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, "PROPFIND"} {
			req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %s, Allow %q; want 405, GET, HEAD", method, path, resp.Status, resp.Header.Get("Allow"))
			}
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodHead, srv.URL+"/api/snapshot", http.NoBody)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("HEAD /api/snapshot: %s, want 200", resp.Status)
		}
	}
}

// The page's files are served, their directories not listed.
func TestStaticFilesAreNotListed(t *testing.T) {
	srv, _ := serve(t, Config{})
	c := login(t, srv)
	for path, code := range map[string]int{"/static/app.js": 200, "/static/vendor/d3-hierarchy.min.js": 200, "/static/": 404, "/static/vendor/": 404, "/static/nothing.js": 404} {
		if resp := get(t, c, srv.URL+path, nil); resp.StatusCode != code {
			t.Errorf("GET %s: %s, want %d", path, resp.Status, code)
		}
	}
}

// Every answer carries the strict policy: the page's own scripts only.
func TestContentSecurityPolicy(t *testing.T) {
	srv, _ := serve(t, Config{})
	c := login(t, srv)
	for _, path := range []string{"/", "/static/app.js", "/api/snapshot", "/nothing"} {
		resp := get(t, c, srv.URL+path, nil)
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v", path, resp.Header)
		}
	}
}

// The page is the embedded one, and holds no inline script nor handler:
// what the policy would refuse.
func TestThePageHasNoInlineScript(t *testing.T) {
	srv, _ := serve(t, Config{})
	resp := get(t, login(t, srv), srv.URL+"/", nil)
	body, _ := io.ReadAll(resp.Body)
	page := string(body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `<canvas id="map"`) {
		t.Fatalf("GET /: %s\n%s", resp.Status, page)
	}
	for _, bad := range []string{"<script>", " onclick=", " onload=", " onerror=", "style=", "javascript:", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if n := strings.Count(page, "<script "); n != strings.Count(page, `<script src="/static/`) {
		t.Errorf("the page has %d scripts, not all its own files", n)
	}
}

// The snapshot is the stream's document: every tile, parents first.
func TestSnapshot(t *testing.T) {
	srv, _ := serve(t, Config{})
	resp := get(t, login(t, srv), srv.URL+"/api/snapshot", nil)
	var doc Document
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.ID != "e1.1" || len(doc.Tiles) != 3 || doc.Tiles[2].Path != "aws/team-a" || doc.Stats.Clusters != 3 {
		t.Errorf("snapshot %+v", doc)
	}
}

// describe answers what the command behind it says, or its error.
func TestDescribe(t *testing.T) {
	srv, _ := serve(t, Config{Describe: func(_ context.Context, path string) (any, error) {
		if path == "gone" {
			return nil, errors.New(`no cluster "gone"`)
		}
		return map[string]string{"path": path}, nil
	}})
	c := login(t, srv)
	resp := get(t, c, srv.URL+"/api/describe?path="+url.QueryEscape("aws/team-a"), nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != `{"path":"aws/team-a"}` {
		t.Errorf("describe aws/team-a: %s %s", resp.Status, body)
	}
	resp = get(t, c, srv.URL+"/api/describe?path=gone", nil)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), `no cluster \"gone\"`) {
		t.Errorf("describe gone: %s %s", resp.Status, body)
	}
}

// sse reads server-sent events from a response.
type sse struct {
	r *bufio.Reader
}

type sseEvent struct {
	name, id, data string
}

func (s *sse) next(t *testing.T) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev.name != "" || ev.data != "" {
				return ev
			}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// open opens the stream, after lastID when not "", and reads it until
// the test ends.
func open(t *testing.T, c *http.Client, srv *httptest.Server, lastID string) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events", http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := (&http.Client{Jar: c.Jar}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /api/events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	return &sse{r: bufio.NewReader(resp.Body)}
}

// A page gets a snapshot, then the changes; reconnecting with the last id
// it got, it gets what came after, in order, and no snapshot: nothing is
// lost, nothing is sent twice. An id of another process (a restart) or
// older than the stream keeps gets a snapshot.
// A server still walking the fleet (just started, or started again under
// a page) answers the page's stream once the walk is in: the page keeps
// the map it has, rather than getting an empty one.
func TestTheStreamWaitsForTheWalk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stream := NewStream("e1")
		h := NewHandler(Config{Stream: stream, BearerToken: "bearer", Key: []byte("0123456789abcdef0123456789abcdef"), Port: "1", LoopbackOnly: true})
		ctx, cancel := context.WithCancel(t.Context())
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/api/events", http.NoBody)
		req.Header.Set("Authorization", "Bearer bearer")
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(rec, req)
		}()
		synctest.Wait()
		if rec.Body.Len() != 0 {
			t.Errorf("the stream answered before the walk was in: %q", rec.Body.String())
		}
		stream.Update(threeTiles(), watch.Stats{Clusters: 3})
		synctest.Wait()
		if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, "event: snapshot") || !strings.Contains(body, `"aws/team-a"`) {
			t.Errorf("after the walk: %d %q, want the snapshot of the three tiles", rec.Code, body)
		}
		cancel()
		<-done
	})
}

func TestTheStreamResumesAfterAReconnect(t *testing.T) {
	srv, stream := serve(t, Config{})
	c := login(t, srv)
	first := open(t, c, srv, "")
	ev := first.next(t)
	var doc Document
	if err := json.Unmarshal([]byte(ev.data), &doc); err != nil || ev.name != "snapshot" || ev.id != "e1.1" || len(doc.Tiles) != 3 {
		t.Fatalf("first event %s %s: %+v (%v)", ev.name, ev.id, doc, err)
	}
	tiles := threeTiles()
	tiles[2].Health = HealthGood
	stream.Update(tiles, watch.Stats{Clusters: 3})
	ev = first.next(t)
	var b Batch
	if err := json.Unmarshal([]byte(ev.data), &b); err != nil || ev.name != "batch" || ev.id != "e1.2" || len(b.Tiles) != 1 || b.Tiles[0].Health != HealthGood {
		t.Fatalf("second event %s %s: %+v (%v)", ev.name, ev.id, b, err)
	}

	// The page loses its connection; two changes come meanwhile.
	stream.Add(watch.Event{Path: "aws/team-b", Kind: watch.KindCluster, Name: "team-b", Change: watch.Added})
	stream.Update(append(tiles, Tile{Path: "aws/team-b", Parent: "aws", Name: "team-b", Health: HealthWarn}), watch.Stats{Clusters: 4})
	stream.Update(tiles, watch.Stats{Clusters: 3})
	again := open(t, c, srv, "e1.2")
	for i, want := range []struct{ id, added, removed string }{{"e1.3", "aws/team-b", ""}, {"e1.4", "", "aws/team-b"}} {
		ev := again.next(t)
		var b Batch
		if err := json.Unmarshal([]byte(ev.data), &b); err != nil || ev.name != "batch" || ev.id != want.id {
			t.Fatalf("after the reconnect, event %d: %s %s %s (%v)", i, ev.name, ev.id, ev.data, err)
		}
		if want.added != "" && (len(b.Tiles) != 1 || b.Tiles[0].Path != want.added || len(b.Events) != 1 || b.Events[0].Name != "team-b") {
			t.Errorf("batch %s: %+v, want %s added with its event", ev.id, b, want.added)
		}
		if want.removed != "" && (len(b.Removed) != 1 || b.Removed[0] != want.removed) {
			t.Errorf("batch %s: %+v, want %s removed", ev.id, b, want.removed)
		}
	}
	for _, id := range []string{"other.2", "e1.99", "garbage"} {
		if ev := open(t, c, srv, id).next(t); ev.name != "snapshot" || ev.id != "e1.4" {
			t.Errorf("reconnecting with %q: %s %s, want a snapshot e1.4", id, ev.name, ev.id)
		}
	}
}
