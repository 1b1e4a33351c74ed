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
	c.mu.Lock()
	s, ok := c.specs[name]
	idx := -1
	var old Process
	for i, p := range c.Processes {
		if p.Name == name {
			idx, old = i, p
		}
	}
	c.mu.Unlock()
	if !ok || idx < 0 {
		return fmt.Errorf("no component %s was started by this process", name)
	}
	if err := old.Stop(30 * time.Second); err != nil {
		return err
	}
	time.Sleep(down)
	p, err := c.r.start(s, filepath.Join(c.Dir, "logs"))
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.Processes[idx] = p
	c.mu.Unlock()
	return c.save()
}
