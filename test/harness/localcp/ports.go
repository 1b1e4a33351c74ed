package localcp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Ports are picked below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range, 32768-60999 by default), where the kernel
// never puts the local end of an outgoing connection. A port "free" from
// 127.0.0.1:0 is an ephemeral one: between picking it and the component
// binding it, a client connection of a busy control plane may take it as its
// local port, and the component then fails with "address already in use".
//
// Several test processes run control planes at once (go test runs packages
// in parallel), so each port picked is also reserved across processes: the
// picking process holds an exclusive flock on a file named after the port in
// portLockDir until it exits, and the kernel drops the lock when it does,
// even if the process is killed.
const (
	portRangeLow  = 20000
	portRangeHigh = 32000 // exclusive; below 32768
)

var (
	portMu    sync.Mutex
	portLocks = map[int]*os.File{} // the ports this process holds, with their locks
)

// portLockDir holds one lock file per reserved port.
func portLockDir() string {
	return filepath.Join(os.TempDir(), "burstpool-localcp-ports")
}

// ephemeralLow is the first port of the kernel's ephemeral range, or 32768
// when it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}

// FreePorts picks n distinct free TCP ports on 127.0.0.1, for example the
// ports of functions or registries to list in Config.ForwardPorts before Up.
// The ports lie below the kernel's ephemeral range, and no other process
// that picks ports with FreePorts gets them while this one runs.
func FreePorts(n int) ([]int, error) {
	high := min(portRangeHigh, ephemeralLow())
	if high <= portRangeLow {
		return nil, fmt.Errorf("cannot pick a free port: the ephemeral range starts at %d, at or below %d", high, portRangeLow)
	}
	if err := os.MkdirAll(portLockDir(), 0o777); err != nil {
		return nil, fmt.Errorf("cannot pick a free port: %w", err)
	}
	portMu.Lock()
	defer portMu.Unlock()
	ports := make([]int, 0, n)
	span := high - portRangeLow
	start := rand.IntN(span)
	for i := 0; i < span && len(ports) < n; i++ {
		p := portRangeLow + (start+i)%span
		if _, held := portLocks[p]; held {
			continue
		}
		lock, ok, err := reservePort(p)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		portLocks[p] = lock
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("cannot pick %d free ports in %d-%d: %d found", n, portRangeLow, high-1, len(ports))
	}
	return ports, nil
}

// reservePort takes port p's lock and checks that p can be bound now. It
// reports false, releasing the lock, when another process holds p or
// something listens on it.
func reservePort(p int) (*os.File, bool, error) {
	f, err := os.OpenFile(filepath.Join(portLockDir(), strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, false, fmt.Errorf("cannot pick a free port: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("cannot lock port %d: %w", p, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		_ = f.Close()
		return nil, false, nil //nolint:nilerr // in use: try the next port
	}
	_ = ln.Close()
	return f, true, nil
}

// WaitPort waits until something accepts TCP connections at addr, for at
// most timeout.
func WaitPort(ctx context.Context, addr string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet
		}
		_ = c.Close()
		return true, nil
	})
}
