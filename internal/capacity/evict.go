package capacity

import (
	"time"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// An Eviction is a pod to delete and why.
type Eviction struct {
	Pod PodKey
	// UID guards against deleting a newer pod of the same name.
	UID    string
	Reason string
	// Owner is the pod's controller (kind/name), or empty: evictions back
	// off per owner, which would otherwise recreate what they remove.
	Owner string
}

// Eviction reasons.
const (
	EvictFailed       = "FailedExecutor"
	EvictUnauthorized = "UnauthorizedExecutor"
	EvictOverShare    = "OverShareExecutor"
)

// policyEvictions keeps of the evictable executors those the pool's
// policies evict: failed executors whose failure an earlier status already
// records, when deleteFailedExecutors is on, and unauthorized executors,
// when unauthorizedExecutors is Evict. A suspended pool evicts nothing.
func policyEvictions(spec v1alpha1.PoolCapacityParameters, evictable []Eviction) []Eviction {
	if spec.Suspend {
		return nil
	}
	var out []Eviction
	for _, ev := range evictable {
		switch ev.Reason {
		case EvictFailed:
			if spec.Policies.DeleteFailedExecutors {
				out = append(out, ev)
			}
		case EvictUnauthorized:
			if spec.Policies.UnauthorizedExecutors == v1alpha1.UnauthorizedEvict {
				out = append(out, ev)
			}
		}
	}
	return out
}

// Unsettled reports whether a pod of evs is still in snap and not yet
// terminating: the snapshot has not caught up with those evictions, so
// counting again would evict for the same waiters twice.
func Unsettled(snap Snapshot, evs []Eviction) bool {
	for _, ev := range evs {
		if p, ok := snap.Pod(ev.Pod); ok && p.UID == ev.UID && p.State != PodDeleted {
			return true
		}
	}
	return false
}

// OverShareHold bounds how long over-share evictions wait for the snapshot
// to show the last ones (an eviction a PodDisruptionBudget refused never
// shows).
const OverShareHold = 30 * time.Second

// HoldOverShare returns evs without its over-share evictions while the
// last ones let through (last, at lastAt) are not yet seen in snap, for at
// most OverShareHold: until then the waiters they made room for still
// look waiting, and evicting again would evict for them twice. shed lists
// the over-share evictions it lets through, to remember as the last ones;
// nil when it holds them or there are none.
func HoldOverShare(snap Snapshot, evs, last []Eviction, lastAt, now time.Time) (out, shed []Eviction) {
	wait := now.Sub(lastAt) < OverShareHold && Unsettled(snap, last)
	out = make([]Eviction, 0, len(evs))
	for _, ev := range evs {
		if ev.Reason == EvictOverShare {
			if wait {
				continue
			}
			shed = append(shed, ev)
		}
		out = append(out, ev)
	}
	return out, shed
}
