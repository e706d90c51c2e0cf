package sandbox

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// echo serves one loopback listener that writes back what it reads.
func echo(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return l.Addr().String()
}

// Every round trip through the proxy takes at least its latency, the
// connection's set-up one more, and the bytes arrive as sent, in order.
func TestLatencyProxyDelaysEveryRoundTrip(t *testing.T) {
	const latency = 30 * time.Millisecond
	p, err := startProxy(echo(t), latency)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.stop(); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	payload := bytes.Repeat([]byte("fleet"), 20000) // several reads' worth
	buf := make([]byte, len(payload))
	var rtts []time.Duration
	for i := range 3 {
		// The set-up's round trip starts when the proxy accepts, which
		// may be before Dial returns: the first is timed from before Dial.
		sent := time.Now()
		if i == 0 {
			sent = start
		}
		if _, err := c.Write(payload); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		rtts = append(rtts, time.Since(sent))
		if !bytes.Equal(buf, payload) {
			t.Fatal("the bytes came back changed")
		}
	}
	if rtts[0] < 2*latency {
		t.Errorf("the first round trip took %s, want at least %s: the set-up's and its own", rtts[0], 2*latency)
	}
	for i, d := range rtts[1:] {
		if d < latency {
			t.Errorf("round trip %d took %s, want at least %s", i+2, d, latency)
		}
	}
	if total := time.Since(start); total < 4*latency || p.accepted.Load() != 1 {
		t.Errorf("%s for 3 round trips and %d connections", total, p.accepted.Load())
	}
}

// A proxy stops at once while its latency is being waited out: a fleet
// with a cluster a minute away stops without waiting for that minute.
func TestProxyStopsDuringItsLatency(t *testing.T) {
	p, err := startProxy(echo(t), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	// The connection is accepted and waits out its hour in forward.
	for deadline := time.Now().Add(time.Minute); p.accepted.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the proxy accepted no connection")
		}
	}
	stopped := make(chan error, 1)
	go func() { stopped <- p.stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("stop waited for the hour of latency")
	}
}
