// Package interrupt turns SIGINT and SIGTERM into the cancellation of the
// command's context, from the earliest moment a Go program can catch them.
//
// A Go program dies of a signal's default action until signal.Notify has
// been called for it. Called first thing in main, that still leaves the
// whole package initialisation before main unguarded: kubectl-fleet links
// over a thousand packages whose init functions (API schemes, metrics
// registries) take tens of milliseconds, more on a loaded machine, and a
// Ctrl-C or a SIGTERM from a supervisor in that window killed the process
// silently, with no "interrupted" and no exit code of ours.
//
// This package imports nothing but the standard library's signal
// plumbing, so Go initialises it right after os/signal, long before the
// heavy packages, and its init registers for the signals. Context then
// hands a signal received during start-up to the command as a context
// already cancelled, so every command ends as it does on a later signal.
//
// Only main imports this package: a test binary that registered for the
// signals would outlive the Ctrl-C of `go test`. internal/cmd knows the cause by
// its ExitCode method, not by this type. The channel is a package-level
// variable because init functions take no arguments.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// signals are the signals that interrupt a command.
var signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// received gets the signals from init on. One is enough: the first
// signal cancels the command, and Context lets the next one through.
var received = make(chan os.Signal, 1)

func init() {
	signal.Notify(received, signals...)
}

// Error is the cause of a context that a signal cancelled.
type Error struct {
	Signal os.Signal
}

func (e *Error) Error() string {
	return "interrupted by " + Name(e.Signal)
}

// ExitCode is the shell's convention for a process ended by the signal,
// 128 plus its number: 130 for SIGINT, 143 for SIGTERM.
func (e *Error) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// Name is the signal's conventional name, SIGINT or SIGTERM.
func Name(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// Context returns a context that the first SIGINT or SIGTERM cancels, with
// an *Error as its cause; one received since the program started is
// already in it. After the first signal the signals get their default
// action again, so a second Ctrl-C ends a command that does not end by
// itself. stop ends the watch and restores the default action too.
func Context(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	interrupted := func(s os.Signal) {
		signal.Reset(signals...)
		cancel(&Error{Signal: s})
	}
	select {
	case s := <-received:
		interrupted(s)
		return ctx, func() {}
	default:
	}
	done := make(chan struct{})
	go func() {
		select {
		case s := <-received:
			interrupted(s)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signal.Reset(signals...)
		cancel(nil)
	}
}
