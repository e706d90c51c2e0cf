// Package idle bounds the time a cluster may keep kubectl fleet waiting,
// not the time it may keep it busy: a context that ends once no progress
// was made for a while. A cluster that streams a list of thousands of
// objects in pages makes progress with every page and is read to the end;
// one that stops answering, at the start or in the middle of a list, ends
// as a deadline does, with context.DeadlineExceeded.
package idle

import (
	"context"
	"sync"
	"time"
)

// WithTimeout returns a copy of parent that is done once timeout passes
// without a call of Progress on it (or on a context derived from it), or
// when parent is done, or when cancel is called. Its Err is
// context.DeadlineExceeded when the timeout ran out, as WithTimeout's.
// A timeout that is not positive sets no bound: the copy ends with parent
// or cancel alone.
func WithTimeout(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(parent)
	}
	c := &idleCtx{parent: parent, timeout: timeout, done: make(chan struct{})}
	// The lock keeps the timer from firing before it is recorded.
	c.mu.Lock()
	c.deadline = time.Now().Add(timeout)
	c.timer = time.AfterFunc(timeout, c.expire)
	c.mu.Unlock()
	stop := context.AfterFunc(parent, func() { c.end(parent.Err()) })
	c.mu.Lock()
	c.stopParent = stop
	c.mu.Unlock()
	return c, func() { c.end(context.Canceled) }
}

// Progress moves the deadline of the innermost idle context of ctx to the
// timeout from now: the cluster answered. It does nothing for a context
// without one, or one already done.
func Progress(ctx context.Context) {
	if c, ok := ctx.Value(key{}).(*idleCtx); ok {
		c.progress()
	}
}

type key struct{}

// idleCtx is a context whose deadline moves with progress. It implements
// the afterFuncer the context package looks for, so that a context
// derived from it (a request's, with a timeout of its own) ends with it
// without a goroutine of its own, and with its error.
type idleCtx struct {
	parent     context.Context
	timeout    time.Duration
	done       chan struct{}
	stopParent func() bool

	mu       sync.Mutex
	err      error
	deadline time.Time
	timer    *time.Timer
	after    map[*afterFunc]struct{}
}

type afterFunc struct {
	f    func()
	once sync.Once
}

func (c *idleCtx) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.deadline
	if pd, ok := c.parent.Deadline(); ok && pd.Before(d) {
		d = pd
	}
	return d, true
}

func (c *idleCtx) Done() <-chan struct{} { return c.done }

func (c *idleCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *idleCtx) Value(k any) any {
	if k == (key{}) {
		return c
	}
	return c.parent.Value(k)
}

// AfterFunc arranges for f to run in its own goroutine once c is done, as
// context.AfterFunc does; stop keeps it from running.
func (c *idleCtx) AfterFunc(f func()) (stop func() bool) {
	a := &afterFunc{f: f}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go a.once.Do(a.f)
		return func() bool { return false }
	}
	if c.after == nil {
		c.after = map[*afterFunc]struct{}{}
	}
	c.after[a] = struct{}{}
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		_, pending := c.after[a]
		delete(c.after, a)
		c.mu.Unlock()
		return pending
	}
}

func (c *idleCtx) progress() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.deadline = time.Now().Add(c.timeout)
	c.timer.Reset(c.timeout)
}

// expire ends c when its timer fires, unless progress moved the deadline
// meanwhile (a Reset that came too late to stop the timer).
func (c *idleCtx) expire() {
	c.mu.Lock()
	if left := time.Until(c.deadline); left > 0 && c.err == nil {
		c.timer.Reset(left)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.end(context.DeadlineExceeded)
}

func (c *idleCtx) end(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.timer.Stop()
	after, stop := c.after, c.stopParent
	c.after = nil
	close(c.done)
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	for a := range after {
		go a.once.Do(a.f)
	}
}
