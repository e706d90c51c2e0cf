package kube

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func streamOf(body string) *Stream {
	s := &Stream{body: io.NopCloser(strings.NewReader(body))}
	s.scanner = bufio.NewScanner(s.body)
	s.scanner.Buffer(make([]byte, 0, 64), MaxWatchEvent)
	return s
}

// A watch stream is read an event per line: the resourceVersion of each
// (bookmarks too) is where a new watch goes on; an ERROR event asks for a
// list (ErrGone), whatever its code; what is no event, or an event past
// MaxWatchEvent, is an error; the end of the body is io.EOF.
func TestStreamEvents(t *testing.T) {
	s := streamOf(`{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}}` + "\n\n" +
		`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}` + "\n")
	for _, want := range []struct{ typ, rv string }{{"ADDED", "5"}, {"BOOKMARK", "9"}} {
		ev, err := s.Next()
		if err != nil || ev.Type != want.typ || s.RV != want.rv {
			t.Fatalf("got %s at %s, %v; want %s at %s", ev.Type, s.RV, err, want.typ, want.rv)
		}
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v, want io.EOF", err)
	}

	for body, want := range map[string]string{
		`{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}}`:                                    `410 "too old"`,
		`{"type":"ERROR","object":{"kind":"Status","code":500,"message":"Internal error occurred: required revision has been compacted"}}`: "500",
		`{"type":"ERROR","object":"what"}`: `what`,
	} {
		_, err := streamOf(body + "\n").Next()
		if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want ErrGone saying %s", body, err, want)
		}
	}
	for body, want := range map[string]string{
		"\x1b[2Jgarbage\n":                     "not a watch event",
		`{"type":"ADDED","object":"x"}` + "\n": "not an object",
		strings.Repeat("x", MaxWatchEvent+1):   "longer than",
	} {
		_, err := streamOf(body).Next()
		if err == nil || errors.Is(err, ErrGone) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v; want an error saying %s", body, err, want)
		}
	}
}
