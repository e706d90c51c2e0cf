package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kubectl-fleet/kubectl-fleet/internal/escape"
)

// Exit codes shared by every command; docs/exit-codes.md documents them.
const (
	// ExitOK: the command did everything it was asked, on every cluster.
	ExitOK = 0
	// ExitFailure: the command could not do its job: bad flags or arguments, an
	// unreachable root cluster, a path that names no cluster.
	ExitFailure = 1
	// ExitPartial: the command ran, but some clusters could not be reached,
	// read or trusted; their errors are in the output.
	ExitPartial = 3
)

// ExitError is an error that ends the command with a given exit code. With
// no Err it only sets the code: the output has said everything.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// printLine prints one line on w, formatted, with every character a
// terminal could act on escaped (newlines included): the arguments may
// hold names and messages read from clusters and Secrets.
func printLine(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, escape.String(fmt.Sprintf(format, args...)))
}

// exitCode prints err once, as kubectl does, and returns the process exit code.
func exitCode(errOut io.Writer, err error) int {
	if err == nil {
		return ExitOK
	}
	var exit *ExitError
	if errors.As(err, &exit) && exit.Err == nil {
		return exit.Code
	}
	fmt.Fprint(errOut, escape.Lines(fmt.Sprintf("error: %v\n", err)))
	if exit != nil {
		return exit.Code
	}
	return ExitFailure
}

// interruption is the cause of a context that a signal cancelled: main's
// interrupt.Error, known here by its methods so that internal/cmd does not
// import the package that registers for the signals (see its doc).
type interruption interface {
	error
	// ExitCode is 128 plus the signal's number, as a shell reports it.
	ExitCode() int
}

// interrupted ends a command that a signal cancelled: whatever it was
// doing, the exit code is the signal's (130 for SIGINT, 143 for SIGTERM)
// and the last line of stderr says it was interrupted. An error that is
// only the cancellation echoed back is not printed; any other error is,
// before that line.
func interrupted(errOut io.Writer, err error, cause interruption) int {
	if !errors.Is(err, context.Canceled) {
		exitCode(errOut, err) // prints err as any command's, or nothing
	}
	fmt.Fprintf(errOut, "error: %v\n", cause)
	return cause.ExitCode()
}
