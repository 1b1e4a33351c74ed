package localcp

import (
	"context"
	"fmt"
	"net"
	"runtime"

	"golang.org/x/sys/unix"
)

// DialInside connects to addr from inside the network namespace of the
// named component ("karpenter" or "crossplane"), as the component itself
// would: 127.0.0.1 there is the namespace's own loopback, where only the
// relayed ports listen. Tests use it to check what a component can reach.
func (c *Cluster) DialInside(ctx context.Context, component, network, addr string) (net.Conn, error) {
	var pid int
	for _, p := range c.Processes {
		if p.Name == component && p.NetNS && p.alive() {
			pid = p.PID
		}
	}
	if pid == 0 {
		return nil, fmt.Errorf("no running component %q in its own network namespace", component)
	}
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		// The socket belongs to the namespace of the thread that creates
		// it. This thread switches namespace and is never unlocked, so Go
		// ends it with this goroutine instead of reusing it.
		runtime.LockOSThread()
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{err: fmt.Errorf("cannot open the network namespace of %s: %w", component, err)}
			return
		}
		defer unix.Close(fd) //nolint:errcheck // a namespace handle
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("cannot enter the network namespace of %s: %w", component, err)}
			return
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		ch <- result{conn, err}
	}()
	r := <-ch
	return r.conn, r.err
}
