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
