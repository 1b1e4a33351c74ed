package capacity

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// A Result is what Compute decided for one PoolCapacity: the observation
// to write as its status, and the Plan to apply to the pool's cluster.
type Result struct {
	// Observation is the new status.atProvider.
	Observation v1alpha1.PoolCapacityObservation

	// Changed is false when Observation equals the previous one; its
	// observedAt is then the previous one too.
	Changed bool

	// WarmImagesReady counts the images that have at least one running
	// warmup pod on the pool.
	WarmImagesReady int32

	// Failing holds the failure of every failed pod in the snapshot, listed
	// in status or not (status lists at most MaxFailures): counters count
	// each (pod, reason) once from it.
	Failing []v1alpha1.Failure

	Plan
}

// A Plan is what the pool's cluster should be changed to, each part
// decided in its own file and applied by its own actuator: nodes to open
// (taints.go), placeholders to release and the buffer's scale (warm.go),
// the executor gate and the executors it may release (gate.go), and pods
// to evict (evict.go, shares.go).
type Plan struct {
	// Open lists the warming pool nodes to open to executors.
	Open []Opening

	// Ungate lists the placeholder pods to release from their scheduling
	// gate.
	Ungate []Ungate

	// Buffer is the replica count of the pool's CapacityBuffer, when
	// warmSlots names one.
	Buffer *BufferScale

	// Gate is the admission gate of the pool's new executors, or nil when
	// none is to be bound.
	Gate *ExecutorGate

	// Release lists the executors waiting at the gate, and when they go.
	Release *Release

	// Evict lists the pods the policies say to delete: failed executors
	// whose failure an earlier status already records, when
	// deleteFailedExecutors is on; unauthorized executors, when
	// unauthorizedExecutors is Evict; executors above their share, when
	// enforceShares is on. It is empty for a suspended pool.
	Evict []Eviction
}

// Compute returns the observed capacity of the pool spec describes, as snap
// holds it, and the plan for its cluster. prev is the current
// status.atProvider: allocation times and failure times are carried over
// from it, and failures it lists stay (newest first, at most MaxFailures)
// after their pods are gone. now is truncated to seconds, the precision
// status keeps.
//
// It counts once (count.go), then decides, in this order: the
// observation, the startup taints, the warm slots, the executor gate, what
// of the last two is overdue (overdue.go) and the evictions.
func Compute(spec v1alpha1.PoolCapacityParameters, snap Snapshot, prev v1alpha1.PoolCapacityObservation, now time.Time) Result {
	now = now.UTC().Truncate(time.Second)
	t := count(spec, snap, prev, now)

	obs := t.obs
	obs.Requested = t.requested()
	obs.Allocations = allocations(spec, t.attached, prev, now)
	obs.Failures = t.failures.merged(prev.Failures)
	obs.WarmupFailures = t.warmups.failures(prev.WarmupFailures)
	obs.UnauthorizedExecutors, obs.UnauthorizedCount = unauthorized(obs.UnauthorizedExecutors)
	obs.UnplaceableExecutors, obs.UnplaceableCount = unplaceables(obs.UnplaceableExecutors)

	var plan Plan
	plan.Open, obs.WarmingNodes = openings(spec, snap, t.pool, now)
	obs.OpenedCold = openedCold(plan.Open, prev.OpenedCold, snap, t.pool, now)
	if spec.WarmSlots != nil {
		w := countWarmPods(spec, snap, t.pool, obs.OccupiedExecutors, t.poolNodes, t.attachedNS, t.place)
		plan.Ungate = ungates(spec, w)
		plan.Buffer = bufferScale(spec, w)
	}
	plan.Gate = executorGate(spec, t.attachedNS)
	plan.Release = releases(spec, t.waiting, plan.Buffer, t.attachedNS, sharesHold(spec, t.attached, obs.OccupiedExecutors), now)
	obs.Overdue = overdue(spec, t.waiting, plan.Release, plan.Open, t.attachedNS, now)
	plan.Evict = append(policyEvictions(spec, t.evictable), overShare(spec, t.attached, obs.OccupiedExecutors)...)
	if spec.Suspend {
		plan.Evict = nil
	}

	// The cost and the executor starts are accounted apart
	// (internal/cost), from the same snapshot.
	obs.ObservedAt, obs.LastObservedTime = prev.ObservedAt, prev.LastObservedTime
	obs.Cost, obs.ExecutorStarts = prev.Cost, prev.ExecutorStarts
	// So are the demand history and the learned warm level
	// (internal/demand).
	obs.Demand, obs.WarmRecommendation = prev.Demand, prev.WarmRecommendation
	res := Result{Changed: !equality.Semantic.DeepEqual(obs, prev), WarmImagesReady: int32(len(t.warmups.ready)),
		Failing: t.failures.current, Plan: plan}
	if res.Changed {
		obs.ObservedAt = metav1.NewTime(now)
	}
	res.Observation = obs
	return res
}

// LastObserved is the new status.atProvider.lastObservedTime: when the
// pool's cluster was last known current (lastSync), moved in steps of at
// least step, so that a quiet pool's status is rewritten rarely; prev
// while lastSync is unknown or within a step of it.
func LastObserved(prev *metav1.Time, lastSync time.Time, step time.Duration) *metav1.Time {
	if lastSync.IsZero() || (prev != nil && lastSync.Sub(prev.Time) < step) {
		return prev
	}
	return &metav1.Time{Time: lastSync.UTC().Truncate(time.Second)}
}
