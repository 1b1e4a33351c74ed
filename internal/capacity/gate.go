package capacity

import (
	"sort"
	"time"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// ExecutorGateBound is the longest a new executor waits at the executor
// gate for the buffer's autoscaler: past it the executor is released
// whether or not the autoscaler has seen the lower count, so that an
// autoscaler that is slow or gone delays a burst by at most this much.
const ExecutorGateBound = 10 * time.Second

// An ExecutorGate says which new pods the admission policy gates for the
// pool: those created with every Selector label in one of Namespaces.
type ExecutorGate struct {
	Gate       string
	Namespaces []string
	Selector   map[string]string
}

// executorGate decides the pool's executor gate: while the spec names one
// and the pool may hold executors back (a buffer holds its warm slots, or
// its shares are enforced), executors created in the attached
// QueryServices' namespaces are gated; otherwise (nil) none are. Only
// those namespaces: an executor elsewhere takes no warm slot and has no
// share, and a gate there would only delay it.
func executorGate(spec v1alpha1.PoolCapacityParameters, attachedNS map[string]bool) *ExecutorGate {
	if spec.ExecutorGate == "" || len(attachedNS) == 0 || (!bufferHolds(spec) && !sharesEnforced(spec)) {
		return nil
	}
	ns := make([]string, 0, len(attachedNS))
	for n := range attachedNS {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return &ExecutorGate{Gate: spec.ExecutorGate, Namespaces: ns, Selector: spec.ExecutorSelector}
}

// A Release is the pool's executors waiting at the executor gate that may
// go, and when.
type Release struct {
	// Now are released at once: nothing holds them back (or not any
	// longer), or they have waited ExecutorGateBound for the buffer.
	Now []Ungate
	// Buffered are released once the buffer's autoscaler reports at most
	// Buffer.Replicas, the count that leaves their slots to them.
	Buffered []Ungate
	Buffer   *BufferScale
	// Until is when the first of Buffered reaches ExecutorGateBound.
	Until time.Time
}

// releases decides when the executors at the gate go; nil when none may
// go now.
//
// Shares first: an executor whose QueryService is at or above its share
// stays while QueryServices below theirs have executors waiting that the
// pool has no free slot for, the case in which the pool evicts for them
// (overShare). Released, it would take the slot an eviction just freed for
// a waiter (a ReplicaSet replaces an evicted executor at once, and the
// scheduler tries a new pod before one in backoff), and be evicted in
// turn. It goes as soon as the waiters are placed: nothing bounds it but
// the waiters' own share.
//
// Then the buffer: an executor counts against the buffer's replicas from
// its creation (countWarmPods), so the count bufferScale applies already
// leaves its slot; it waits only until the autoscaler has seen that count,
// or ExecutorGateBound, because an executor that takes the slot before
// then has the autoscaler restore the slot's room on a new node.
func releases(spec v1alpha1.PoolCapacityParameters, waiting []*Pod, buffer *BufferScale, attachedNS map[string]bool, sharesHold func(*Pod) bool, now time.Time) *Release {
	if len(waiting) == 0 {
		return nil
	}
	gate := waitingGate(spec)
	buffered := spec.ExecutorGate != "" && buffer != nil && bufferHolds(spec)
	shares := spec.ExecutorGate != "" && sharesEnforced(spec)
	r := &Release{}
	for _, p := range waiting {
		u := Ungate{Pod: p.Key(), UID: p.UID, Gate: gate}
		until := p.Created.Add(ExecutorGateBound)
		switch {
		case !attachedNS[p.Namespace]:
			r.Now = append(r.Now, u)
		case shares && sharesHold(p):
		case buffered && now.Before(until):
			r.Buffered = append(r.Buffered, u)
			if r.Until.IsZero() || until.Before(r.Until) {
				r.Until = until
			}
		default:
			r.Now = append(r.Now, u)
		}
	}
	if len(r.Now) == 0 && len(r.Buffered) == 0 {
		return nil
	}
	if len(r.Buffered) > 0 {
		r.Buffer = buffer
	}
	sortUngates(r.Now)
	sortUngates(r.Buffered)
	return r
}

func sortUngates(us []Ungate) {
	sort.Slice(us, func(i, j int) bool {
		if us[i].Pod.Namespace != us[j].Pod.Namespace {
			return us[i].Pod.Namespace < us[j].Pod.Namespace
		}
		return us[i].Pod.Name < us[j].Pod.Name
	})
}
