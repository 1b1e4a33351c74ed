package devplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// LeaseName is the provider's leader-election Lease, in CrossplaneNS.
const LeaseName = "provider-burstpool-capacity"

// RestartDelay is how long the stack waits before it starts a provider
// replica that exited, as the kubelet restarts a container (its first
// back-off is 10 s; a short one keeps the fault scenarios quick).
const RestartDelay = 2 * time.Second

// Replica is one process of a highly available provider: replicas elect
// a leader through the Lease LeaseName, and a replica that exits is
// started again after RestartDelay unless it is held down.
type Replica struct {
	// Index is the replica's place in Stack.Replicas.
	Index int
	// MetricsAddr is where it serves Prometheus metrics.
	MetricsAddr string

	mu       sync.Mutex
	proc     *Proc
	held     bool
	restarts int
}

// Proc is the replica's current process.
func (r *Replica) Proc() *Proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc
}

// Restarts counts the times the stack started the replica again.
func (r *Replica) Restarts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restarts
}

// Leader reports whether the replica holds the Lease now, from its
// leader_election_master_status series.
func (r *Replica) Leader(ctx context.Context) (bool, error) {
	m, err := Scrape(ctx, r.MetricsAddr, "leader_election_master_status")
	return m[`name="`+LeaseName+`"`] == 1, err
}

// startReplicas starts n provider processes with args (each gets its own
// metrics and health ports) and supervises them until ctx ends.
func (s *Stack) startReplicas(ctx context.Context, n int, logDir string, env []string, path string, args ...string) error {
	for i := range n {
		ports, err := localcp.FreePorts(2)
		if err != nil {
			return err
		}
		name := ProviderName
		if i > 0 {
			name = ProviderName + "-" + strconv.Itoa(i)
		}
		r := &Replica{Index: i, MetricsAddr: "127.0.0.1:" + strconv.Itoa(ports[0])}
		a := append(slices.Clone(args), "--metrics-address", r.MetricsAddr, "--health-address", "127.0.0.1:"+strconv.Itoa(ports[1]))
		if r.proc, err = start(logDir, name, s.cfg.StopWithParent, env, path, a...); err != nil {
			return err
		}
		s.Replicas = append(s.Replicas, r)
	}
	go s.supervise(ctx)
	return nil
}

// supervise starts again, after RestartDelay, every replica that exited
// and is not held down.
func (s *Stack) supervise(ctx context.Context) {
	down := map[int]time.Time{}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, r := range s.Replicas {
			r.mu.Lock()
			switch {
			case r.held || r.proc.Alive():
				delete(down, r.Index)
			case down[r.Index].IsZero():
				down[r.Index] = time.Now()
			case time.Since(down[r.Index]) >= RestartDelay:
				if p, err := r.proc.again(s.cfg.StopWithParent); err == nil {
					r.proc, r.restarts = p, r.restarts+1
					delete(down, r.Index)
				}
			}
			r.mu.Unlock()
		}
	}
}

// LeaderReplica is the replica that holds the Lease, waiting up to
// timeout for one to.
func (s *Stack) LeaderReplica(ctx context.Context, timeout time.Duration) (*Replica, error) {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		for _, r := range s.Replicas {
			if r.Proc() == nil || !r.Proc().Alive() {
				continue
			}
			ok, err := r.Leader(ctx)
			if err != nil {
				last = err
				continue
			}
			if ok {
				return r, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("no provider replica holds the Lease %s after %s (last error: %v)", LeaseName, timeout, last)
}

// KillReplica ends r with SIGKILL; the stack starts it again after
// RestartDelay.
func (s *Stack) KillReplica(r *Replica) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc.Kill()
}

// HoldReplicas stops every replica (SIGKILL, so no Lease is given up) and
// keeps them down until ReleaseReplicas.
func (s *Stack) HoldReplicas() error {
	var errs []error
	for _, r := range s.Replicas {
		r.mu.Lock()
		r.held = true
		errs = append(errs, r.proc.Kill())
		r.mu.Unlock()
	}
	return errors.Join(errs...)
}

// ReleaseReplicas starts the held replicas again.
func (s *Stack) ReleaseReplicas() error {
	var errs []error
	for _, r := range s.Replicas {
		r.mu.Lock()
		if r.held {
			p, err := r.proc.again(s.cfg.StopWithParent)
			if err == nil {
				r.proc = p
			}
			r.held = false
			errs = append(errs, err)
		}
		r.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Scrape reads the series of the metric name from addr's /metrics, by
// their labels as the text format writes them (pool="a",pool_namespace="b").
func Scrape(ctx context.Context, addr, name string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close() //nolint:errcheck // a read-only body
	out := map[string]float64{}
	sc := bufio.NewScanner(rsp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		end := strings.LastIndex(line, "}")
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		out[line[len(name)+1:end]] = v
	}
	return out, sc.Err()
}
