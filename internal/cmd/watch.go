package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-fleet/kubectl-fleet/internal/drift"
	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/reach"
	"github.com/kubectl-fleet/kubectl-fleet/internal/screen"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

const flagWatch = "watch"

// WatchFlags are --watch of tree, list and drift.
type WatchFlags struct {
	Watch bool
}

// AddFlags registers -w/--watch.
func (w *WatchFlags) AddFlags(f *pflag.FlagSet, what string) {
	f.BoolVarP(&w.Watch, flagWatch, "w", false, "After the walk, watch every cluster and show "+what+" as it changes: a live screen on a terminal, JSON Lines otherwise or with -o json (see docs/watch.md); Ctrl-C ends it")
}

// validateWatch checks that --watch comes with an output it can stream.
func (w *WatchFlags) validateWatch(output string, streams ...string) error {
	if !w.Watch {
		return nil
	}
	for _, s := range streams {
		if output == s {
			return nil
		}
	}
	return fmt.Errorf("--%s cannot be used with -o %s: use -o json for a stream of changes", flagWatch, output)
}

// screen says whether a watch draws the live screen, and how: on a
// terminal, unless -o json asks for the stream.
func (o *RootOptions) screen(output string, showDrift bool) (screen.Options, bool) {
	if output == outputJSON || !isTerminal(o.Out) {
		return screen.Options{}, false
	}
	return screen.Options{Color: o.useColor(o.Out), Drift: showDrift, Describe: o.describeText, Presentation: o.presentation(), Edges: o.Providers.EdgeKinds()}, true
}

// watchOnScreen runs the watch under the live screen until the person
// quits (q, Ctrl-C) or ctx ends.
func (o *RootOptions) watchOnScreen(ctx context.Context, res *fleet.Result[*reach.Cluster], opts fleet.Options, more []fleet.Probe[*reach.Cluster], analyze func(*fleet.Node), so screen.Options) error {
	wctx, cancel := context.WithCancel(ctx)
	w := watch.New(res, watch.Options[*reach.Cluster]{Walk: o.withProviders(opts), Probes: o.probesWith(more), Analyze: analyze})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(wctx)
	}()
	err := screen.Run(ctx, o.In, o.Out, w, so)
	cancel()
	<-done
	return err
}

// describeText is what `kubectl fleet describe PATH` prints, for the live
// screen: in colour when the screen is.
func (o *RootOptions) describeText(ctx context.Context, path string) (string, error) {
	out, err := o.describeAs(ctx, path, "", o.useColor(o.Out))
	return string(out), err
}

// describeAs runs `kubectl fleet describe PATH -o output` and returns what
// it prints, or its error with what it said on stderr.
func (o *RootOptions) describeAs(ctx context.Context, path, output string, color bool) ([]byte, error) {
	var out, errOut bytes.Buffer
	ro := *o
	ro.IOStreams = genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	if color {
		ro.Color = colorAlways
	}
	d := &DescribeOptions{RootOptions: &ro, WalkFlags: NewWalkFlags(), Grouping: true, Output: output}
	if err := d.Complete([]string{path}); err != nil {
		return nil, err
	}
	if err := d.Run(ctx); err != nil && out.Len() == 0 {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	return out.Bytes(), nil
}

// watchFleet keeps res up to date until ctx ends, writing each change of
// the fleet that keep lets through as a line of JSON on o.Out, or on a
// terminal without -o json, drawing the live screen. analyze, when set,
// finds the drift of a cluster that changed.
func (o *RootOptions) watchFleet(ctx context.Context, res *fleet.Result[*reach.Cluster], opts fleet.Options, more []fleet.Probe[*reach.Cluster], analyze func(*fleet.Node), keep func(watch.Event) bool, output string) error {
	if screenOpts, live := o.screen(output, analyze != nil); live {
		return o.watchOnScreen(ctx, res, opts, more, analyze, screenOpts)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := &eventWriter{w: o.Out, failed: cancel}
	w := watch.New(res, watch.Options[*reach.Cluster]{
		Walk: o.withProviders(opts), Probes: o.probesWith(more), Analyze: analyze,
		Emit: func(ev watch.Event) {
			if keep == nil || keep(ev) {
				lines.write(ev)
			}
		},
	})
	err := w.Run(ctx)
	if werr := lines.error(); werr != nil {
		return werr // the reader went away
	}
	return err // interrupted: Execute says so
}

// eventWriter writes events as JSON Lines, escaped as every output of a
// cluster's strings is. The first error of the output (a closed pipe: the
// reader is gone) is kept, and ends the watch through failed.
type eventWriter struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	failed func()
}

func (e *eventWriter) write(ev watch.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return
	}
	data, err := json.Marshal(escape.Copy(ev))
	if err != nil {
		e.err = fmt.Errorf("failed to encode an event: %w", err)
		e.failed()
		return
	}
	if _, err := e.w.Write(append(data, '\n')); err != nil {
		e.err = fmt.Errorf("failed to write an event: %w", err)
		e.failed()
	}
}

func (e *eventWriter) error() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// watchView watches the fleet res walked with opts and the view's probes:
// JSON Lines of the events keep lets through (nil: all), or the live
// screen. With --drift, a cluster that changed has its drift found again.
func (v *ViewFlags) watchView(ctx context.Context, o *RootOptions, res *fleet.Result[*reach.Cluster], opts fleet.Options, output string, keep func(watch.Event) bool) error {
	var analyze func(*fleet.Node)
	if v.Drift {
		analyze = func(n *fleet.Node) { drift.Find([]*fleet.Node{n}, v.options(time.Now())) }
	}
	return o.watchFleet(ctx, res, opts, v.probes(), analyze, keep, output)
}
