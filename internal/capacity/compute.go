package capacity

import (
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// MaxFailures bounds status.atProvider.failures.
const MaxFailures = 20

// MaxUnauthorized bounds status.atProvider.unauthorizedExecutors;
// unauthorizedCount counts them all.
const MaxUnauthorized = 20

// A Result is what Compute decided for one PoolCapacity.
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

	// Evict lists the pods the policies say to delete: failed executors
	// whose failure an earlier status already records, when
	// deleteFailedExecutors is on, and unauthorized executors, when
	// unauthorizedExecutors is Evict. It is empty for a suspended pool.
	Evict []Eviction

	// Open lists the warming pool nodes to open to executors (startup).
	Open []Opening

	// Ungate lists the placeholder pods to release from their scheduling
	// gate (warmSlots).
	Ungate []Ungate

	// Buffer is the replica count of the pool's CapacityBuffer, when
	// warmSlots names one (startup.go).
	Buffer *BufferScale

	// Gate is the admission gate of the pool's new executors, or nil when
	// none is to be bound (startup.go).
	Gate *ExecutorGate

	// Release lists the executors waiting at the gate, and when they go.
	Release *Release
}

// requests sums what executors request.
type requests struct{ cpuMillis, memoryBytes int64 }

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

// A failureKey identifies a failure record: one per pod, whatever its
// reason, so that a pod that fails again updates its record.
type failureKey struct{ namespace, pod string }

type warmTally struct {
	reason, message string
	nodes           map[string]struct{}
}

// Compute returns the observed capacity of the pool spec describes, as snap
// holds it. prev is the current status.atProvider: allocation times and
// failure times are carried over from it, and failures it lists stay (newest
// first, at most MaxFailures) after their pods are gone. now is truncated to
// seconds, the precision status keeps.
func Compute(spec v1alpha1.PoolCapacityParameters, snap Snapshot, prev v1alpha1.PoolCapacityObservation, now time.Time) Result {
	now = now.UTC().Truncate(time.Second)
	pool := PoolKey(spec)
	epn := max(spec.ExecutorsPerNode, 1)

	var obs v1alpha1.PoolCapacityObservation
	// poolNodes says, for each pool node, whether it gives slots.
	poolNodes := map[string]bool{}
	var slots int64
	snap.Nodes(pool, func(n *Node) bool {
		if !matches(spec.NodeSelector, n.Labels) {
			return true
		}
		poolNodes[n.Name] = false
		if !n.Ready || n.Deleting {
			obs.Nodes.NotReady++
			return true
		}
		obs.Nodes.Ready++
		if n.Schedulable || (!n.Cordoned && len(spec.Tolerations) > 0 && tolerated(spec.Tolerations, n.Taints)) {
			poolNodes[n.Name] = true
			slots += int64(epn)
		}
		return true
	})
	obs.TotalExecutors = int32(min(slots, int64(spec.MaxExecutors)))
	if spec.Suspend {
		obs.TotalExecutors = 0
	}

	attached := make(map[qsKey]*qsTally, len(spec.QueryServices))
	attachedNS := make(map[string]bool, len(spec.QueryServices))
	for _, qs := range spec.QueryServices {
		attached[qsKey{qs.Namespace, qs.Name}] = &qsTally{}
		attachedNS[qs.Namespace] = true
	}
	// where tells where an executor is: bound to a node of the pool, or to
	// a node since deleted; ok is false for a pod that is not the pool's
	// to count.
	where := func(p *Pod) (o placement, ok bool) {
		o.givesSlots, o.onPool = poolNodes[p.NodeName]
		o.nodeLost = p.NodeName != "" && !o.onPool && snap.NodeGone(p.NodeName)
		return o, counts(p, o, attachedNS)
	}
	prevFailures := make(map[failureKey]v1alpha1.Failure, len(prev.Failures))
	for _, f := range prev.Failures {
		prevFailures[failureKey{f.Namespace, f.Pod}] = f
	}

	var res Result
	var req requests
	var failures []v1alpha1.Failure
	seen := map[failureKey]struct{}{}
	warm := map[string]*warmTally{}
	warmReady := map[string]struct{}{}

	gate := waitingGate(spec)
	var waiting []*Pod
	snap.Pods(pool, func(p *Pod) bool {
		switch {
		case matches(spec.ExecutorSelector, p.Labels):
			if p.State == PodPending && slices.Contains(p.Gates, gate) {
				waiting = append(waiting, p)
			}
			if o, ok := where(p); ok {
				res.executor(spec, p, o, attached, prevFailures, seen, &failures, &obs, &req, now)
			}
		case len(spec.WarmupSelector) > 0 && matches(spec.WarmupSelector, p.Labels) && p.Namespace == spec.Pool.Namespace:
			// The pool's warmup DaemonSets run in the pool's namespace;
			// a pod elsewhere with their labels is anyone's.
			warmup(p, warm, warmReady)
		}
		return true
	})
	// Executors deleted since they failed count for nothing, but their
	// failure is recorded: a drain or a spot reclaim leaves its reason.
	snap.Departed(pool, func(p *Pod) bool {
		if _, ok := where(p); ok && matches(spec.ExecutorSelector, p.Labels) {
			if d, failed := Diagnose(p, false); failed {
				res.failure(p, d, prevFailures, seen, &failures, now)
			}
		}
		return true
	})

	obs.AvailableExecutors = max(0, obs.TotalExecutors-obs.OccupiedExecutors)
	if req.cpuMillis > 0 || req.memoryBytes > 0 {
		obs.Requested = &v1alpha1.Requested{
			CPU:    *resource.NewMilliQuantity(req.cpuMillis, resource.DecimalSI),
			Memory: *resource.NewQuantity(req.memoryBytes, resource.BinarySI),
		}
	}
	obs.Allocations = allocations(spec, attached, prev, now)
	if spec.Policies.EnforceShares {
		res.Evict = append(res.Evict, overShare(spec, attached, obs.OccupiedExecutors)...)
	}
	res.Gate = gateBinding(spec, attachedNS)
	obs.Failures = mergeFailures(failures, prev.Failures, seen)
	obs.WarmupFailures = warmupFailures(warm, prev.WarmupFailures)
	sort.Slice(obs.UnauthorizedExecutors, func(i, j int) bool {
		a, b := obs.UnauthorizedExecutors[i], obs.UnauthorizedExecutors[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Pod < b.Pod
	})
	obs.UnauthorizedCount = int32(len(obs.UnauthorizedExecutors))
	if len(obs.UnauthorizedExecutors) > MaxUnauthorized {
		obs.UnauthorizedExecutors = obs.UnauthorizedExecutors[:MaxUnauthorized]
	}
	res.WarmImagesReady = int32(len(warmReady))
	res.Open, obs.WarmingNodes = openings(spec, snap, pool, now)
	obs.OpenedCold = openedCold(res.Open, prev.OpenedCold, snap, pool, now)
	if spec.WarmSlots != nil {
		c := countWarmPods(spec, snap, pool, obs.OccupiedExecutors, poolNodes, attachedNS)
		res.Ungate = ungates(spec, c)
		res.Buffer = bufferScale(spec, c)
	}
	res.Release = releases(spec, waiting, res.Buffer, attachedNS, sharesHold(spec, attached, obs.OccupiedExecutors), now)

	obs.ObservedAt = prev.ObservedAt
	obs.LastObservedTime = prev.LastObservedTime
	// The cost is accounted apart (internal/cost), from the same snapshot.
	obs.Cost = prev.Cost
	obs.ExecutorStarts = prev.ExecutorStarts
	res.Changed = !equality.Semantic.DeepEqual(obs, prev)
	if res.Changed {
		obs.ObservedAt = metav1.NewTime(now)
	}
	res.Observation = obs
	if spec.Suspend {
		res.Evict = nil
	}
	return res
}

// A placement is where an executor pod is bound.
type placement struct {
	// onPool: bound to a node of the pool; givesSlots: that node gives
	// slots.
	onPool, givesSlots bool
	// nodeLost: bound to a node since deleted.
	nodeLost bool
}

// counts reports whether executor p is the pool's to count: it is bound to
// a pool node, or it comes from the namespace of an attached QueryService
// and is not bound (yet) or its node is gone. Anyone may create a pod with
// the pool's labels in a namespace of their own; unless it gets onto the
// pool's nodes it moves no counter, failure record or eviction.
func counts(p *Pod, o placement, attachedNS map[string]bool) bool {
	return o.onPool || (attachedNS[p.Namespace] && (p.NodeName == "" || o.nodeLost))
}

// waits reports whether an unbound pending executor waits for room on the
// pool: it asks for the pool's nodes (aims) and the scheduler found none
// with room (Unschedulable). A pod held by scheduling gates, not yet tried,
// or aiming at other nodes waits for nothing the pool could give. This is
// the test Karpenter's provisioner applies before it launches nodes for a
// pod (kubernetes-sigs/karpenter pkg/utils/pod/scheduling.go,
// FailedToSchedule: PodScheduled False with reason Unschedulable).
func waits(spec v1alpha1.PoolCapacityParameters, p *Pod) bool {
	return p.Unschedulable && aims(spec, p.Aim)
}

// executor accounts for one pool executor pod that counts, placed at o.
func (res *Result) executor(spec v1alpha1.PoolCapacityParameters, p *Pod, o placement, attached map[qsKey]*qsTally, prevFailures map[failureKey]v1alpha1.Failure, seen map[failureKey]struct{}, failures *[]v1alpha1.Failure, obs *v1alpha1.PoolCapacityObservation, req *requests, now time.Time) {
	qs := p.Labels[qsv1alpha1.LabelQueryService]
	givesSlots, onPool, nodeLost := o.givesSlots, o.onPool, o.nodeLost

	if d, failed := Diagnose(p, nodeLost); failed {
		recorded := res.failure(p, d, prevFailures, seen, failures, now)
		if p.State == PodFailed && recorded && spec.Policies.DeleteFailedExecutors && !spec.Suspend {
			res.Evict = append(res.Evict, Eviction{Pod: p.Key(), UID: p.UID, Reason: EvictFailed, Owner: p.Owner})
		}
	}

	t, ok := attached[qsKey{p.Namespace, qs}]
	if p.State != PodPending && p.State != PodRunning && p.State != PodDeleted {
		return
	}
	if ok {
		t.present = true
	}
	if p.State == PodDeleted || (p.State == PodPending && p.NodeName == "" && !waits(spec, p)) {
		// Terminating, or not waiting for the pool (gated, not yet
		// tried, aimed elsewhere): its QueryService's allocation goes
		// on, and nothing else counts.
		return
	}
	if p.State == PodPending {
		obs.PendingExecutors++
	}
	req.cpuMillis += p.CPUMillis
	req.memoryBytes += p.MemoryBytes
	// An executor on a pool node holds a slot only where the node gives
	// slots; on a cordoned, disrupted or not Ready node it is draining.
	onNode := onPool && !nodeLost && (p.State == PodRunning || p.NodeName != "")
	switch {
	case onNode && givesSlots:
		obs.OccupiedExecutors++
	case onNode:
		obs.DrainingExecutors++
	}
	if !ok {
		obs.UnauthorizedExecutors = append(obs.UnauthorizedExecutors, v1alpha1.UnauthorizedExecutor{Pod: p.Name, Namespace: p.Namespace, QueryService: qs})
		if spec.Policies.UnauthorizedExecutors == v1alpha1.UnauthorizedEvict && !spec.Suspend {
			res.Evict = append(res.Evict, Eviction{Pod: p.Key(), UID: p.UID, Reason: EvictUnauthorized, Owner: p.Owner})
		}
		return
	}
	if onNode {
		t.executors++
		t.occupying = append(t.occupying, p)
		if t.earliest.IsZero() || (!p.Started.IsZero() && p.Started.Before(t.earliest)) {
			t.earliest = p.Started
		}
	} else if p.State == PodPending {
		t.pending++
	}
}

// overShare returns the evictions that bring QueryServices above their
// share (maxPoolExecutors) toward it while others below their share wait
// and the pool has no slot left for them (maxExecutors are occupied): as
// many slots as the waiting executors lack, never taking a QueryService
// below its share, newest executors first. Shares of zero are no bound.
func overShare(spec v1alpha1.PoolCapacityParameters, attached map[qsKey]*qsTally, occupied int32) []Eviction {
	waiting := waitersShort(spec, attached, occupied)
	var out []Eviction
	for _, qs := range spec.QueryServices {
		t := attached[qsKey{qs.Namespace, qs.Name}]
		if waiting == 0 {
			break
		}
		if qs.MaxPoolExecutors == 0 || t.executors <= qs.MaxPoolExecutors {
			continue
		}
		pods := slices.Clone(t.occupying)
		slices.SortFunc(pods, func(a, b *Pod) int {
			if c := b.Started.Compare(a.Started); c != 0 {
				return c
			}
			return strings.Compare(b.Name, a.Name)
		})
		n := min(t.executors-qs.MaxPoolExecutors, waiting)
		for _, p := range pods[:n] {
			out = append(out, Eviction{Pod: p.Key(), UID: p.UID, Reason: EvictOverShare, Owner: p.Owner})
		}
		waiting -= n
	}
	return out
}

// waitersShort counts the executors that QueryServices below their share
// wait for (up to their share) beyond the slots the pool can still offer
// or launch nodes for: the waiters only an eviction can serve.
func waitersShort(spec v1alpha1.PoolCapacityParameters, attached map[qsKey]*qsTally, occupied int32) int32 {
	var waiting int32
	for _, qs := range spec.QueryServices {
		t := attached[qsKey{qs.Namespace, qs.Name}]
		if qs.MaxPoolExecutors > 0 && t.executors < qs.MaxPoolExecutors {
			waiting += min(t.pending, qs.MaxPoolExecutors-t.executors)
		}
	}
	return max(0, waiting-max(0, spec.MaxExecutors-occupied))
}

// sharesHold returns whether a new executor stays at the executor gate for
// the shares: its QueryService is at or above its share while
// QueryServices below theirs have executors waiting that the pool has no
// free slot for, which is when overShare evicts for them.
func sharesHold(spec v1alpha1.PoolCapacityParameters, attached map[qsKey]*qsTally, occupied int32) func(*Pod) bool {
	share := make(map[qsKey]int32, len(spec.QueryServices))
	for _, qs := range spec.QueryServices {
		share[qsKey{qs.Namespace, qs.Name}] = qs.MaxPoolExecutors
	}
	short := waitersShort(spec, attached, occupied) > 0
	return func(p *Pod) bool {
		k := qsKey{p.Namespace, p.Labels[qsv1alpha1.LabelQueryService]}
		t, ok := attached[k]
		return short && ok && share[k] > 0 && t.executors >= share[k]
	}
}

// failure records the failure d of executor p, and reports whether an
// earlier status already records it.
func (res *Result) failure(p *Pod, d Diagnosis, prevFailures map[failureKey]v1alpha1.Failure, seen map[failureKey]struct{}, failures *[]v1alpha1.Failure, now time.Time) bool {
	k := failureKey{p.Namespace, p.Name}
	if _, dup := seen[k]; dup {
		return false
	}
	seen[k] = struct{}{}
	// A failure is dated from the pod alone, never from the clock, so that
	// every reconcile dates and orders it the same way.
	f := v1alpha1.Failure{Pod: p.Name, Namespace: p.Namespace, QueryService: p.Labels[qsv1alpha1.LabelQueryService], Reason: d.Reason,
		ExitCode: d.ExitCode, Message: d.Message, At: metav1.NewTime(failedAt(d, p, now))}
	pf, recorded := prevFailures[k]
	switch {
	case recorded && pf.Reason == d.Reason:
		f.At = pf.At
	case recorded && d.Reason == v1alpha1.FailureDisrupted:
		// Evicting or deleting a pod that had already failed (the
		// deleteFailedExecutors policy, pod garbage collection) is its
		// cleanup, not why it failed.
		f = pf
	}
	res.Failing = append(res.Failing, f)
	*failures = append(*failures, f)
	return recorded
}

// warmup accounts for one warmup pod.
func warmup(p *Pod, warm map[string]*warmTally, ready map[string]struct{}) {
	if p.State == PodDeleted {
		return
	}
	for _, c := range p.Containers {
		if !IsImagePullError(c.WaitingReason) {
			continue
		}
		img := orDefault(p.Image, c.Image)
		t, ok := warm[img]
		if !ok {
			t = &warmTally{reason: c.WaitingReason, message: c.WaitingMessage, nodes: map[string]struct{}{}}
			warm[img] = t
		}
		if c.WaitingReason < t.reason {
			t.reason = c.WaitingReason
		}
		if c.WaitingMessage != "" && (t.message == "" || c.WaitingMessage < t.message) {
			t.message = c.WaitingMessage
		}
		t.nodes[orDefault(p.NodeName, p.Name)] = struct{}{}
		return
	}
	if p.State == PodRunning && p.Image != "" {
		ready[p.Image] = struct{}{}
	}
}

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

// failedAt dates a failure: the container's finish time when its status has
// one, else the pod's latest condition change, else its start.
func failedAt(d Diagnosis, p *Pod, now time.Time) time.Time {
	for _, t := range []time.Time{d.At, p.Transitioned, p.Started} {
		if !t.IsZero() {
			return t.UTC().Truncate(time.Second)
		}
	}
	return now
}

// mergeFailures returns the current failures and the earlier ones whose pods
// are gone, newest first, at most MaxFailures. The order is total (time,
// then namespace and pod), so the same failures always list the same way.
func mergeFailures(current, prev []v1alpha1.Failure, seen map[failureKey]struct{}) []v1alpha1.Failure {
	out := current
	for _, f := range prev {
		if _, ok := seen[failureKey{f.Namespace, f.Pod}]; !ok {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.At.Equal(&b.At) {
			return a.At.After(b.At.Time)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Pod < b.Pod
	})
	if len(out) > MaxFailures {
		out = out[:MaxFailures]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// warmupFailures lists one failure per image. The kubelet alternates a
// failing pull between ErrImagePull and ImagePullBackOff, with messages to
// match, so an image already listed keeps its reason and message for as
// long as it keeps failing; only the node count follows the pods.
func warmupFailures(warm map[string]*warmTally, prev []v1alpha1.WarmupFailure) []v1alpha1.WarmupFailure {
	if len(warm) == 0 {
		return nil
	}
	listed := make(map[string]v1alpha1.WarmupFailure, len(prev))
	for _, w := range prev {
		listed[w.Image] = w
	}
	out := make([]v1alpha1.WarmupFailure, 0, len(warm))
	for img, t := range warm {
		w := v1alpha1.WarmupFailure{Image: img, Reason: t.reason, Message: t.message, Nodes: int32(len(t.nodes))}
		if l, ok := listed[img]; ok {
			w.Reason, w.Message = l.Reason, l.Message
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Image < out[j].Image })
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
