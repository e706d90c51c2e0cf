package ui

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/httpserve"
)

//go:embed web
var web embed.FS

// Config is what the handler serves and how it lets a browser in.
type Config struct {
	// Stream is the fleet.
	Stream *Stream
	// Token is the one-time token of the URL printed: exchanged once for
	// the session cookie. BearerToken, when set (--token-file), is
	// accepted as an Authorization: Bearer token and, in the URL, as
	// often as it is given.
	Token, BearerToken string
	// Key signs the session cookie; kept across runs, a page survives
	// a restart of the server on the same address.
	Key []byte
	// Port names the cookie: a browser keeps one cookie per host, not
	// per port, and two servers on two ports must not share one.
	Port string
	// LoopbackOnly accepts only requests whose Host is this machine's
	// (DNS rebinding): the server listens on loopback.
	LoopbackOnly bool
	// Secure marks the cookie Secure: the server serves HTTPS.
	Secure bool
	// Describe is what describe -o json says of the cluster at path.
	Describe func(ctx context.Context, path string) (any, error)
	// DescribeTimeout bounds a describe.
	DescribeTimeout time.Duration
}

// The page's content security policy: its own scripts, styles and
// connections only; no inline script, no frame, no form, no plugin.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// heartbeat is how often an idle stream says it is alive, so that
// proxies and the browser do not take it for dead.
const heartbeat = 15 * time.Second

// handler is the server's: every route GET (and HEAD), behind the checks.
type handler struct {
	Config
	session string
	bearer  httpserve.Secret
	once    httpserve.Secret
	mu      sync.Mutex
	used    bool
	files   http.Handler
}

// NewHandler returns the UI's handler: the page, its files, the fleet's
// snapshot, its stream of changes and describe, read-only, to a browser
// that has exchanged the token for the session cookie.
func NewHandler(c Config) http.Handler {
	mac := hmac.New(sha256.New, c.Key)
	mac.Write([]byte("kubectl-fleet ui session"))
	static, _ := fs.Sub(web, "web")
	h := &handler{Config: c, session: hex.EncodeToString(mac.Sum(nil)), once: httpserve.NewSecret(c.Token),
		bearer: httpserve.NewSecret(c.BearerToken), files: http.FileServerFS(static)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.index)
	mux.Handle("GET /static/", http.StripPrefix("/static/", noListing(h.files)))
	mux.HandleFunc("GET /api/snapshot", h.snapshot)
	mux.HandleFunc("GET /api/events", h.events)
	mux.HandleFunc("GET /api/describe", h.describe)
	return h.headers(h.methods(h.hosts(h.origins(h.auth(mux)))))
}

// cookie is the session cookie's name, per port.
func (h *handler) cookie() string { return "kubectl-fleet-ui-" + h.Port }

// headers sets what every answer carries: the policy, no sniffing, no
// referrer, no framing, no caching.
func (h *handler) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", contentSecurityPolicy)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// methods refuses every method but GET and HEAD: the UI never writes.
func (h *handler) methods(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: kubectl fleet ui is read-only", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hosts refuses, on loopback, a Host that is not this machine's: a page
// of another site that resolves its name to 127.0.0.1 (DNS rebinding)
// reaches the server, but with its own name.
func (h *handler) hosts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.LoopbackOnly {
			host := r.Host
			if hn, _, err := net.SplitHostPort(host); err == nil {
				host = hn
			}
			if !httpserve.Loopback(strings.Trim(host, "[]")) {
				http.Error(w, "forbidden: the Host header names another machine (open the address kubectl fleet ui printed)", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// origins refuses requests another site's page makes: the browser says
// so in Sec-Fetch-Site, or in an Origin that is not the server's. A
// request from no page (the address typed, curl) says neither.
func (h *handler) origins(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site := r.Header.Get("Sec-Fetch-Site")
		origin := r.Header.Get("Origin")
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if site != "" && site != "same-origin" && site != "none" || origin != "" && origin != scheme+"://"+r.Host {
			http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// auth lets in a browser with the session cookie, a client with the
// bearer token, and the URL with the token, which it exchanges for the
// cookie and takes out of the address.
func (h *handler) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token := r.URL.Query().Get("token"); token != "" && r.URL.Path == "/" {
			if !h.exchange(token) {
				http.Error(w, "unauthorized: this token was used or is not this server's: run kubectl fleet ui again for a new address", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: h.cookie(), Value: h.session, Path: "/", HttpOnly: true, Secure: h.Secure, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			to := url.URL{Path: "/", RawQuery: q.Encode()}
			http.Redirect(w, r, to.String(), http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(h.cookie()); err == nil && hmac.Equal([]byte(c.Value), []byte(h.session)) {
			next.ServeHTTP(w, r)
			return
		}
		if got, ok := httpserve.Bearer(r); ok && h.BearerToken != "" && h.bearer.Matches(got) {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, "unauthorized: open the address kubectl fleet ui printed, with its token", http.StatusUnauthorized)
	})
}

// exchange reports whether token lets a browser in: the one-time token,
// the first time, or the bearer token.
func (h *handler) exchange(token string) bool {
	if h.BearerToken != "" && h.bearer.Matches(token) {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.used || h.Token == "" || !h.once.Matches(token) {
		return false
	}
	h.used = true
	return true
}

// noListing answers 404 for a directory: the page's files are served,
// not listed.
func noListing(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *handler) index(w http.ResponseWriter, r *http.Request) {
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/"
	h.files.ServeHTTP(w, r2)
}

func (h *handler) snapshot(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, h.Stream.Document())
}

// describe answers what describe -o json says of the cluster at ?path=.
func (h *handler) describe(w http.ResponseWriter, r *http.Request) {
	if h.Describe == nil {
		writeJSON(w, http.StatusNotImplemented, map[string]string{"error": "describe is not served"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.DescribeTimeout)
	defer cancel()
	d, err := h.Describe(ctx, r.URL.Query().Get("path"))
	if err != nil {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// events is the stream: a snapshot first, unless the page says the last
// id it has (Last-Event-ID, which a browser's EventSource sends when it
// reconnects, or ?since=) and the stream still holds what came after;
// then every batch, in order, as it comes.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	// A server still walking the fleet (just started, or started again
	// under a page) has no map to give: the stream answers once the walk
	// is in, and the page keeps the map it has, saying it is connecting.
	select {
	case <-h.Stream.Ready():
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("since")
	}
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		batches, next, ok := h.Stream.Since(last)
		if !ok {
			doc := h.Stream.Document()
			if err := sendEvent(w, "snapshot", doc.ID, doc); err != nil {
				return
			}
			last = doc.ID
			continue
		}
		for _, b := range batches {
			if err := sendEvent(w, "batch", b.ID, b); err != nil {
				return
			}
			last = b.ID
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-next:
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": alive\n\n"); err != nil {
				return
			}
		}
	}
}

// sendEvent writes one server-sent event: its name, id and JSON data,
// on one line (JSON holds no newline).
func sendEvent(w http.ResponseWriter, name, id string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if strings.ContainsAny(id, "\r\n") {
		return errors.New("an event id holds a newline")
	}
	_, err = fmt.Fprintf(w, "event: %s\nid: %s\ndata: %s\n\n", name, id, data)
	return err
}
