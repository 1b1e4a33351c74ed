package capacity

import (
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// MaxFailures bounds status.atProvider.failures.
const MaxFailures = 20

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

	// Evict lists the pods the policies say to delete: failed executors
	// whose failure an earlier status already records, when
	// deleteFailedExecutors is on, and unauthorized executors, when
	// unauthorizedExecutors is Evict. It is empty for a suspended pool.
	Evict []Eviction
}

// An Eviction is a pod to delete and why.
type Eviction struct {
	Pod PodKey
	// UID guards against deleting a newer pod of the same name.
	UID    string
	Reason string
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
}

type failureKey struct {
	namespace, pod string
	reason         v1alpha1.FailureReason
}

type warmKey struct{ image, reason string }

type warmTally struct {
	message string
	nodes   map[string]struct{}
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
	poolNodes := map[string]struct{}{}
	var slots int64
	snap.Nodes(pool, func(n *Node) bool {
		if !matches(spec.NodeSelector, n.Labels) {
			return true
		}
		poolNodes[n.Name] = struct{}{}
		if !n.Ready || n.Deleting {
			obs.Nodes.NotReady++
			return true
		}
		obs.Nodes.Ready++
		if n.Schedulable || (!n.Cordoned && len(spec.Tolerations) > 0 && tolerated(spec.Tolerations, n.Taints)) {
			slots += int64(epn)
		}
		return true
	})
	obs.TotalExecutors = int32(min(slots, int64(spec.MaxExecutors)))
	if spec.Suspend {
		obs.TotalExecutors = 0
	}

	attached := make(map[qsKey]*qsTally, len(spec.QueryServices))
	for _, qs := range spec.QueryServices {
		attached[qsKey{qs.Namespace, qs.Name}] = &qsTally{}
	}
	prevFailures := make(map[failureKey]v1alpha1.Failure, len(prev.Failures))
	for _, f := range prev.Failures {
		prevFailures[failureKey{f.Namespace, f.Pod, f.Reason}] = f
	}

	var res Result
	var failures []v1alpha1.Failure
	seen := map[failureKey]struct{}{}
	warm := map[warmKey]*warmTally{}
	warmReady := map[string]struct{}{}

	snap.Pods(pool, func(p *Pod) bool {
		switch {
		case matches(spec.ExecutorSelector, p.Labels):
			res.executor(spec, p, snap, poolNodes, attached, prevFailures, seen, &failures, &obs, now)
		case len(spec.WarmupSelector) > 0 && matches(spec.WarmupSelector, p.Labels):
			warmup(p, warm, warmReady)
		}
		return true
	})

	obs.AvailableExecutors = max(0, obs.TotalExecutors-obs.OccupiedExecutors)
	obs.Allocations = allocations(spec, attached, prev, now)
	if spec.Policies.EnforceShares {
		res.Evict = append(res.Evict, overShare(spec, attached, obs.OccupiedExecutors)...)
	}
	obs.Failures = mergeFailures(failures, prev.Failures, seen)
	obs.WarmupFailures = warmupFailures(warm)
	sort.Slice(obs.UnauthorizedExecutors, func(i, j int) bool {
		a, b := obs.UnauthorizedExecutors[i], obs.UnauthorizedExecutors[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Pod < b.Pod
	})
	res.WarmImagesReady = int32(len(warmReady))

	obs.ObservedAt = prev.ObservedAt
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

// executor accounts for one pool executor pod.
func (res *Result) executor(spec v1alpha1.PoolCapacityParameters, p *Pod, snap Snapshot, poolNodes map[string]struct{}, attached map[qsKey]*qsTally, prevFailures map[failureKey]v1alpha1.Failure, seen map[failureKey]struct{}, failures *[]v1alpha1.Failure, obs *v1alpha1.PoolCapacityObservation, now time.Time) {
	if p.State == PodDeleted {
		return
	}
	qs := p.Labels[qsv1alpha1.LabelQueryService]
	_, onPool := poolNodes[p.NodeName]
	nodeLost := p.NodeName != "" && !onPool && snap.NodeGone(p.NodeName)

	if d, failed := Diagnose(p, nodeLost); failed {
		k := failureKey{p.Namespace, p.Name, d.Reason}
		seen[k] = struct{}{}
		f := v1alpha1.Failure{Pod: p.Name, Namespace: p.Namespace, QueryService: qs, Reason: d.Reason, ExitCode: d.ExitCode, Message: d.Message, At: metav1.NewTime(now)}
		if !d.At.IsZero() {
			f.At = metav1.NewTime(d.At.UTC().Truncate(time.Second))
		}
		pf, recorded := prevFailures[k]
		if recorded {
			f.At = pf.At
		}
		*failures = append(*failures, f)
		if p.State == PodFailed && recorded && spec.Policies.DeleteFailedExecutors && !spec.Suspend {
			res.Evict = append(res.Evict, Eviction{Pod: p.Key(), UID: p.UID, Reason: EvictFailed})
		}
	}

	if p.State != PodPending && p.State != PodRunning {
		return
	}
	if p.State == PodPending {
		obs.PendingExecutors++
	}
	occupied := onPool && !nodeLost && (p.State == PodRunning || p.NodeName != "")
	if occupied {
		obs.OccupiedExecutors++
	}
	t, ok := attached[qsKey{p.Namespace, qs}]
	if !ok {
		obs.UnauthorizedExecutors = append(obs.UnauthorizedExecutors, v1alpha1.UnauthorizedExecutor{Pod: p.Name, Namespace: p.Namespace, QueryService: qs})
		if spec.Policies.UnauthorizedExecutors == v1alpha1.UnauthorizedEvict && !spec.Suspend {
			res.Evict = append(res.Evict, Eviction{Pod: p.Key(), UID: p.UID, Reason: EvictUnauthorized})
		}
		return
	}
	if occupied {
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
	var waiting int32
	for _, qs := range spec.QueryServices {
		t := attached[qsKey{qs.Namespace, qs.Name}]
		if qs.MaxPoolExecutors > 0 && t.executors < qs.MaxPoolExecutors {
			waiting += min(t.pending, qs.MaxPoolExecutors-t.executors)
		}
	}
	// Slots the pool can still offer (or launch nodes for) serve waiters
	// without evicting anyone.
	waiting = max(0, waiting-max(0, spec.MaxExecutors-occupied))
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
			out = append(out, Eviction{Pod: p.Key(), UID: p.UID, Reason: EvictOverShare})
		}
		waiting -= n
	}
	return out
}

// warmup accounts for one warmup pod.
func warmup(p *Pod, warm map[warmKey]*warmTally, ready map[string]struct{}) {
	if p.State == PodDeleted {
		return
	}
	for _, c := range p.Containers {
		if !IsImagePullError(c.WaitingReason) {
			continue
		}
		img := orDefault(p.Image, c.Image)
		k := warmKey{img, c.WaitingReason}
		t, ok := warm[k]
		if !ok {
			t = &warmTally{message: c.WaitingMessage, nodes: map[string]struct{}{}}
			warm[k] = t
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
		if t.executors > 0 {
			switch at := prevAt[k]; {
			case at != nil:
				a.AllocatedAt = at.DeepCopy()
			case !t.earliest.IsZero():
				a.AllocatedAt = &metav1.Time{Time: t.earliest.UTC().Truncate(time.Second)}
			default:
				a.AllocatedAt = &metav1.Time{Time: now}
			}
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

// mergeFailures returns the current failures and the earlier ones whose pods
// are gone, newest first, at most MaxFailures.
func mergeFailures(current, prev []v1alpha1.Failure, seen map[failureKey]struct{}) []v1alpha1.Failure {
	out := current
	for _, f := range prev {
		if _, ok := seen[failureKey{f.Namespace, f.Pod, f.Reason}]; !ok {
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
		if a.Pod != b.Pod {
			return a.Pod < b.Pod
		}
		return a.Reason < b.Reason
	})
	if len(out) > MaxFailures {
		out = out[:MaxFailures]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func warmupFailures(warm map[warmKey]*warmTally) []v1alpha1.WarmupFailure {
	if len(warm) == 0 {
		return nil
	}
	out := make([]v1alpha1.WarmupFailure, 0, len(warm))
	for k, t := range warm {
		out = append(out, v1alpha1.WarmupFailure{Image: k.image, Reason: k.reason, Message: t.message, Nodes: int32(len(t.nodes))})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Image != out[j].Image {
			return out[i].Image < out[j].Image
		}
		return out[i].Reason < out[j].Reason
	})
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
