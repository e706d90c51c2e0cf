package screen

import (
	"context"
	"fmt"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/kubectl-fleet/kubectl-fleet/internal/fleet"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// DefaultMark is how long a changed row stays marked when Options.Mark is
// zero: long enough to be seen from the corner of an eye, short enough
// that the marks still say what moves now.
const DefaultMark = 5 * time.Second

// quitWait is how long Run waits for the program to quit when its
// context is done before it kills it.
const quitWait = 500 * time.Millisecond

// Options control the live screen.
type Options struct {
	// Color turns on ANSI colours and reverse video for the selection;
	// callers decide it once from the --color flag, NO_COLOR and the
	// terminal. Without it the screen writes no colour at all, and marks
	// the selection with "> ".
	Color bool
	// Drift draws the clusters' drift findings from the start; `d`
	// shows or hides them (render.Options.Drift).
	Drift bool
	// Git draws under each cluster the file of the checkout that
	// declares it (render.Options.Git).
	Git bool
	// Presentation is what the integrations draw
	// (render.Options.Presentation).
	Presentation fleet.Presentation
	// Edges are the inventories' kinds of edge (render.Options.Edges).
	Edges []fleet.EdgeKind
	// Describe returns what `kubectl fleet describe` prints of the
	// cluster at path ("" is the root), already escaped for the
	// terminal; enter shows it. Nil: enter says describe is not
	// available.
	Describe func(ctx context.Context, path string) (string, error)
	// Now is the clock of the marks and of the status line's ages;
	// time.Now when nil.
	Now func() time.Time
	// Mark is how long a changed row stays marked; DefaultMark when
	// zero.
	Mark time.Duration
}

// Run shows the feed on the terminal in (keys) and out (the screen), in
// the alternate screen, until q or Ctrl-C is pressed, the feed's Updates
// channel is closed, or ctx is done; then it restores the terminal. It
// returns nil when the person or the feed ended it, and ctx's cause when
// ctx did.
//
// The caller turns signals into ctx's cancellation: Run leaves the
// process's signal handling alone, and SIGINT ends it only through ctx.
// In raw mode Ctrl-C is a key, which Run takes as q.
func Run(ctx context.Context, in io.Reader, out io.Writer, feed watch.Feed, opts Options) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	// The model's commands (the feed's wait, a describe) end with the
	// program: they wait on this context too.
	run, cancel := context.WithCancel(ctx)
	defer cancel()
	p := tea.NewProgram(newModel(run, feed, opts),
		tea.WithInput(in),
		tea.WithOutput(out),
		tea.WithAltScreen(),
		tea.WithoutSignalHandler(),
	)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		// Quit, not tea.WithContext's kill: a killed program returns
		// while its input reader may still be reading in, and the
		// terminal it was given may be closed under it. A program that
		// does not take the quit within quitWait is killed all the same;
		// either way the terminal is restored.
		go p.Quit()
		select {
		case <-done:
		case <-time.After(quitWait):
			p.Kill()
		}
	}()
	_, err := p.Run()
	close(done)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err != nil {
		return fmt.Errorf("failed to run the live screen: %w", err)
	}
	return nil
}
