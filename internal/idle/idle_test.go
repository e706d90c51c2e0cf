package idle_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kubectl-fleet/kubectl-fleet/internal/idle"
)

func TestEndsWithoutProgress(t *testing.T) {
	ctx, cancel := idle.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err() = %v, want context.DeadlineExceeded", ctx.Err())
	}
}

func TestProgressKeepsItAlive(t *testing.T) {
	const timeout = 500 * time.Millisecond
	ctx, cancel := idle.WithTimeout(context.Background(), timeout)
	defer cancel()
	// Progress made every 25th of the timeout (a stall of the whole
	// timeout would be needed to fail it), for three timeouts: a
	// context of a fixed deadline would have ended twice over.
	end := time.Now().Add(3 * timeout)
	derived, stop := context.WithCancel(ctx) // as a request derives its own
	defer stop()
	for time.Now().Before(end) {
		idle.Progress(derived)
		if ctx.Err() != nil {
			t.Fatalf("ended with progress made: %v", ctx.Err())
		}
		time.Sleep(timeout / 25) // the pace of the progress, not a wait for it
	}
	<-derived.Done()
	if !errors.Is(derived.Err(), context.DeadlineExceeded) || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err() = %v and derived %v, want context.DeadlineExceeded", ctx.Err(), derived.Err())
	}
}

func TestParentAndCancel(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel := idle.WithTimeout(parent, time.Hour)
	defer cancel()
	derived, stop := context.WithTimeout(ctx, time.Hour)
	defer stop()
	cancelParent()
	<-derived.Done()
	if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(derived.Err(), context.Canceled) {
		t.Fatalf("Err() = %v and derived %v, want context.Canceled", ctx.Err(), derived.Err())
	}

	ctx2, cancel2 := idle.WithTimeout(context.Background(), time.Hour)
	cancel2()
	<-ctx2.Done()
	if !errors.Is(ctx2.Err(), context.Canceled) {
		t.Fatalf("Err() after cancel = %v, want context.Canceled", ctx2.Err())
	}
	if d, ok := ctx2.Deadline(); !ok || d.IsZero() {
		t.Fatalf("Deadline() = %v, %v: want the idle deadline", d, ok)
	}
}

func TestAfterFuncAfterTheEnd(_ *testing.T) {
	ctx, cancel := idle.WithTimeout(context.Background(), time.Hour)
	cancel()
	ran := make(chan struct{})
	context.AfterFunc(ctx, func() { close(ran) })
	<-ran
	derived, stop := context.WithCancel(ctx)
	defer stop()
	<-derived.Done()
}
