package localcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// State is what state.json records about a running control plane.
type State struct {
	// Kubeconfig is the admin kubeconfig (token in system:masters).
	Kubeconfig string `json:"kubeconfig"`
	// Ports are the 127.0.0.1 ports by name: etcd, apiserver,
	// kube-controller-manager, kube-scheduler, kwok, and the host ends of
	// the health and metrics ports of Karpenter and Crossplane
	// (karpenter-health, karpenter-metrics, crossplane-health, ...).
	Ports map[string]int `json:"ports"`
	// ReadyAfter is, per component, how long after Up began it was ready.
	ReadyAfter map[string]time.Duration `json:"readyAfter"`
	// Processes are the started processes in start order.
	Processes []Process `json:"processes"`
}

// A Cluster is a control plane started by Up or found by Load.
type Cluster struct {
	// Dir is the folder of the control plane.
	Dir string
	State
	// Config is the admin REST config.
	Config *rest.Config

	mu sync.Mutex
	r  reaper
	// cfg is the configuration Up started the cluster with, and specs
	// how it started each component; nil for a cluster found by Load.
	cfg   *Config
	specs map[string]spec
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func (c *Cluster) save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.MarshalIndent(c.State, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(c.Dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(c.Dir))
}

func (c *Cluster) record(p Process) error {
	c.mu.Lock()
	c.Processes = append(c.Processes, p)
	c.mu.Unlock()
	return c.save()
}

// Load reads the state of the control plane in dir.
func Load(dir string) (*Cluster, error) {
	b, err := os.ReadFile(statePath(dir)) //nolint:gosec // the control plane's own state
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no control plane in %s (no state.json): run `localcp up --dir %s`", dir, dir)
		}
		return nil, err
	}
	c := &Cluster{Dir: dir}
	if err := json.Unmarshal(b, &c.State); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", statePath(dir), err)
	}
	if c.Kubeconfig != "" {
		if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
			return nil, fmt.Errorf("cannot read kubeconfig %s: %w", c.Kubeconfig, err)
		}
	}
	return c, nil
}

// Down stops the control plane recorded in dir/state.json; see Cluster.Down.
func Down(dir string) error {
	c, err := Load(dir)
	if err != nil {
		if _, serr := os.Stat(statePath(dir)); errors.Is(serr, os.ErrNotExist) {
			return nil // nothing was started
		}
		return err
	}
	return c.Down()
}

// Running lists the recorded processes that are still running.
func (c *Cluster) Running() []Process {
	var out []Process
	for _, p := range c.Processes {
		if p.alive() {
			out = append(out, p)
		}
	}
	return out
}

// Down stops every recorded process group (SIGTERM, then SIGKILL after a
// grace period; the API server takes up to ~10 s), etcd last, then removes
// state.json. Processes that have already exited, or whose PID now names
// another process, are skipped. It is safe to call more than once.
func (c *Cluster) Down() error {
	var etcd []Process
	errs := make(chan error, len(c.Processes))
	var wg sync.WaitGroup
	for _, p := range c.Processes {
		if p.Name == "etcd" {
			etcd = append(etcd, p)
			continue
		}
		wg.Go(func() {
			grace := 10 * time.Second
			if p.Name == "kube-apiserver" {
				grace = 30 * time.Second
			}
			errs <- p.Stop(grace)
		})
	}
	wg.Wait()
	for _, p := range etcd {
		errs <- p.Stop(10 * time.Second)
	}
	close(errs)
	var all []error
	for err := range errs {
		if err != nil {
			all = append(all, err)
		}
	}
	if len(all) > 0 {
		return errors.Join(all...)
	}
	if err := os.Remove(statePath(c.Dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Usage is the resident memory and CPU time of one component process.
type Usage struct {
	Name   string
	PID    int
	RSSKiB int64
	// CPU is the user and system CPU time the process has used; zero when
	// it could not be read.
	CPU time.Duration
}

// Usage reads VmRSS and CPU time of every running component. For a
// component in its own network namespace the component itself (the relay's
// child) is reported under its name and the relay inside the namespace as
// NAME-nsrelay.
func (c *Cluster) Usage() []Usage {
	var out []Usage
	for _, p := range c.Running() {
		if p.NetNS {
			for _, ch := range children(p.PID) {
				out = append(out, usage(p.Name, ch))
			}
			out = append(out, usage(p.Name+"-nsrelay", p.PID))
			continue
		}
		out = append(out, usage(p.Name, p.PID))
	}
	return out
}

// usage reads what process pid holds; a value it cannot read stays zero.
func usage(name string, pid int) Usage {
	kib, _ := RSSKiB(pid)
	cpu, _ := CPUTime(pid)
	return Usage{Name: name, PID: pid, RSSKiB: kib, CPU: cpu}
}
