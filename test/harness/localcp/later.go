package localcp

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Isolated is a further component started once the control plane is up,
// in its own loopback-only network namespace as Karpenter and Crossplane
// are: whatever it binds on every interface stays inside. It reaches the
// API server, and each of Forward, at the same 127.0.0.1 port inside.
type Isolated struct {
	Name string
	Path string
	Args []string
	Env  []string
	// Forward are host 127.0.0.1 ports it reaches at the same port inside,
	// for example another control plane's API server.
	Forward []int
}

// StartIsolated starts n and records it, so Down stops it with the rest.
// Only a Cluster this process brought up with Up can start one.
func (c *Cluster) StartIsolated(n Isolated) (Process, error) {
	if c.cfg == nil {
		return Process{}, errors.New("only a control plane started by this process can start further components")
	}
	cfg := *c.cfg
	var err error
	if cfg.RelayBinary, err = cfg.relay(); err != nil {
		return Process{}, err
	}
	u := &upper{cfg: cfg, c: c, start: time.Now()}
	return u.startInNetns(netnsComponent{
		name: n.Name, path: n.Path, args: n.Args, env: n.Env,
		forward: append([]int{c.Ports["apiserver"]}, n.Forward...),
	})
}

// Restart stops the component name, leaves it down for down (its clients
// meanwhile find nothing listening), then starts it again as Up started
// it. Only a Cluster this process brought up with Up can restart one.
func (c *Cluster) Restart(name string, down time.Duration) error {
	if err := c.Stop(name); err != nil {
		return err
	}
	time.Sleep(down)
	return c.Start(name)
}

// Stop stops the component name (SIGTERM, then SIGKILL after a grace
// period: kube-apiserver drains its requests for up to tens of seconds
// meanwhile) and leaves it down until Start. Stopping a component that is
// down already does nothing.
func (c *Cluster) Stop(name string) error {
	_, old, err := c.component(name)
	if err != nil {
		return err
	}
	return c.stop(old, 30*time.Second)
}

// Kill stops the component name at once, as a crash or an OOM kill
// would: SIGKILL after SIGTERM with no grace, so it serves nothing more
// and drains nothing. Start starts it again.
func (c *Cluster) Kill(name string) error {
	_, old, err := c.component(name)
	if err != nil {
		return err
	}
	return c.stop(old, 0)
}

// stop stops p, with grace before SIGKILL, and waits until it is reaped:
// the leader of a process whose other threads are still exiting already
// looks gone, while its listening ports are still bound.
func (c *Cluster) stop(p Process, grace time.Duration) error {
	if err := p.Stop(grace); err != nil {
		return err
	}
	if !c.r.reaped(p.PID, 10*time.Second) {
		return fmt.Errorf("%s (pid %d) stopped but was not reaped within 10s", p.Name, p.PID)
	}
	return nil
}

// Start starts the component name again as Up started it, after Stop. It
// returns once the process runs, not once it is ready: its clients may
// still find nothing listening for a while.
func (c *Cluster) Start(name string) error {
	s, idx, err := c.spec(name)
	if err != nil {
		return err
	}
	p, err := c.r.start(s, filepath.Join(c.Dir, "logs"))
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.Processes[idx] = p
	c.mu.Unlock()
	return c.save()
}

// component is where the component name is in c.Processes, and its
// process as last started.
func (c *Cluster) component(name string) (int, Process, error) {
	_, idx, err := c.spec(name)
	if err != nil {
		return -1, Process{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return idx, c.Processes[idx], nil
}

// spec is how Up started the component name, and where it is in
// c.Processes.
func (c *Cluster) spec(name string) (spec, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.specs[name]
	idx := -1
	for i, p := range c.Processes {
		if p.Name == name {
			idx = i
		}
	}
	if !ok || idx < 0 {
		return spec{}, -1, fmt.Errorf("no component %s was started by this process", name)
	}
	return s, idx, nil
}
