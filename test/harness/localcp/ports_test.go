package localcp

import (
	"net"
	"strconv"
	"testing"
	"time"
)

func TestWaitPort(t *testing.T) {
	ports, err := FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	open := "127.0.0.1:" + strconv.Itoa(ports[0])
	ln, err := net.Listen("tcp", open)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	if err := WaitPort(t.Context(), open, time.Second); err != nil {
		t.Errorf("WaitPort(%s) with a listener: %v", open, err)
	}
	closed := "127.0.0.1:" + strconv.Itoa(ports[1])
	if err := WaitPort(t.Context(), closed, 300*time.Millisecond); err == nil {
		t.Errorf("WaitPort(%s) without a listener: got no error, want a timeout", closed)
	}
}

// TestFreePortsOutsideTheEphemeralRange: ports come from below the kernel's
// ephemeral range, where no outgoing connection takes them, and are never
// handed out twice.
func TestFreePortsOutsideTheEphemeralRange(t *testing.T) {
	a, err := FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range append(a, b...) {
		if p < portRangeLow || p >= ephemeralLow() {
			t.Errorf("port %d is outside %d-%d", p, portRangeLow, ephemeralLow()-1)
		}
		if seen[p] {
			t.Errorf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}

// TestPortHeldElsewhereIsSkipped: a port whose lock another process holds
// (here: another open file description, which flock treats alike) is not
// reserved, nor is one something listens on.
func TestPortHeldElsewhereIsSkipped(t *testing.T) {
	ports, err := FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := reservePort(ports[0]); err != nil || ok {
		t.Errorf("reservePort(%d) held by this process's other lock: ok %v, err %v; want false, nil", ports[0], ok, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	busy := ln.Addr().(*net.TCPAddr).Port
	lock, ok, err := reservePort(busy)
	if err != nil || ok {
		t.Errorf("reservePort(%d) with a listener: ok %v, err %v; want false, nil", busy, ok, err)
	}
	if lock != nil {
		_ = lock.Close()
	}
}
