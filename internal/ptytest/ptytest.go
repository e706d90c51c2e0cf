// Package ptytest opens pseudo-terminals for tests that run a command, or
// the live screen, on a terminal.
package ptytest

import (
	"errors"
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
	// Through SyscallConn, not Fd: Fd puts the file in blocking mode,
	// where read deadlines do nothing, and a test waiting for output that
	// never comes would hang until go test's timeout instead of failing.
	var n int
	raw, err := pty.SyscallConn()
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil {
				n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
			}
		})
		err = errors.Join(err, cerr)
	}
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
