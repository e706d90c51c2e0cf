package cmd

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// withRedactingLogger puts a logger into ctx that client-go uses for its
// request logs (it logs through klog.FromContext). From -v=8 on, client-go
// logs HTTP bodies, and the body of a Secret is a kubeconfig, keys and all:
// such bodies are replaced before they are written. Everything else logs as
// klog would.
func withRedactingLogger(ctx context.Context) context.Context {
	return klog.NewContext(ctx, redactingLogger())
}

// redactingLogger is the logger withRedactingLogger puts into a context.
// Making one initialises klog's shared sink, which is not safe for two at
// once (commands run in one process, as the tests and the MCP server run
// them): it is made once.
var redactingLogger = sync.OnceValue(func() logr.Logger {
	return logr.New(&redactingSink{sink: klog.Background().GetSink()})
})

// redactingSink forwards to klog's sink, redacting HTTP bodies that hold a
// Secret, or that are binary and cannot be checked.
type redactingSink struct {
	sink logr.LogSink
}

var (
	_ logr.LogSink          = &redactingSink{}
	_ logr.CallDepthLogSink = &redactingSink{}
)

func (s *redactingSink) Init(info logr.RuntimeInfo) {
	info.CallDepth++
	s.sink.Init(info)
}

func (s *redactingSink) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s *redactingSink) Info(level int, msg string, kv ...any) {
	s.sink.Info(level, redactUserinfo(msg), redact(msg, kv)...)
}

// bodyReadError is what client-go logs, at every verbosity, when a
// response body could not be read to its end: the request it belongs to
// fails with that error, which the command reports on its cluster.
const bodyReadError = "Unexpected error when reading response body"

func (s *redactingSink) Error(err error, msg string, kv ...any) {
	if msg == bodyReadError && !s.sink.Enabled(1) {
		return // said once, on the cluster, not again as a log line (-v=1 shows it)
	}
	if err != nil {
		err = errors.New(redactUserinfo(err.Error()))
	}
	s.sink.Error(err, redactUserinfo(msg), redact(msg, kv)...)
}

func (s *redactingSink) WithValues(kv ...any) logr.LogSink {
	return &redactingSink{sink: s.sink.WithValues(kv...)}
}

func (s *redactingSink) WithName(name string) logr.LogSink {
	return &redactingSink{sink: s.sink.WithName(name)}
}

func (s *redactingSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.sink.(logr.CallDepthLogSink); ok {
		return &redactingSink{sink: cd.WithCallDepth(depth)}
	}
	return s
}

// userinfoRE matches the user information of a URL (user:password@).
var userinfoRE = regexp.MustCompile(`(?i)([a-z][a-z0-9+.-]*://)[^/@\s'"]+@`)

// redactUserinfo drops user:password@ from every URL in s: client-go logs
// request URLs, and a curl command line at -v=9.
func redactUserinfo(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfoRE.ReplaceAllString(s, "${1}")
}

// redact replaces the "body" value of client-go's "Request Body" and
// "Response Body" messages when it may carry Secret data.
func redact(msg string, kv []any) []any {
	out := append([]any(nil), kv...)
	for i, v := range out {
		if s, ok := v.(string); ok {
			out[i] = redactUserinfo(s)
		}
	}
	if !strings.HasSuffix(msg, " Body") {
		return out
	}
	for i := 0; i+1 < len(out); i += 2 {
		if out[i] != "body" {
			continue
		}
		body := fmt.Sprint(out[i+1])
		if mayHoldSecret(body) {
			out[i+1] = fmt.Sprintf("[%d bytes redacted by kubectl fleet: the body may hold Secret data]", len(body))
		}
	}
	return out
}

// mayHoldSecret is true for a body that mentions a Secret kind, and for a
// hex dump (client-go's rendering of a binary body), whose content cannot
// be checked.
func mayHoldSecret(body string) bool {
	return strings.Contains(body, "Secret") || strings.HasPrefix(body, "00000000  ")
}
