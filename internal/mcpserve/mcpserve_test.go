package mcpserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An HTTP server other hosts can reach is HTTPS with a token, or refused.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string // "" for valid
	}{
		{"stdio", Options{Transport: TransportStdio}, ""},
		{"stdio with a listen address", Options{Transport: TransportStdio, Listen: "127.0.0.1:1"}, "are for --transport http"},
		{"loopback", Options{Transport: TransportHTTP, Listen: "127.0.0.1:0"}, ""},
		{"localhost", Options{Transport: TransportHTTP, Listen: "localhost:8080"}, ""},
		{"IPv6 loopback", Options{Transport: TransportHTTP, Listen: "[::1]:8080"}, ""},
		{"every address", Options{Transport: TransportHTTP, Listen: ":8080"}, "without TLS and a token"},
		{"a public address", Options{Transport: TransportHTTP, Listen: "0.0.0.0:8443"}, "without TLS and a token"},
		{"TLS without a token", Options{Transport: TransportHTTP, Listen: "0.0.0.0:8443", TLSCertFile: "c", TLSKeyFile: "k"}, "without TLS and a token"},
		{"a token without TLS", Options{Transport: TransportHTTP, Listen: "0.0.0.0:8443", TokenFile: "t"}, "without TLS and a token"},
		{"TLS and a token", Options{Transport: TransportHTTP, Listen: "0.0.0.0:8443", TLSCertFile: "c", TLSKeyFile: "k", TokenFile: "t"}, ""},
		{"a certificate without its key", Options{Transport: TransportHTTP, Listen: "127.0.0.1:0", TLSCertFile: "c"}, "go together"},
		{"no port", Options{Transport: TransportHTTP, Listen: "127.0.0.1"}, "HOST:PORT"},
		{"another transport", Options{Transport: "sse"}, "use stdio or http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// A request without the token, or with another, gets 401 and never
// reaches the server.
func TestRequireToken(t *testing.T) {
	reached := 0
	h := requireToken("s3cret", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached++ }))
	for _, tc := range []struct {
		header string
		code   int
	}{{"", 401}, {"Bearer guess", 401}, {"s3cret", 401}, {"Bearer s3cret ", 401}, {"Basic s3cret", 401}, {"Bearer s3cret", 200}} {
		r := httptest.NewRequest(http.MethodPost, Path, http.NoBody)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.code {
			t.Errorf("Authorization %q: %d, want %d", tc.header, w.Code, tc.code)
		}
		if tc.code == 401 && w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %q: 401 without WWW-Authenticate", tc.header)
		}
	}
	if reached != 1 {
		t.Errorf("the server was reached %d times, want once", reached)
	}
	if requireToken("", http.NotFoundHandler()) == nil {
		t.Error("no handler without a token")
	}
}

// Pages cover every item once; a cursor is ours or refused.
func TestPaging(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, DefaultLimit}, {1, 1}, {MaxLimit + 1, MaxLimit}} {
		if got, err := Limit(tc.in); err != nil || got != tc.want {
			t.Errorf("Limit(%d) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if _, err := Limit(-1); err == nil {
		t.Error("a negative limit was taken")
	}
	const total = 7
	seen := 0
	cursor := ""
	for range total {
		offset, err := Offset(cursor)
		if err != nil {
			t.Fatal(err)
		}
		from, to, next := Page(total, offset, 3)
		if from != seen {
			t.Fatalf("page from %d, want %d", from, seen)
		}
		seen = to
		if cursor = next; cursor == "" {
			break
		}
	}
	if seen != total {
		t.Errorf("pages covered %d of %d", seen, total)
	}
	for _, bad := range []string{"x", "b2Zmc2V0Oi0x", "\x1b[2J"} {
		if _, err := Offset(bad); err == nil || strings.ContainsRune(err.Error(), '\x1b') {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

// Safe escapes every string, keys included, and bounds the escaped result.
func TestSafe(t *testing.T) {
	type doc struct {
		Message string            `json:"message"`
		Labels  map[string]string `json:"labels"`
	}
	got, err := Safe[map[string]any](doc{Message: "ok\x1b[2J\u202e", Labels: map[string]string{"k\x07": "v\n"}}, "narrow")
	if err != nil {
		t.Fatal(err)
	}
	if got["message"] != `ok\x1b[2J\u202e` {
		t.Errorf("message %q", got["message"])
	}
	labels := got["labels"].(map[string]any)
	if labels[`k\a`] != `v\n` {
		t.Errorf("labels %q", labels)
	}
	// Under the bound raw, over it escaped: refused, saying what to narrow.
	big := strings.Repeat("\u202e", MaxResultBytes/4) // 3 bytes raw, 7 escaped
	if _, err := Safe[map[string]any](doc{Message: big}, "ask for less"); err == nil || !strings.Contains(err.Error(), "ask for less") {
		t.Errorf("an escaped result over the bound: %v", err)
	}
}
