// Package ptytest opens pseudo-terminals for tests that run a command, or
// the live screen, on a terminal.
package ptytest

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Open opens a pseudo-terminal: the tty a command sees as its terminal,
// and the pty the test reads it from and types into, both closed when the
// test ends. The test is skipped where there are none.
func Open(tb testing.TB) (pty, tty *os.File) {
	tb.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		tb.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(pty.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		_ = pty.Close()
		tb.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(pty.Fd()), unix.TIOCGPTN)
	if err != nil {
		_ = pty.Close()
		tb.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		_ = pty.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = tty.Close(); _ = pty.Close() })
	return pty, tty
}
