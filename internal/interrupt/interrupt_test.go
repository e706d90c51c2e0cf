package interrupt

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// A signal received before Context is called (during start-up, as far as
// main can tell) is in the context it returns: already cancelled, with the
// signal as its cause and the shell's exit code for it.
func TestASignalBeforeContextIsKept(t *testing.T) {
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The runtime hands the signal to the channel from its own goroutine.
	deadline := time.Now().Add(time.Minute)
	for len(received) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("SIGTERM never reached the channel that init registered")
		}
		time.Sleep(time.Millisecond)
	}
	ctx, stop := Context(context.Background())
	defer stop()
	if ctx.Err() == nil {
		t.Fatal("the context was not cancelled by the signal received before it")
	}
	var e *Error
	if !errors.As(context.Cause(ctx), &e) || e.Error() != "interrupted by SIGTERM" || e.ExitCode() != 143 {
		t.Errorf("cause %v; want interrupted by SIGTERM, exit 143", context.Cause(ctx))
	}
}

func TestExitCodes(t *testing.T) {
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		if got := (&Error{Signal: sig}).ExitCode(); got != want {
			t.Errorf("%s: exit %d, want %d", Name(sig), got, want)
		}
	}
}
