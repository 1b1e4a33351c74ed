// Package failsafe decides what the fail-safe undoes when the capacity
// provider has not: the executor gate on executors that waited past its
// bound while no provider replica holds the Lease, and the startup taint
// on pool nodes that stayed closed past their pool's openAfter. The
// provider opens every node by openAfter, so a node still closed past it
// (and the grace) is one the provider missed, whatever the Lease says. An
// executor gate has no such bound while the provider runs: it holds
// executors of a QueryService above its share for as long as the share
// is taken, so the fail-safe removes gates only while the provider is
// down.
//
// Decide is pure: the cluster's objects and the clock in, the edits out.
// The runner (run.go) lists, decides and patches.
package failsafe

import (
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Bounds says how long the fail-safe lets the provider act first.
type Bounds struct {
	// Gate is how long an executor may carry the executor gate before
	// the fail-safe removes it: the provider's bound plus a margin for a
	// standby's takeover.
	Gate time.Duration
	// Grace is added to a pool's openAfter before the fail-safe opens a
	// warming node of that pool.
	Grace time.Duration
	// OpenAfter is the openAfter of a warming node no pool in this
	// cluster claims (a pool of a workload cluster, whose PoolCapacity is
	// in the management cluster), before Grace.
	OpenAfter time.Duration
	// Silence is how long the provider's Lease may go unrenewed before
	// the provider counts as down: longer than a standby's takeover.
	Silence time.Duration
}

// ProviderDown reports whether no provider replica has renewed the Lease
// within silence of now: renewed is the Lease's last renewal (or
// acquisition), zero when there is no Lease.
func ProviderDown(now, renewed time.Time, silence time.Duration) bool {
	return renewed.IsZero() || now.Sub(renewed) > silence
}

// Pod is what the fail-safe reads of an executor.
type Pod struct {
	Namespace, Name string
	Labels          map[string]string
	Gates           []string
	NodeName        string
	Created         time.Time
	Deleting        bool
}

// Node is what the fail-safe reads of a node.
type Node struct {
	Name     string
	Labels   map[string]string
	Taints   []corev1.Taint
	Created  time.Time
	Ready    bool
	Deleting bool
}

// Pool is what the fail-safe reads of a PoolCapacity: the startup taint
// its nodes are launched with, the labels that find them and openAfter.
type Pool struct {
	Name         string
	Taint        corev1.Taint
	NodeSelector map[string]string
	OpenAfter    time.Duration
}

// Release is an executor whose gate the fail-safe removes.
type Release struct {
	Pod Pod
	// Gates are the pod's gates without the executor gate.
	Gates  []string
	Waited time.Duration
}

// Open is a node whose startup taint the fail-safe removes.
type Open struct {
	Node Node
	// Taints are the node's taints without the startup taint.
	Taints []corev1.Taint
	Waited time.Duration
	// Pool is the PoolCapacity whose openAfter applied, empty when none
	// claims the node.
	Pool string
}

// Plan is one pass's edits, in a stable order.
type Plan struct {
	Release []Release
	Open    []Open
}

// Decide returns, while the provider is down, the executors whose gate
// (named gate) is older than b.Gate, and the Ready pool nodes whose
// startup taint (key taintKey) is older than their pool's openAfter plus
// b.Grace. Pods bound to a node or being deleted, and nodes not Ready or
// being deleted, are left alone: the first need no gate removed, the
// others could not run an executor anyway.
func Decide(now time.Time, b Bounds, providerDown bool, gate, taintKey string, pods []Pod, nodes []Node, pools []Pool) Plan {
	var p Plan
	for _, pod := range pods {
		if !providerDown || pod.NodeName != "" || pod.Deleting || !slices.Contains(pod.Gates, gate) {
			continue
		}
		waited := now.Sub(pod.Created)
		if waited < b.Gate {
			continue
		}
		p.Release = append(p.Release, Release{Pod: pod, Gates: without(pod.Gates, gate), Waited: waited})
	}
	for _, n := range nodes {
		if !n.Ready || n.Deleting {
			continue
		}
		i := slices.IndexFunc(n.Taints, func(t corev1.Taint) bool { return t.Key == taintKey })
		if i < 0 {
			continue
		}
		after, pool := b.OpenAfter, ""
		if pl, ok := claimant(n, n.Taints[i], pools); ok {
			after, pool = pl.OpenAfter, pl.Name
		}
		waited := now.Sub(n.Created)
		if waited < after+b.Grace {
			continue
		}
		taints := slices.DeleteFunc(slices.Clone(n.Taints), func(t corev1.Taint) bool { return t.Key == taintKey })
		p.Open = append(p.Open, Open{Node: n, Taints: taints, Waited: waited, Pool: pool})
	}
	sort.Slice(p.Release, func(i, j int) bool {
		a, b := p.Release[i].Pod, p.Release[j].Pod
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	sort.Slice(p.Open, func(i, j int) bool { return p.Open[i].Node.Name < p.Open[j].Node.Name })
	return p
}

// claimant is the pool whose startup taint the node carries and whose
// node selector it matches; with several, the one of shortest openAfter
// (the node opens no later than any of them would open it).
func claimant(n Node, t corev1.Taint, pools []Pool) (Pool, bool) {
	var best Pool
	found := false
	for _, pl := range pools {
		if pl.Taint.Key != t.Key || pl.Taint.Value != t.Value || pl.Taint.Effect != t.Effect || !matches(pl.NodeSelector, n.Labels) {
			continue
		}
		if !found || pl.OpenAfter < best.OpenAfter {
			best, found = pl, true
		}
	}
	return best, found
}

func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func without(gates []string, gate string) []string {
	out := make([]string, 0, len(gates))
	for _, g := range gates {
		if g != gate {
			out = append(out, g)
		}
	}
	return out
}
