package kube

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Listing is a list of a kind and selectors at a resourceVersion: what a
// Store keeps, and where a watch of the same objects starts, with no
// second list.
type Listing struct {
	GVK schema.GroupVersionKind
	// Namespace is empty for every namespace.
	Namespace                    string
	LabelSelector, FieldSelector string
	// Metadata lists and watches the objects' metadata only.
	Metadata bool
	// ResourceVersion is the list's: the state it showed.
	ResourceVersion string
}

// Key names what l lists: its kind, namespace and selectors.
func (l Listing) Key() string {
	key := l.GVK.String() + "|" + l.Namespace + "|" + l.LabelSelector + "|" + l.FieldSelector
	if l.Metadata {
		key += "|metadata"
	}
	return key
}

// request is a GET of l's collection, with its selectors.
func (c *Conn) request(l Listing) (*rest.Request, error) {
	if c.rest == nil || c.mapper == nil {
		return nil, fmt.Errorf("cannot watch %s: the connection has no apiserver to stream from (a client alone, or an in-memory cluster)", RedactURL(c.cfg.Host))
	}
	r, err := c.collection(l.GVK, l.Namespace)
	if err != nil {
		return nil, err
	}
	if l.LabelSelector != "" {
		r = r.Param("labelSelector", l.LabelSelector)
	}
	if l.FieldSelector != "" {
		r = r.Param("fieldSelector", l.FieldSelector)
	}
	if l.Metadata {
		r = r.SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	}
	return r, nil
}

// MaxWatchEvent bounds one event of a watch stream: an object is at most
// 1.5 MiB in etcd, a little more as JSON.
const MaxWatchEvent = 8 << 20

// WatchEvent is one event of a watch stream, its object as JSON.
type WatchEvent struct {
	// Type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// ErrGone marks a watch that cannot go on from its resourceVersion: the
// apiserver no longer has it (410 Gone, as a response or as an ERROR
// event), or it ended the watch with another ERROR event (an apiserver
// without a watch cache reports etcd's compaction as an internal error).
// As client-go's reflector does, list again.
var ErrGone = errors.New("the watch cannot go on from its resourceVersion")

// Stream is an open watch.
type Stream struct {
	body    io.ReadCloser
	scanner *bufio.Scanner
	// RV is the resourceVersion of the last event read, bookmarks
	// included: where a new watch goes on.
	RV string
}

// Watch opens a watch of l's objects from l.ResourceVersion, with
// bookmarks, that the apiserver ends after timeout. The stream shares the
// connection's transport (one HTTP/2 connection), its bound on a
// response's bytes, and its redirect policy.
func (c *Conn) Watch(ctx context.Context, l Listing, timeout time.Duration) (*Stream, error) {
	req, err := c.request(l)
	if err != nil {
		return nil, err
	}
	body, err := req.Param("watch", "true").
		Param("resourceVersion", l.ResourceVersion).
		Param("allowWatchBookmarks", "true").
		Param("timeoutSeconds", strconv.Itoa(int(timeout.Seconds()))).
		Stream(ctx)
	if err != nil {
		if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
			return nil, fmt.Errorf("%w: %w", ErrGone, err)
		}
		return nil, err
	}
	s := &Stream{body: body, scanner: bufio.NewScanner(body), RV: l.ResourceVersion}
	// Small to start with: a fleet holds thousands of idle streams, and
	// the scanner grows the buffer to an event's size.
	s.scanner.Buffer(make([]byte, 0, 512), MaxWatchEvent)
	return s, nil
}

// Next reads the next event: io.EOF when the apiserver ended the watch,
// ErrGone for an expired resourceVersion, another error for a stream that
// is broken, too large or not a watch stream. The apiserver writes one
// event per line.
func (s *Stream) Next() (WatchEvent, error) {
	var ev WatchEvent
	for {
		if !s.scanner.Scan() {
			if err := s.scanner.Err(); err != nil {
				if errors.Is(err, bufio.ErrTooLong) {
					return ev, fmt.Errorf("a watch event longer than %d bytes", MaxWatchEvent)
				}
				return ev, err
			}
			return ev, io.EOF
		}
		line := s.scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		ev = WatchEvent{}
		if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
			return ev, fmt.Errorf("not a watch event: %s", snippet(line))
		}
		if ev.Type == "ERROR" {
			var st metav1.Status
			if err := json.Unmarshal(ev.Object, &st); err != nil || st.Message == "" {
				return ev, fmt.Errorf("%w: %s", ErrGone, snippet(ev.Object))
			}
			return ev, fmt.Errorf("%w: %d %s", ErrGone, st.Code, strconv.Quote(st.Message))
		}
		var meta struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(ev.Object, &meta); err != nil {
			return ev, fmt.Errorf("a watch event's object is not an object: %s", snippet(ev.Object))
		}
		if meta.Metadata.ResourceVersion != "" {
			s.RV = meta.Metadata.ResourceVersion
		}
		return ev, nil
	}
}

// Close ends the watch.
func (s *Stream) Close() error { return s.body.Close() }

// snippet is the start of a body, for an error.
func snippet(b []byte) string {
	const n = 80
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "…"
	}
	return strconv.Quote(string(b))
}
