package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// latencyProxy forwards loopback TCP connections to an apiserver, adding a
// fixed latency to every round trip: half of it to each direction, and one
// whole round trip to the connection's set-up, as a TCP handshake costs on
// a real network. Bytes are delayed, not throttled: what a peer sends at
// once arrives at once, latency later, as on a long fast link.
type latencyProxy struct {
	listener net.Listener
	addr     string
	target   string
	latency  time.Duration

	// accepted counts connections, so tests can see how many a command made.
	accepted atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
	closed bool
	// done is closed by stop: a latency being waited out ends there, so a
	// fleet with a slow cluster (latency: 1m) stops at once.
	done chan struct{}
}

// startProxy listens on a loopback port and forwards to target (host:port).
func startProxy(target string, latency time.Duration) (*latencyProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("failed to listen for the latency proxy: %w", err)
	}
	p := &latencyProxy{listener: l, addr: l.Addr().String(), target: target, latency: latency, conns: map[net.Conn]bool{}, done: make(chan struct{})}
	p.wg.Go(func() { p.serve(l) })
	return p, nil
}

// Addr is the proxy's host:port.
func (p *latencyProxy) Addr() string { return p.addr }

func (p *latencyProxy) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		if !p.track(c, true) {
			_ = c.Close()
			return
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

// track adds (or removes) a connection to close on stop; false once stopped.
func (p *latencyProxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add && p.closed {
		return false
	}
	if add {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *latencyProxy) forward(client net.Conn) {
	defer func() { _ = client.Close(); p.track(client, false) }()
	if !p.sleep(p.latency) { // the TCP handshake's round trip
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(server, true) {
		_ = server.Close()
		return
	}
	defer func() { _ = server.Close(); p.track(server, false) }()
	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(server, client) })
	wg.Go(func() { p.pipe(client, server) })
	wg.Wait()
}

// chunk is bytes read at one moment, due at another.
type chunk struct {
	data []byte
	due  time.Time
}

// pipe copies src to dst, each read delivered half the latency after it
// was read, in order; then it closes dst for writing.
func (p *latencyProxy) pipe(dst, src net.Conn) {
	chunks := make(chan chunk, 64)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{data: append([]byte(nil), buf[:n]...), due: time.Now().Add(p.latency / 2)}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for c := range chunks {
		if failed {
			continue // drain, so the reader ends
		}
		if !p.sleep(time.Until(c.due)) {
			failed = true
			_ = src.Close()
			continue
		}
		if _, err := dst.Write(c.data); err != nil {
			failed = true
			_ = src.Close()
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// sleep waits d, or less if the proxy stops; false if it stopped.
func (p *latencyProxy) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.done:
		return false
	}
}

// cut closes the listener and every connection: the address refuses
// connections until restore.
func (p *latencyProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.listener.Close()
	for c := range p.conns {
		_ = c.Close()
	}
}

// restore listens at the proxy's address again.
func (p *latencyProxy) restore() error {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("failed to listen at %s again: %w", p.addr, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = l.Close()
		return errors.New("the proxy is stopped")
	}
	p.listener = l
	p.wg.Go(func() { p.serve(l) })
	return nil
}

// stop closes the listener and every connection, and waits for them.
func (p *latencyProxy) stop() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	if !p.closed {
		close(p.done)
	}
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	l := p.listener
	p.mu.Unlock()
	err := l.Close()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
