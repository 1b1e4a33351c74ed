package capacity

import (
	"slices"
	"sort"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// An Ungate is a placeholder pod whose scheduling gate is removed, so that
// it holds a warm slot.
type Ungate struct {
	Pod  PodKey
	UID  string
	Gate string
}

// warmPods is what the pool's warm slots are decided from, counted in one
// pass over its pods.
type warmPods struct {
	// wanted is how many warm slots the pool wants held now: its slots
	// less the executors that occupy a slot or wait unbound for the
	// pool's nodes, which a free slot is about to take. An unbound pod
	// counts only when it could run on a pool node (placer), and only in
	// the namespace of an attached QueryService, as
	// Compute counts executors (counts): anyone may create pods with the
	// pool's labels in a namespace of their own, and they must not empty
	// another tenant's warm slots.
	wanted int32
	// held counts the placeholders that hold a warm slot: bound, or
	// pending without the gate; terminating ones do not. Placeholders run
	// in the pool's namespace: a pod with their labels elsewhere is
	// anyone's.
	held int32
	// gated lists the placeholders still gated.
	gated []*Pod
	// leaving counts the pool's executors and placeholders terminating on
	// a pool node. They hold no slot, but their node's room is not free
	// until they are gone: a buffer that asked for it at once would have
	// the autoscaler see it short and launch a node for it.
	leaving int32
}

// countWarmPods counts the pool's pods for its warm slots; poolNodes,
// attachedNS and place are Compute's pool nodes, the namespaces of the
// attached QueryServices and what tells whether a pod could run on a pool
// node.
func countWarmPods(spec v1alpha1.PoolCapacityParameters, snap Snapshot, pool string, occupied int32, poolNodes, attachedNS map[string]bool, place *placer) warmPods {
	w := spec.WarmSlots
	c := warmPods{wanted: w.Slots - occupied}
	snap.Pods(pool, func(p *Pod) bool {
		executor := matches(spec.ExecutorSelector, p.Labels)
		placeholder := !executor && len(w.Selector) > 0 && p.Namespace == spec.Pool.Namespace && matches(w.Selector, p.Labels)
		_, onPool := poolNodes[p.NodeName]
		switch {
		case !executor && !placeholder:
		case p.State == PodDeleted:
			if onPool {
				c.leaving++
			}
		case executor:
			if p.NodeName == "" && p.State == PodPending && attachedNS[p.Namespace] && aims(spec, p.Aim) && place.unplaceable(p.Aim) == "" {
				c.wanted--
			}
		case p.State != PodPending && p.State != PodRunning:
		case w.Gate != "" && slices.Contains(p.Gates, w.Gate):
			c.gated = append(c.gated, p)
		default:
			c.held++
		}
		return true
	})
	c.wanted = max(0, c.wanted)
	return c
}

// ungates decides which gated placeholder pods to release: as many as the
// pool wants warm slots beyond those held. A placeholder an executor just
// preempted is recreated gated by its ReplicaSet, and stays gated while
// the executor that took its slot counts, until the pool lowers the
// placeholders' replicas and the ReplicaSet removes it (unscheduled pods
// first). The oldest gated placeholders go first.
func ungates(spec v1alpha1.PoolCapacityParameters, c warmPods) []Ungate {
	w := spec.WarmSlots
	if len(w.Selector) == 0 || w.Gate == "" || spec.Suspend {
		return nil
	}
	want := c.wanted - c.held
	gated := c.gated
	if want <= 0 || len(gated) == 0 {
		return nil
	}
	sort.Slice(gated, func(i, j int) bool {
		if !gated[i].Started.Equal(gated[j].Started) {
			return gated[i].Started.Before(gated[j].Started)
		}
		return gated[i].Name < gated[j].Name
	})
	out := make([]Ungate, 0, min(int(want), len(gated)))
	for _, p := range gated[:min(int(want), len(gated))] {
		out = append(out, Ungate{Pod: p.Key(), UID: p.UID, Gate: w.Gate})
	}
	return out
}

// A BufferScale is the replica count the pool's CapacityBuffer is kept at.
type BufferScale struct {
	Namespace, Name string
	Replicas        int32
}

// bufferScale decides the pool's CapacityBuffer replicas: the slots the
// pool wants less those placeholders still hold and the room pods leaving
// still take, while the buffer holds them; 0 while it does not or the
// pool is suspended. Lowering them as soon as an executor is created,
// bound or not, narrows the time in which an autoscaler sees the buffer
// short and restores on a new node the room the executor took, a node the
// pool would give back a moment later; counting the placeholders keeps the
// buffer from asking for slots placeholders hold until they go, when it
// takes over from them.
func bufferScale(spec v1alpha1.PoolCapacityParameters, c warmPods) *BufferScale {
	b := spec.WarmSlots.CapacityBuffer
	if b == nil || b.Name == "" {
		return nil
	}
	out := &BufferScale{Namespace: spec.Pool.Namespace, Name: b.Name}
	if b.Holds && !spec.Suspend {
		out.Replicas = max(0, c.wanted-c.held-c.leaving)
	}
	return out
}

// bufferHolds tells whether a CapacityBuffer holds the pool's warm slots.
func bufferHolds(spec v1alpha1.PoolCapacityParameters) bool {
	return spec.WarmSlots != nil && spec.WarmSlots.CapacityBuffer != nil && spec.WarmSlots.CapacityBuffer.Holds && !spec.Suspend
}
