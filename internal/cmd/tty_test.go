package cmd_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-fleet/kubectl-fleet/internal/cmd"
	"github.com/kubectl-fleet/kubectl-fleet/internal/ptytest"
)

// openPTY opens a pseudo-terminal: what the command sees as its terminal
// (tty) and the other end the test reads and types on (pty).
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	pty, tty = ptytest.Open(t)
	// Raw output: what the command writes arrives as written.
	termios, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	termios.Oflag &^= unix.OPOST
	termios.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, termios); err != nil {
		t.Fatal(err)
	}
	return pty, tty
}

// readUntil reads the terminal until it shows want, or fails at the deadline.
func readUntil(t *testing.T, pty *os.File, want string) string {
	t.Helper()
	var got bytes.Buffer
	deadline := time.Now().Add(30 * time.Second)
	buf := make([]byte, 4096)
	for !strings.Contains(got.String(), want) {
		if err := pty.SetReadDeadline(deadline); err != nil {
			t.Fatal(err)
		}
		n, err := pty.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("the terminal never showed %q; it showed %q (%v)", want, got.String(), err)
		}
	}
	return got.String()
}

func TestProgressAndConfirmationOnATerminal(t *testing.T) {
	needFleets(t)
	pty, tty := openPTY(t)
	var out bytes.Buffer
	streams := genericiooptions.IOStreams{In: tty, Out: &out, ErrOut: tty}
	done := make(chan int, 1)
	go func() {
		done <- cmd.Execute(context.Background(), streams, []string{"--kubeconfig", fluxFleet.get(t).Kubeconfig, "reconcile", "--kind", "gitrepository", "--level", "root,master"}, cmd.Deps{})
	}()
	question := readUntil(t, pty, "Continue? [y/N] ")
	if !strings.Contains(question, "This will reconcile 3 Flux objects on 3 clusters, the whole fleet (no PATH or --env). Continue? [y/N] ") {
		t.Errorf("the question was %q", question)
	}
	if _, err := pty.WriteString("y\n"); err != nil {
		t.Fatal(err)
	}
	progress := readUntil(t, pty, "reconciling 3/3 …")
	if !strings.Contains(progress, "\rreconciling 0/3 …") || !strings.Contains(progress, "\r\x1b[Kreconciling 3/3 …") {
		t.Errorf("progress on the terminal was %q", progress)
	}
	select {
	case code := <-done:
		// The root and azure GitRepositories have no controller: requested,
		// not waited for; the unreachable tenant is not at these levels.
		if code != 0 || !strings.Contains(out.String(), "reconcile: 3 requested") {
			t.Errorf("exit %d, stdout %q", code, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not finish")
	}
}

func TestConfirmationAnsweredNoChangesNothing(t *testing.T) {
	needFleets(t)
	before := readFlux(t, fluxFleet.get(t))
	pty, tty := openPTY(t)
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cmd.Execute(context.Background(), genericiooptions.IOStreams{In: tty, Out: &out, ErrOut: tty},
			[]string{"--kubeconfig", fluxFleet.get(t).Kubeconfig, "suspend", "--kind", "ks"}, cmd.Deps{})
	}()
	readUntil(t, pty, "Continue? [y/N] ")
	if _, err := pty.WriteString("\n"); err != nil {
		t.Fatal(err)
	}
	readUntil(t, pty, "error: aborted: nothing was changed")
	if code := <-done; code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	after := readFlux(t, fluxFleet.get(t))
	for path, objs := range before {
		for key, obj := range objs {
			if isSuspended(after[path][key]) && !isSuspended(obj) {
				t.Errorf("%s %s was suspended after the answer no", path, key)
			}
		}
	}
}

// A walk that takes more than a second shows its progress on a terminal,
// and erases it before the result; the data on stdout is untouched.
func TestWalkProgressOnATerminal(t *testing.T) {
	needFleets(t)
	pty, tty := openPTY(t)
	var out bytes.Buffer
	done := make(chan int, 1)
	kubeconfig := scaleFleet.get(t).Kubeconfig // here: a failure to start fails the test
	go func() {
		// One cluster at a time, 20ms per round trip: about two seconds.
		done <- cmd.Execute(context.Background(), genericiooptions.IOStreams{In: tty, Out: &out, ErrOut: tty},
			[]string{"--kubeconfig", kubeconfig, "list", "-o", "name", "--concurrency", "1"}, cmd.Deps{})
	}()
	shown := readUntil(t, pty, " clusters read, ")
	if !strings.Contains(shown, "\r\x1b[Kwalking the fleet: ") {
		t.Errorf("the terminal showed %q", shown)
	}
	rest := readUntil(t, pty, "could not be read completely")
	if !strings.Contains(shown+rest, "\r\x1b[Kerror: ") {
		t.Errorf("the progress line was not erased before the error: %q", rest)
	}
	select {
	case code := <-done:
		if code != 3 || strings.Count(out.String(), "\n") != 25 || strings.Contains(out.String(), "walking") {
			t.Errorf("exit %d, stdout %q", code, out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the command did not finish")
	}
}
