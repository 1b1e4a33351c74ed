package capacity

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

func params(opts ...func(*v1alpha1.PoolCapacityParameters)) v1alpha1.PoolCapacityParameters {
	p := v1alpha1.PoolCapacityParameters{
		Pool:             v1alpha1.PoolRef{Name: "analytics", Namespace: "team-a"},
		NodeSelector:     map[string]string{qsv1alpha1.LabelPool: "analytics"},
		ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: "analytics", qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
		WarmupSelector:   map[string]string{qsv1alpha1.LabelPool: "analytics", qsv1alpha1.LabelComponent: qsv1alpha1.ComponentWarmup},
		ExecutorsPerNode: 2,
		MaxExecutors:     10,
		QueryServices: []v1alpha1.AttachedQueryService{
			{Name: "sales", Namespace: "team-a", RegularExecutors: 3},
			{Name: "ads", Namespace: "team-b"},
		},
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func mt(t time.Time) metav1.Time   { return metav1.NewTime(t) }
func mtp(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

func allocs(sales, ads int32, salesAt, adsAt *metav1.Time) []v1alpha1.Allocation {
	return []v1alpha1.Allocation{
		{QueryService: "sales", Namespace: "team-a", PoolExecutors: sales, RegularExecutors: 3, AllocatedAt: salesAt},
		{QueryService: "ads", Namespace: "team-b", PoolExecutors: ads, AllocatedAt: adsAt},
	}
}

// withPending sets the pending executors of the allocations allocs makes.
func withPending(as []v1alpha1.Allocation, sales, ads int32) []v1alpha1.Allocation {
	as[0].PendingExecutors, as[1].PendingExecutors = sales, ads
	return as
}

// shares gives sales and ads a share of a pool of four executors and
// enforces it.
func shares(sales, ads int32) func(*v1alpha1.PoolCapacityParameters) {
	return func(p *v1alpha1.PoolCapacityParameters) {
		p.QueryServices[0].MaxPoolExecutors, p.QueryServices[1].MaxPoolExecutors = sales, ads
		p.Policies.EnforceShares = true
		p.MaxExecutors = 4
	}
}

func TestOverShare(t *testing.T) {
	now := t0.Add(time.Hour)
	nodes := []*Node{node("n0", "analytics", true), node("n1", "analytics", true)}
	// sales fills the pool's four slots, s3 started last, s2 before it.
	full := func(adsPending int) []*Pod {
		ps := []*Pod{
			executor("team-a", "s0", "analytics", "sales", running("n0"), started(t0)),
			executor("team-a", "s1", "analytics", "sales", running("n0"), started(t0.Add(time.Minute))),
			executor("team-a", "s2", "analytics", "sales", running("n1"), started(t0.Add(2*time.Minute))),
			executor("team-a", "s3", "analytics", "sales", running("n1"), started(t0.Add(3*time.Minute))),
		}
		for i := range adsPending {
			ps = append(ps, executor("team-b", fmt.Sprintf("a%d", i), "analytics", "ads"))
		}
		return ps
	}
	evict := func(names ...string) []Eviction {
		var out []Eviction
		for _, n := range names {
			out = append(out, Eviction{Pod: PodKey{Namespace: "team-a", Name: n}, UID: "uid-" + n, Reason: EvictOverShare})
		}
		return out
	}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.PoolCapacityParameters
		pods   []*Pod
		want   []Eviction
	}{
		"NobodyWaits": {
			reason: "Above its share, a QueryService keeps its executors while nobody waits.",
			spec:   params(shares(2, 2)), pods: full(0),
		},
		"NewestEvictedForWaiters": {
			reason: "Two ads executors wait below ads' share: the two newest sales executors go, down to sales' share.",
			spec:   params(shares(2, 2)), pods: full(2), want: evict("s3", "s2"),
		},
		"OnlyAsManyAsWait": {
			reason: "One waiting executor frees one slot.",
			spec:   params(shares(2, 2)), pods: full(1), want: evict("s3"),
		},
		"NeverBelowShare": {
			reason: "Five waiting executors still take sales no lower than its share of three.",
			spec:   params(shares(3, 2)), pods: full(5), want: evict("s3"),
		},
		"WaiterAtItsShare": {
			reason: "A QueryService at its own share waits without preempting anyone.",
			spec:   params(shares(2, 0)), pods: full(2),
		},
		"RoomToGrow": {
			reason: "While the pool can still offer slots (below maxExecutors), waiters get new ones and nobody is evicted.",
			spec: params(shares(2, 2), func(p *v1alpha1.PoolCapacityParameters) {
				p.MaxExecutors = 6
			}), pods: full(2),
		},
		"RoomForOne": {
			reason: "One slot the pool can still offer serves one of two waiters; one eviction makes room for the other.",
			spec: params(shares(2, 2), func(p *v1alpha1.PoolCapacityParameters) {
				p.MaxExecutors = 5
			}), pods: full(2), want: evict("s3"),
		},
		"UnplaceableWaitersEvictNobody": {
			reason: "Hostile tenant: two ads executors aim at the pool with an extra node selector no pool node matches; they could never take a freed slot, so no sales executor is evicted for them.",
			spec:   params(shares(2, 2)), pods: append(full(0), executor("team-b", "a0", "analytics", "ads", extraSelector), executor("team-b", "a1", "analytics", "ads", extraSelector)),
		},
		"NotEnforced": {
			reason: "Without enforceShares, shares are reported only.",
			spec: params(shares(2, 2), func(p *v1alpha1.PoolCapacityParameters) {
				p.Policies.EnforceShares = false
			}), pods: full(2),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, p := range tc.pods {
				p.UID = "uid-" + p.Name
			}
			got := Compute(tc.spec, NewSnapshot(tc.pods, nodes), v1alpha1.PoolCapacityObservation{}, now)
			if diff := cmp.Diff(tc.want, got.Evict, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nCompute(...).Evict: -want, +got:\n%s", tc.reason, diff)
			}
			for _, a := range got.Observation.Allocations {
				for _, qs := range tc.spec.QueryServices {
					if qs.Name == a.QueryService && a.MaxPoolExecutors != qs.MaxPoolExecutors {
						t.Errorf("%s\nallocation of %s reports share %d, want %d", tc.reason, a.QueryService, a.MaxPoolExecutors, qs.MaxPoolExecutors)
					}
				}
			}
		})
	}
}

func TestCompute(t *testing.T) {
	now := t0.Add(time.Hour)
	ready := func(n int) []*Node {
		var out []*Node
		for i := 0; i < n; i++ {
			out = append(out, node(fmt.Sprintf("n%d", i), "analytics", true))
		}
		return out
	}
	type args struct {
		spec v1alpha1.PoolCapacityParameters
		snap Snapshot
		prev v1alpha1.PoolCapacityObservation
	}
	cases := map[string]struct {
		reason string
		args   args
		want   Result
	}{
		"EmptyPool": {
			reason: "A pool with no nodes and no pods has no capacity; every attached QueryService is listed with nothing.",
			args:   args{spec: params(), snap: Snapshot{}},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				Allocations: allocs(0, 0, nil, nil), ObservedAt: mt(now),
			}},
		},
		"TotalCappedAtMax": {
			reason: "Six ready nodes of two slots are twelve slots, capped at maxExecutors 10.",
			args:   args{spec: params(), snap: NewSnapshot(nil, ready(6))},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 10, AvailableExecutors: 10, Nodes: v1alpha1.NodeCounts{Ready: 6},
				Allocations: allocs(0, 0, nil, nil), ObservedAt: mt(now),
			}},
		},
		"UnreadyCordonedAndForeignNodes": {
			reason: "Only Ready, schedulable nodes of the pool add slots; a cordoned node is still Ready; other pools' nodes do not count.",
			args: args{spec: params(), snap: NewSnapshot(nil, []*Node{
				node("n0", "analytics", true), cordoned(node("n1", "analytics", true)),
				node("n2", "analytics", false), node("x0", "other", true),
				{Name: "n3", Pool: "analytics", Labels: map[string]string{qsv1alpha1.LabelPool: "analytics"}, Ready: true, Schedulable: true, Deleting: true},
			})},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 2, AvailableExecutors: 2, Nodes: v1alpha1.NodeCounts{Ready: 2, NotReady: 2},
				Allocations: allocs(0, 0, nil, nil), ObservedAt: mt(now),
			}},
		},
		"OccupiedPendingAndAllocations": {
			reason: "Running and bound executors occupy slots; pending ones are those not Running; finished and terminating ones count for nothing; allocatedAt is the earliest start.",
			args: args{spec: params(), snap: NewSnapshot([]*Pod{
				executor("team-a", "s1", "analytics", "sales", running("n0"), started(t0.Add(time.Minute))),
				executor("team-a", "s2", "analytics", "sales", running("n0"), started(t0)),
				executor("team-a", "s3", "analytics", "sales", on("n1")),
				executor("team-b", "a1", "analytics", "ads"),
				executor("team-b", "a2", "analytics", "ads", running("n1"), state(PodSucceeded)),
				executor("team-b", "a3", "analytics", "ads", running("n1"), state(PodDeleted)),
			}, ready(2))},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 4, OccupiedExecutors: 3, AvailableExecutors: 1, PendingExecutors: 2,
				Nodes:       v1alpha1.NodeCounts{Ready: 2},
				Allocations: withPending(allocs(3, 0, mtp(t0), nil), 0, 1), ObservedAt: mt(now),
			}},
		},
		"AllocatedAtKeptAndCleared": {
			reason: "allocatedAt is read back from the previous status while the QueryService holds executors, and cleared when it holds none.",
			args: args{spec: params(), snap: NewSnapshot([]*Pod{
				executor("team-a", "s1", "analytics", "sales", running("n0"), started(t0.Add(30*time.Minute))),
			}, ready(1)), prev: v1alpha1.PoolCapacityObservation{
				Allocations: allocs(1, 2, mtp(t0), mtp(t0)),
			}},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 2, OccupiedExecutors: 1, AvailableExecutors: 1, Nodes: v1alpha1.NodeCounts{Ready: 1},
				Allocations: allocs(1, 0, mtp(t0), nil), ObservedAt: mt(now),
			}},
		},
		"OvercommittedPool": {
			reason: "Available never goes below zero when more executors run than the pool has slots.",
			args: args{spec: params(), snap: NewSnapshot([]*Pod{
				executor("team-a", "s1", "analytics", "sales", running("n0")),
				executor("team-a", "s2", "analytics", "sales", running("n0")),
				executor("team-a", "s3", "analytics", "sales", running("n0")),
			}, ready(1))},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 2, OccupiedExecutors: 3, Nodes: v1alpha1.NodeCounts{Ready: 1},
				Allocations: allocs(3, 0, mtp(t0), nil), ObservedAt: mt(now),
			}},
		},
		"UnauthorizedReported": {
			reason: "Executors of QueryServices that are not attached are listed and still occupy slots; Report evicts nothing.",
			args: args{spec: params(), snap: NewSnapshot([]*Pod{
				executor("team-c", "r1", "analytics", "rogue", running("n0")),
				executor("team-a", "r2", "analytics", "ads"),
			}, ready(1))},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 2, OccupiedExecutors: 1, AvailableExecutors: 1, PendingExecutors: 1, Nodes: v1alpha1.NodeCounts{Ready: 1},
				Allocations:       allocs(0, 0, nil, nil),
				UnauthorizedCount: 2, UnauthorizedExecutors: []v1alpha1.UnauthorizedExecutor{
					{Pod: "r2", Namespace: "team-a", QueryService: "ads"},
					{Pod: "r1", Namespace: "team-c", QueryService: "rogue"},
				},
				ObservedAt: mt(now),
			}},
		},
		"UnauthorizedEvicted": {
			reason: "With unauthorizedExecutors Evict, unauthorized executors are to be deleted.",
			args: args{spec: params(func(p *v1alpha1.PoolCapacityParameters) {
				p.Policies.UnauthorizedExecutors = v1alpha1.UnauthorizedEvict
			}), snap: NewSnapshot([]*Pod{executor("team-c", "r1", "analytics", "rogue", running("n0"))}, ready(1))},
			want: Result{Changed: true, Plan: Plan{Evict: []Eviction{{Pod: PodKey{"team-c", "r1"}, UID: "uid-r1", Reason: EvictUnauthorized}}},
				Observation: v1alpha1.PoolCapacityObservation{
					TotalExecutors: 2, OccupiedExecutors: 1, AvailableExecutors: 1, Nodes: v1alpha1.NodeCounts{Ready: 1},
					Allocations:       allocs(0, 0, nil, nil),
					UnauthorizedCount: 1, UnauthorizedExecutors: []v1alpha1.UnauthorizedExecutor{{Pod: "r1", Namespace: "team-c", QueryService: "rogue"}},
					ObservedAt: mt(now),
				}},
		},
		"FailuresDiagnosed": {
			reason: "Each failed executor is diagnosed and dated from its pod: its container's finish time, else its latest condition change, else its start; newest first, then by name.",
			args: args{spec: params(), snap: NewSnapshot([]*Pod{
				executor("team-a", "oom", "analytics", "sales", running("n0"), state(PodFailed),
					container(Container{Name: "executor", Terminated: &Termination{Reason: "OOMKilled", ExitCode: 137, FinishedAt: t0}})),
				executor("team-a", "pull", "analytics", "sales", on("n0"),
					container(Container{Name: "executor", Image: "e6/exec:bad", WaitingReason: "ImagePullBackOff", WaitingMessage: "Back-off pulling image"})),
				executor("team-a", "evicted", "analytics", "sales", on("n0"), state(PodFailed), reason("Evicted", "The node was low on resource: memory."), func(p *Pod) { p.Transitioned = t0.Add(2 * time.Minute) }),
				executor("team-a", "crash", "analytics", "sales", running("n0"), state(PodFailed),
					container(Container{Name: "executor", Terminated: &Termination{Reason: "Error", ExitCode: 2, FinishedAt: t0.Add(time.Minute)}})),
				executor("team-a", "lost", "analytics", "sales", running("gone-node")),
			}, ready(1)).WithNode(node("gone-node", "analytics", true)).WithoutNode("gone-node")},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 2, OccupiedExecutors: 1, AvailableExecutors: 1, PendingExecutors: 1, Nodes: v1alpha1.NodeCounts{Ready: 1},
				Allocations: allocs(1, 0, mtp(t0), nil),
				Failures: []v1alpha1.Failure{
					{Pod: "evicted", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureEvicted, Message: "The node was low on resource: memory.", At: mt(t0.Add(2 * time.Minute))},
					{Pod: "crash", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureError, ExitCode: 2, Message: "container executor exited with Error", At: mt(t0.Add(time.Minute))},
					{Pod: "lost", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureNodeLost, Message: "node gone-node is gone", At: mt(t0)},
					{Pod: "oom", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureOOMKilled, ExitCode: 137, Message: "container executor was killed for exceeding its memory limit", At: mt(t0)},
					{Pod: "pull", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureImagePullError, Message: "Back-off pulling image", At: mt(t0)},
				},
				ObservedAt: mt(now),
			}},
		},
		"FailureHistoryKeptAndBounded": {
			reason: "Failures of pods that are gone stay, the first-seen time of a known failure is kept, and the list is cut at 20, newest first.",
			args: args{spec: params(), snap: NewSnapshot([]*Pod{
				executor("team-a", "crash", "analytics", "sales", state(PodFailed), reason("", "boom")),
			}, nil), prev: v1alpha1.PoolCapacityObservation{Failures: func() []v1alpha1.Failure {
				out := []v1alpha1.Failure{{Pod: "crash", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureError, Message: "boom", At: mt(t0)}}
				for i := 0; i < 25; i++ {
					out = append(out, v1alpha1.Failure{Pod: fmt.Sprintf("old%02d", i), Namespace: "team-a", Reason: v1alpha1.FailureError, At: mt(t0.Add(time.Duration(i) * time.Second))})
				}
				return out
			}()}},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				Allocations: allocs(0, 0, nil, nil),
				Failures: func() []v1alpha1.Failure {
					var out []v1alpha1.Failure
					for i := 24; i >= 5; i-- {
						out = append(out, v1alpha1.Failure{Pod: fmt.Sprintf("old%02d", i), Namespace: "team-a", Reason: v1alpha1.FailureError, At: mt(t0.Add(time.Duration(i) * time.Second))})
					}
					return out
				}(),
				ObservedAt: mt(now),
			}},
		},
		"DeleteOnlyRecordedFailures": {
			reason: "deleteFailedExecutors deletes a failed executor only once an earlier status records its failure.",
			args: args{spec: params(func(p *v1alpha1.PoolCapacityParameters) { p.Policies.DeleteFailedExecutors = true }),
				snap: NewSnapshot([]*Pod{
					executor("team-a", "old", "analytics", "sales", state(PodFailed), reason("", "boom")),
					executor("team-a", "new", "analytics", "sales", state(PodFailed), reason("", "bang")),
				}, nil),
				prev: v1alpha1.PoolCapacityObservation{Failures: []v1alpha1.Failure{{Pod: "old", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureError, Message: "boom", At: mt(t0)}}}},
			want: Result{Changed: true, Plan: Plan{Evict: []Eviction{{Pod: PodKey{"team-a", "old"}, UID: "uid-old", Reason: EvictFailed}}},
				Observation: v1alpha1.PoolCapacityObservation{
					Allocations: allocs(0, 0, nil, nil),
					Failures: []v1alpha1.Failure{
						{Pod: "new", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureError, Message: "bang", At: mt(t0)},
						{Pod: "old", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureError, Message: "boom", At: mt(t0)},
					},
					ObservedAt: mt(now),
				}},
		},
		"SuspendedPool": {
			reason: "A suspended pool offers no slots and deletes nothing, but still counts what runs.",
			args: args{spec: params(func(p *v1alpha1.PoolCapacityParameters) {
				p.Suspend = true
				p.Policies.UnauthorizedExecutors = v1alpha1.UnauthorizedEvict
			}), snap: NewSnapshot([]*Pod{executor("team-c", "r1", "analytics", "rogue", running("n0"))}, ready(1))},
			want: Result{Changed: true, Observation: v1alpha1.PoolCapacityObservation{
				OccupiedExecutors: 1, Nodes: v1alpha1.NodeCounts{Ready: 1},
				Allocations:       allocs(0, 0, nil, nil),
				UnauthorizedCount: 1, UnauthorizedExecutors: []v1alpha1.UnauthorizedExecutor{{Pod: "r1", Namespace: "team-c", QueryService: "rogue"}},
				ObservedAt: mt(now),
			}},
		},
		"WarmupFailuresAndReadyImages": {
			reason: "Warmup pods that cannot pull their image are grouped by image and reason with the nodes they fail on; running ones count as warm images.",
			args: args{spec: params(), snap: NewSnapshot([]*Pod{
				warmPod("w1", "analytics", "e6/exec:1", "n0"),
				warmPod("w2", "analytics", "e6/exec:1", "n1"),
				warmPod("w3", "analytics", "e6/exec:typo", "n0", state(PodPending), container(Container{Init: true, Image: "e6/exec:typo", WaitingReason: "ErrImagePull", WaitingMessage: "not found"})),
				warmPod("w4", "analytics", "e6/exec:typo", "n1", state(PodPending), container(Container{Init: true, Image: "e6/exec:typo", WaitingReason: "ErrImagePull", WaitingMessage: "not found"})),
				warmPod("w5", "analytics", "", "n1", state(PodPending), container(Container{Init: true, Image: "bad name", WaitingReason: "InvalidImageName"})),
			}, ready(2))},
			want: Result{Changed: true, WarmImagesReady: 1, Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 4, AvailableExecutors: 4, Nodes: v1alpha1.NodeCounts{Ready: 2},
				Allocations: allocs(0, 0, nil, nil),
				WarmupFailures: []v1alpha1.WarmupFailure{
					{Image: "bad name", Reason: "InvalidImageName", Nodes: 1},
					{Image: "e6/exec:typo", Reason: "ErrImagePull", Message: "not found", Nodes: 2},
				},
				ObservedAt: mt(now),
			}},
		},
		"UnchangedKeepsObservedAt": {
			reason: "When nothing changed, observedAt stays and Changed is false, so status is not rewritten.",
			args: args{spec: params(), snap: NewSnapshot(nil, ready(1)), prev: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 2, AvailableExecutors: 2, Nodes: v1alpha1.NodeCounts{Ready: 1},
				Allocations: allocs(0, 0, nil, nil), ObservedAt: mt(t0),
			}},
			want: Result{Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 2, AvailableExecutors: 2, Nodes: v1alpha1.NodeCounts{Ready: 1},
				Allocations: allocs(0, 0, nil, nil), ObservedAt: mt(t0),
			}},
		},
		"DemandCarriedOver": {
			reason: "The demand history and the learned warm level are the provider's to decide apart (internal/demand): they are carried over and change nothing else.",
			args: args{spec: params(), snap: NewSnapshot(nil, ready(1)), prev: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 2, AvailableExecutors: 2, Nodes: v1alpha1.NodeCounts{Ready: 1},
				Allocations: allocs(0, 0, nil, nil), ObservedAt: mt(t0),
				Demand:             &v1alpha1.DemandHistory{Encoded: "h", Since: mt(t0)},
				WarmRecommendation: &v1alpha1.WarmRecommendation{Executors: 3, Until: mt(now)},
			}},
			want: Result{Observation: v1alpha1.PoolCapacityObservation{
				TotalExecutors: 2, AvailableExecutors: 2, Nodes: v1alpha1.NodeCounts{Ready: 1},
				Allocations: allocs(0, 0, nil, nil), ObservedAt: mt(t0),
				Demand:             &v1alpha1.DemandHistory{Encoded: "h", Since: mt(t0)},
				WarmRecommendation: &v1alpha1.WarmRecommendation{Executors: 3, Until: mt(now)},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Compute(tc.args.spec, tc.args.snap, tc.args.prev, now.Add(300*time.Millisecond))
			// Failing repeats the failures; counting them has its own test.
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Result{}, "Failing")); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestTaintedNodesOfferSlotsTheirExecutorsTolerate(t *testing.T) {
	tainted := func(name string, cordon bool) *Node {
		n := node(name, "analytics", true)
		n.Schedulable, n.Cordoned = false, cordon
		n.Taints = []Taint{{Key: "dedicated", Value: "team-a", Effect: "NoSchedule"}}
		return n
	}
	tolerate := func(tols ...corev1.Toleration) func(*v1alpha1.PoolCapacityParameters) {
		return func(p *v1alpha1.PoolCapacityParameters) { p.Tolerations = tols }
	}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.PoolCapacityParameters
		nodes  []*Node
		want   int32
	}{
		"Tolerated": {
			reason: "A node tainted by the pool's spec.tolerations offers its slots to executors that tolerate the taint.",
			spec:   params(tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "team-a", Effect: corev1.TaintEffectNoSchedule})),
			nodes:  []*Node{tainted("n0", false)}, want: 2,
		},
		"ToleratedByExists": {
			reason: "Exists on the key tolerates any value.",
			spec:   params(tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists})),
			nodes:  []*Node{tainted("n0", false)}, want: 2,
		},
		"OtherValue": {
			reason: "A toleration of another value does not.",
			spec:   params(tolerate(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "team-b"})),
			nodes:  []*Node{tainted("n0", false)},
		},
		"NoTolerations": {
			reason: "Without tolerations, a tainted node offers nothing.",
			spec:   params(), nodes: []*Node{tainted("n0", false)},
		},
		"Cordoned": {
			reason: "A cordoned node offers nothing, whatever is tolerated.",
			spec:   params(tolerate(corev1.Toleration{Operator: corev1.TolerationOpExists})),
			nodes:  []*Node{tainted("n0", true)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Compute(tc.spec, NewSnapshot(nil, tc.nodes), v1alpha1.PoolCapacityObservation{}, t0)
			if got.Observation.TotalExecutors != tc.want {
				t.Errorf("%s\nTotalExecutors %d, want %d", tc.reason, got.Observation.TotalExecutors, tc.want)
			}
		})
	}
}

func TestUnsettled(t *testing.T) {
	ev := []Eviction{{Pod: PodKey{Namespace: "team-a", Name: "s3"}, UID: "uid-s3", Reason: EvictOverShare}}
	cases := map[string]struct {
		reason string
		pods   []*Pod
		want   bool
	}{
		"StillRunning": {
			reason: "An evicted pod the snapshot still shows running is not settled: counting again would evict twice.",
			pods:   []*Pod{executor("team-a", "s3", "analytics", "sales", running("n0"))}, want: true,
		},
		"Terminating": {
			reason: "A terminating evicted pod is settled.",
			pods:   []*Pod{executor("team-a", "s3", "analytics", "sales", running("n0"), state(PodDeleted))},
		},
		"Gone": {
			reason: "A pod gone from the snapshot is settled.",
		},
		"Replaced": {
			reason: "A new pod of the same name (another UID) is not the evicted one.",
			pods: []*Pod{func() *Pod {
				p := executor("team-a", "s3", "analytics", "sales", running("n0"))
				p.UID = "uid-new"
				return p
			}()},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Unsettled(NewSnapshot(tc.pods, nil), ev); got != tc.want {
				t.Errorf("%s\nUnsettled(...) = %t, want %t", tc.reason, got, tc.want)
			}
		})
	}
}
