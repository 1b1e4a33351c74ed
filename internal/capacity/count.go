package capacity

import (
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// MaxUnauthorized bounds status.atProvider.unauthorizedExecutors;
// unauthorizedCount counts them all.
const MaxUnauthorized = 20

// PoolKey returns the pool label value that the snapshot groups a
// PoolCapacity's nodes and pods by: the e6data.io/pool value of its node
// selector, else of its executor selector, else the Pool's name.
func PoolKey(spec v1alpha1.PoolCapacityParameters) string {
	if v, ok := spec.NodeSelector[qsv1alpha1.LabelPool]; ok {
		return v
	}
	if v, ok := spec.ExecutorSelector[qsv1alpha1.LabelPool]; ok {
		return v
	}
	return spec.Pool.Name
}

// A tally is what one pass over a pool's nodes and pods counts: the
// counters of the observation, and what the decisions after it read.
type tally struct {
	pool string
	// obs holds the counters: nodes, slots, occupied, draining, pending,
	// unauthorized executors, requests.
	obs v1alpha1.PoolCapacityObservation
	req requests
	// poolNodes says, for each pool node, whether it gives slots.
	poolNodes map[string]bool
	// place tells whether a pod that asks for the pool's nodes could run
	// on one of them.
	place *placer
	// attached tallies each attached QueryService; attachedNS holds their
	// namespaces.
	attached   map[qsKey]*qsTally
	attachedNS map[string]bool
	// waiting are the executors pending at the executor gate.
	waiting []*Pod
	// evictable are the executors a policy may evict, in pod order:
	// failed ones an earlier status records, and unauthorized ones
	// (evict.go decides which policies are on).
	evictable []Eviction
	failures  failureLog
	warmups   warmups
}

// requests sums what executors request.
type requests struct{ cpuMillis, memoryBytes int64 }

type qsKey struct{ namespace, name string }

type qsTally struct {
	executors int32
	pending   int32
	earliest  time.Time
	// occupying are its executors that hold a slot, for evicting the
	// newest above its share.
	occupying []*Pod
	// present is true while the QueryService has any pool executor, even
	// one that is terminating or not yet bound: its allocation goes on.
	present bool
}

// A placement is where an executor pod is bound.
type placement struct {
	// onPool: bound to a node of the pool; givesSlots: that node gives
	// slots.
	onPool, givesSlots bool
	// nodeLost: bound to a node since deleted.
	nodeLost bool
}

// count tallies the pool spec describes as snap holds it, in one pass
// over its nodes and one over its pods (and the failed pods since
// deleted). prev is the current status.atProvider, whose failures are
// carried over.
func count(spec v1alpha1.PoolCapacityParameters, snap Snapshot, prev v1alpha1.PoolCapacityObservation, now time.Time) *tally {
	t := &tally{pool: PoolKey(spec), poolNodes: map[string]bool{},
		attached: make(map[qsKey]*qsTally, len(spec.QueryServices)), attachedNS: make(map[string]bool, len(spec.QueryServices)),
		failures: newFailureLog(prev.Failures), warmups: newWarmups()}
	t.countNodes(spec, snap)
	for _, qs := range spec.QueryServices {
		t.attached[qsKey{qs.Namespace, qs.Name}] = &qsTally{}
		t.attachedNS[qs.Namespace] = true
	}
	gate := waitingGate(spec)
	snap.Pods(t.pool, func(p *Pod) bool {
		switch {
		case matches(spec.ExecutorSelector, p.Labels):
			if p.State == PodPending && slices.Contains(p.Gates, gate) {
				t.waiting = append(t.waiting, p)
			}
			if o, ok := t.where(snap, p); ok {
				t.executor(spec, p, o, now)
			}
		case len(spec.WarmupSelector) > 0 && matches(spec.WarmupSelector, p.Labels) && p.Namespace == spec.Pool.Namespace:
			// The pool's warmup DaemonSets run in the pool's namespace;
			// a pod elsewhere with their labels is anyone's.
			t.warmups.add(p)
		}
		return true
	})
	// Executors deleted since they failed count for nothing, but their
	// failure is recorded: a drain or a spot reclaim leaves its reason.
	snap.Departed(t.pool, func(p *Pod) bool {
		if _, ok := t.where(snap, p); ok && matches(spec.ExecutorSelector, p.Labels) {
			if d, failed := Diagnose(p, false); failed {
				t.failures.record(p, d, now)
			}
		}
		return true
	})
	t.obs.AvailableExecutors = max(0, t.obs.TotalExecutors-t.obs.OccupiedExecutors)
	return t
}

// countNodes counts the pool's nodes and the slots they give: a Ready node
// not being deleted gives executorsPerNode slots while it is schedulable,
// or while the pool's executors tolerate its taints and it is not
// cordoned. Every pool node, whatever its state, is a node a pod that
// asks for the pool could be placed on (placer).
func (t *tally) countNodes(spec v1alpha1.PoolCapacityParameters, snap Snapshot) {
	var slots int64
	var nodes []*Node
	snap.Nodes(t.pool, func(n *Node) bool {
		if !matches(spec.NodeSelector, n.Labels) {
			return true
		}
		nodes = append(nodes, n)
		t.poolNodes[n.Name] = false
		if !n.Ready || n.Deleting {
			t.obs.Nodes.NotReady++
			return true
		}
		t.obs.Nodes.Ready++
		if n.Schedulable || (!n.Cordoned && len(spec.Tolerations) > 0 && tolerated(spec.Tolerations, n.Taints)) {
			t.poolNodes[n.Name] = true
			slots += int64(spec.ExecutorsPerNode)
		}
		return true
	})
	t.place = newPlacer(spec, nodes)
	t.obs.TotalExecutors = int32(min(slots, int64(spec.MaxExecutors)))
	if spec.Suspend {
		t.obs.TotalExecutors = 0
	}
}

// where tells where an executor is: bound to a node of the pool, or to a
// node since deleted; ok is false for a pod that is not the pool's to
// count.
func (t *tally) where(snap Snapshot, p *Pod) (o placement, ok bool) {
	o.givesSlots, o.onPool = t.poolNodes[p.NodeName]
	o.nodeLost = p.NodeName != "" && !o.onPool && snap.NodeGone(p.NodeName)
	return o, counts(p, o, t.attachedNS)
}

// counts reports whether executor p is the pool's to count: it is bound to
// a pool node, or it comes from the namespace of an attached QueryService
// and is not bound (yet) or its node is gone. Anyone may create a pod with
// the pool's labels in a namespace of their own; unless it gets onto the
// pool's nodes it moves no counter, failure record or eviction.
func counts(p *Pod, o placement, attachedNS map[string]bool) bool {
	return o.onPool || (attachedNS[p.Namespace] && (p.NodeName == "" || o.nodeLost))
}

// waits reports whether an unbound pending executor that could run on a
// pool node (placer) waits for room on the pool: it asks for the pool's
// nodes (aims) and the scheduler found none with room (Unschedulable). A
// pod held by scheduling gates, not yet tried, or aiming at other nodes
// waits for nothing the pool could give. This is
// the test Karpenter's provisioner applies before it launches nodes for a
// pod (kubernetes-sigs/karpenter pkg/utils/pod/scheduling.go,
// FailedToSchedule: PodScheduled False with reason Unschedulable).
func waits(spec v1alpha1.PoolCapacityParameters, p *Pod) bool {
	return p.Unschedulable && aims(spec, p.Aim)
}

// executor counts one pool executor pod that counts, placed at o.
func (t *tally) executor(spec v1alpha1.PoolCapacityParameters, p *Pod, o placement, now time.Time) {
	qs := p.Labels[qsv1alpha1.LabelQueryService]
	if d, failed := Diagnose(p, o.nodeLost); failed {
		if recorded := t.failures.record(p, d, now); recorded && p.State == PodFailed {
			t.evictable = append(t.evictable, Eviction{Pod: p.Key(), UID: p.UID, Reason: EvictFailed, Owner: p.Owner})
		}
	}

	a, ok := t.attached[qsKey{p.Namespace, qs}]
	if p.State != PodPending && p.State != PodRunning && p.State != PodDeleted {
		return
	}
	if p.State == PodPending && p.NodeName == "" && aims(spec, p.Aim) {
		if why := t.place.unplaceable(p.Aim); why != "" {
			// It asks for the pool's nodes but could run on none of
			// them: it waits for nothing the pool can give, and is
			// listed, not counted.
			t.obs.UnplaceableExecutors = append(t.obs.UnplaceableExecutors,
				v1alpha1.UnplaceableExecutor{Pod: p.Name, Namespace: p.Namespace, QueryService: qs, Reason: why})
			return
		}
	}
	if ok {
		a.present = true
	}
	if p.State == PodDeleted || (p.State == PodPending && p.NodeName == "" && !waits(spec, p)) {
		// Terminating, or not waiting for the pool (gated, not yet
		// tried, aimed elsewhere): its QueryService's allocation goes
		// on, and nothing else counts.
		return
	}
	if p.State == PodPending {
		t.obs.PendingExecutors++
	}
	t.req.cpuMillis += p.CPUMillis
	t.req.memoryBytes += p.MemoryBytes
	// An executor on a pool node holds a slot only where the node gives
	// slots; on a cordoned, disrupted or not Ready node it is draining.
	onNode := o.onPool && !o.nodeLost && (p.State == PodRunning || p.NodeName != "")
	switch {
	case onNode && o.givesSlots:
		t.obs.OccupiedExecutors++
	case onNode:
		t.obs.DrainingExecutors++
	}
	if !ok {
		t.obs.UnauthorizedExecutors = append(t.obs.UnauthorizedExecutors, v1alpha1.UnauthorizedExecutor{Pod: p.Name, Namespace: p.Namespace, QueryService: qs})
		t.evictable = append(t.evictable, Eviction{Pod: p.Key(), UID: p.UID, Reason: EvictUnauthorized, Owner: p.Owner})
		return
	}
	if onNode {
		a.executors++
		a.occupying = append(a.occupying, p)
		if a.earliest.IsZero() || (!p.Started.IsZero() && p.Started.Before(a.earliest)) {
			a.earliest = p.Started
		}
	} else if p.State == PodPending {
		a.pending++
	}
}

// requested is status.atProvider.requested: what the counted executors
// request; nil when nothing.
func (t *tally) requested() *v1alpha1.Requested {
	if t.req.cpuMillis <= 0 && t.req.memoryBytes <= 0 {
		return nil
	}
	return &v1alpha1.Requested{
		CPU:    *resource.NewMilliQuantity(t.req.cpuMillis, resource.DecimalSI),
		Memory: *resource.NewQuantity(t.req.memoryBytes, resource.BinarySI),
	}
}

// unauthorized sorts the unauthorized executors and keeps the first
// MaxUnauthorized; the count counts them all.
func unauthorized(list []v1alpha1.UnauthorizedExecutor) ([]v1alpha1.UnauthorizedExecutor, int32) {
	return firstByPod(list, MaxUnauthorized, func(u v1alpha1.UnauthorizedExecutor) PodKey { return PodKey{u.Namespace, u.Pod} })
}

// allocations is status.atProvider.allocations: one per attached
// QueryService, dated from the previous status while it keeps executors.
func allocations(spec v1alpha1.PoolCapacityParameters, attached map[qsKey]*qsTally, prev v1alpha1.PoolCapacityObservation, now time.Time) []v1alpha1.Allocation {
	if len(spec.QueryServices) == 0 {
		return nil
	}
	prevAt := make(map[qsKey]*metav1.Time, len(prev.Allocations))
	for _, a := range prev.Allocations {
		prevAt[qsKey{a.Namespace, a.QueryService}] = a.AllocatedAt
	}
	out := make([]v1alpha1.Allocation, 0, len(spec.QueryServices))
	for _, qs := range spec.QueryServices {
		k := qsKey{qs.Namespace, qs.Name}
		t := attached[k]
		a := v1alpha1.Allocation{QueryService: qs.Name, Namespace: qs.Namespace, PoolExecutors: t.executors, RegularExecutors: qs.RegularExecutors,
			PendingExecutors: t.pending, MaxPoolExecutors: qs.MaxPoolExecutors}
		switch at := prevAt[k]; {
		case at != nil && t.present:
			a.AllocatedAt = at.DeepCopy()
		case t.executors == 0:
		case !t.earliest.IsZero():
			a.AllocatedAt = &metav1.Time{Time: t.earliest.UTC().Truncate(time.Second)}
		default:
			a.AllocatedAt = &metav1.Time{Time: now}
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].QueryService < out[j].QueryService
	})
	return out
}

// waitingGate is the gate executors wait at: the spec's executor gate, or
// the well-known one when the spec names none (any longer), so that
// executors gated before the pool stopped holding any back are still
// released.
func waitingGate(spec v1alpha1.PoolCapacityParameters) string {
	if g := spec.ExecutorGate; g != "" {
		return g
	}
	return qsv1alpha1.GateExecutor
}
