package sandbox

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
)

// An unreachable fault's port refuses connections and cannot be taken by
// another process while the fleet runs; Stop gives it back.
func TestClosedPortIsRefusedAndHeld(t *testing.T) {
	f := &Fleet{}
	port, err := f.closedPort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if c, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			_ = c.Close()
		}
		t.Errorf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		_ = l.Close()
		t.Errorf("another listener took %s while the fleet holds it", addr)
	}
	for _, fd := range f.reserved {
		_ = syscall.Close(fd)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("%s not given back: %v", addr, err)
	}
	_ = l.Close()
}
