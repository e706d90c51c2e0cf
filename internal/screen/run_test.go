//go:build linux

package screen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/kubectl-fleet/kubectl-fleet/internal/provider/registry"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ptytest"
	"github.com/kubectl-fleet/kubectl-fleet/internal/watch"
)

// The terminal sequences Run must write: the alternate screen entered and
// left, the cursor shown again.
const (
	enterAltScreen = "\x1b[?1049h"
	leaveAltScreen = "\x1b[?1049l"
	showCursor     = "\x1b[?25h"
)

// terminal is a pseudo-terminal Run draws on: tty is its end, the test
// types on pty and reads what Run wrote from it.
type terminal struct {
	t        *testing.T
	pty, tty *os.File
	mu       sync.Mutex
	out      bytes.Buffer
	// before is the tty's mode before Run; Run leaves it so.
	before *unix.Termios
}

func newTerminal(t *testing.T, cols, rows int) *terminal {
	t.Helper()
	pty, tty := ptytest.Open(t)
	term := &terminal{t: t, pty: pty, tty: tty}
	term.resize(cols, rows)
	var err error
	if term.before, err = unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := pty.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = tty.Close()
		_ = pty.Close()
		<-done
	})
	return term
}

func (term *terminal) resize(cols, rows int) {
	term.t.Helper()
	if err := unix.IoctlSetWinsize(int(term.pty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		term.t.Fatal(err)
	}
}

func (term *terminal) output() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// waitFor polls what Run wrote until it holds want after the offset from,
// and returns the offset past it; it fails the test at the deadline.
func (term *terminal) waitFor(want string, from int) int {
	term.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := term.output()
		if i := strings.Index(out[from:], want); i >= 0 {
			return from + i + len(want)
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the terminal does not show %q after 10 s; it shows:\n%q", want, out[from:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (term *terminal) typeKeys(s string) {
	term.t.Helper()
	if _, err := term.pty.WriteString(s); err != nil {
		term.t.Fatal(err)
	}
}

// restored checks that Run left the terminal as it found it: out of the
// alternate screen, the cursor shown, the tty's mode (out of raw mode).
func (term *terminal) restored() {
	term.t.Helper()
	at := term.waitFor(enterAltScreen, 0)
	at = term.waitFor(leaveAltScreen, at)
	if !strings.Contains(term.output()[max(0, at-len(leaveAltScreen)-64):], showCursor) {
		term.t.Errorf("the cursor is not shown again at the end")
	}
	after, err := unix.IoctlGetTermios(int(term.tty.Fd()), unix.TCGETS)
	if err != nil {
		term.t.Fatal(err)
	}
	if after.Lflag != term.before.Lflag || after.Iflag != term.before.Iflag || after.Oflag != term.before.Oflag || after.Cflag != term.before.Cflag {
		term.t.Errorf("the tty's mode is not restored: %+v, was %+v", after, term.before)
	}
}

// run starts Run on the terminal; the channel gets what it returns.
func (term *terminal) run(ctx context.Context, feed watch.Feed, opts Options) <-chan error {
	errc := make(chan error, 1)
	opts.Presentation, opts.Edges = presentation(), registry.Providers().EdgeKinds()
	go func() { errc <- Run(ctx, term.tty, term.tty, feed, opts) }()
	return errc
}

// returned waits for Run to return, within limit.
func returned(t *testing.T, errc <-chan error, limit time.Duration) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(limit):
		t.Fatalf("Run did not return within %s", limit)
		return nil
	}
}

func TestRunKeys(t *testing.T) {
	for _, tt := range []struct{ name, key string }{{"q", "q"}, {"Ctrl-C", "\x03"}} {
		t.Run(tt.name, func(t *testing.T) {
			term := newTerminal(t, 120, 20)
			errc := term.run(context.Background(), newFeed(sampleSnapshot()), Options{})
			term.waitFor("team-b", 0)
			term.typeKeys(tt.key)
			if err := returned(t, errc, 5*time.Second); err != nil {
				t.Errorf("Run = %v after %s, want nil", err, tt.name)
			}
			term.restored()
		})
	}
}

// The screen follows the feed and the terminal's size, and ends with the
// feed; nothing of it runs on after.
func TestRunFeed(t *testing.T) {
	// Checked after the terminal's cleanup, which ends its reader.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	term := newTerminal(t, 120, 20)
	feed := newFeed(sampleSnapshot())
	errc := term.run(context.Background(), feed, Options{})
	at := term.waitFor("Provisioning", 0)
	if strings.Contains(term.output(), "…") {
		t.Fatalf("a line is cut at 120 columns:\n%s", term.output())
	}

	feed.change(func(s *watch.Snapshot) {
		s.Root.Children[1].Version = "v1.37.0"
		s.Stats.EventsLastMinute = 1
	})
	// The renderer draws from the top: the status line comes first.
	at = max(term.waitFor("1 event in the last minute", at), term.waitFor("v1.37.0", at))

	term.resize(60, 10)
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	// At 60 columns, the status line is cut.
	term.waitFor("…", at)

	close(feed.updates)
	if err := returned(t, errc, 5*time.Second); err != nil {
		t.Errorf("Run = %v after the feed ended, want nil", err)
	}
	term.restored()
}

func TestRunContext(t *testing.T) {
	term := newTerminal(t, 120, 20)
	ctx, cancel := context.WithCancelCause(context.Background())
	errc := term.run(ctx, newFeed(sampleSnapshot()), Options{})
	term.waitFor("team-b", 0)
	stop := errors.New("stopped by the test")
	cancel(stop)
	if err := returned(t, errc, time.Second); !errors.Is(err, stop) {
		t.Errorf("Run = %v, want the context's cause", err)
	}
	term.restored()

	// A context done before Run leaves the terminal alone.
	before := len(term.output())
	if err := Run(ctx, term.tty, term.tty, newFeed(sampleSnapshot()), Options{}); !errors.Is(err, stop) {
		t.Errorf("Run on a context done = %v", err)
	}
	if got := term.output()[before:]; got != "" {
		t.Errorf("Run on a context done wrote %q", got)
	}
}

// SIGINT, sent to the process rather than typed (raw mode makes Ctrl-C a
// key), ends the screen through the context the caller derives from it.
func TestRunSIGINT(t *testing.T) {
	term := newTerminal(t, 120, 20)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	errc := term.run(ctx, newFeed(sampleSnapshot()), Options{})
	term.waitFor("team-b", 0)
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := returned(t, errc, time.Second); err == nil || !errors.Is(err, context.Cause(ctx)) {
		t.Errorf("Run = %v after SIGINT, want the context's cause", err)
	}
	term.restored()
}

// sgr matches the escape sequences that set colours and attributes.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func TestRunColor(t *testing.T) {
	for _, color := range []bool{false, true} {
		t.Run(fmt.Sprint("color=", color), func(t *testing.T) {
			term := newTerminal(t, 120, 20)
			s := sampleSnapshot()
			s.Changed["edge"] = t0
			errc := term.run(context.Background(), newFeed(s), Options{Color: color, Now: func() time.Time { return t0 }})
			term.waitFor("team-b", 0)
			// Typed in one go, the keys come in one read: each counts.
			term.typeKeys("jq")
			if err := returned(t, errc, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			term.restored()
			if got := sgr.FindAllString(term.output(), -1); (len(got) > 0) != color {
				t.Errorf("colour %v, the screen wrote %d colour sequences: %q", color, len(got), got)
			}
		})
	}
}
