package cmd

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"
)

// recordingSink records the messages of the errors it is given, at a
// verbosity.
type recordingSink struct {
	v      int
	errors []string
}

func (r *recordingSink) Init(logr.RuntimeInfo)               {}
func (r *recordingSink) Enabled(level int) bool              { return level <= r.v }
func (r *recordingSink) Info(int, string, ...any)            {}
func (r *recordingSink) Error(_ error, msg string, _ ...any) { r.errors = append(r.errors, msg) }
func (r *recordingSink) WithValues(...any) logr.LogSink      { return r }
func (r *recordingSink) WithName(string) logr.LogSink        { return r }

// client-go's line for a response body cut short (a request timed out, a
// response too large) is left out unless -v asks for logs: the request's
// error says it on its cluster. Other errors always show.
func TestBodyReadErrorsShowOnlyWithVerbosity(t *testing.T) {
	for v, want := range map[int]int{0: 1, 1: 2} {
		rec := &recordingSink{v: v}
		s := &redactingSink{sink: rec}
		s.Error(errors.New("context deadline exceeded"), bodyReadError)
		s.Error(errors.New("boom"), "something else")
		if len(rec.errors) != want {
			t.Errorf("-v=%d: logged %v; want %d lines", v, rec.errors, want)
		}
	}
}
