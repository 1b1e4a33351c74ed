package capacity

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// rounds runs Compute n times over the snapshots snaps returns, feeding
// each status back as the previous one, one second apart, and returns on
// which rounds the status changed.
func rounds(spec v1alpha1.PoolCapacityParameters, n int, snaps func(round int) Snapshot) []int {
	var prev v1alpha1.PoolCapacityObservation
	var changed []int
	for r := 1; r <= n; r++ {
		res := Compute(spec, snaps(r), prev, t0.Add(time.Duration(r)*time.Second))
		if res.Changed {
			changed = append(changed, r)
		}
		prev = res.Observation
	}
	return changed
}

// TestStatusSettles injects inputs that stop changing (or change only in
// ways that say nothing new) and checks that the status settles in one
// round.
func TestStatusSettles(t *testing.T) {
	nodes := []*Node{node("n0", "analytics", true), node("n1", "analytics", true)}
	pull := func(reason string) podOpt {
		return container(Container{Name: "executor", Image: "e6/exec:typo", WaitingReason: reason, WaitingMessage: "cannot pull e6/exec:typo"})
	}
	cases := map[string]struct {
		reason string
		snaps  func(round int) Snapshot
	}{
		"FortyExecutorsInImagePullBackOff": {
			reason: "Forty executors that cannot pull their image have no finish time; their failures must be dated from the pod, so the 20 listed stay the same 20.",
			snaps: func() func(int) Snapshot {
				var pods []*Pod
				for i := range 40 {
					pods = append(pods, executor("team-a", fmt.Sprintf("e%02d", i), "analytics", "sales", on("n0"), started(t0.Add(time.Duration(i%7)*time.Second)), pull("ImagePullBackOff")))
				}
				s := NewSnapshot(pods, nodes)
				return func(int) Snapshot { return s }
			}(),
		},
		"WarmupPullReasonFlips": {
			reason: "A warmup pod alternates between ErrImagePull and ImagePullBackOff as the kubelet retries; the image is failing all along.",
			snaps: func(r int) Snapshot {
				reason := []string{"ErrImagePull", "ImagePullBackOff"}[r%2]
				return NewSnapshot([]*Pod{warmPod("w0", "analytics", "e6/exec:typo", "n0", pull(reason))}, nodes)
			},
		},
		"RollingUpdate": {
			reason: "During a rolling update the old executor terminates before its replacement is bound; the QueryService keeps its allocation, and allocatedAt with it.",
			snaps: func(r int) Snapshot {
				old := executor("team-a", "old", "analytics", "sales", running("n0"))
				repl := executor("team-a", "new", "analytics", "sales", started(t0.Add(time.Hour)))
				switch r {
				case 1:
					return NewSnapshot([]*Pod{old}, nodes)
				case 2:
					return NewSnapshot([]*Pod{executor("team-a", "old", "analytics", "sales", running("n0"), state(PodDeleted)), repl}, nodes)
				default:
					return NewSnapshot([]*Pod{executor("team-a", "new", "analytics", "sales", running("n1"), started(t0.Add(time.Hour)))}, nodes)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rounds(params(), 10, tc.snaps)
			want := []int{1}
			if name == "RollingUpdate" {
				// The counts change while the update runs (rounds 2 and 3),
				// then settle.
				want = []int{1, 2, 3}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nrounds with a changed status, -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	t.Run("RollingUpdateKeepsAllocatedAt", func(t *testing.T) {
		var prev v1alpha1.PoolCapacityObservation
		snaps := cases["RollingUpdate"].snaps
		for r := 1; r <= 3; r++ {
			prev = Compute(params(), snaps(r), prev, t0.Add(2*time.Hour)).Observation
			if at := prev.Allocations[0].AllocatedAt; at == nil || !at.Time.Equal(t0) {
				t.Fatalf("round %d: allocatedAt of team-a/sales = %v, want %s: the allocation never ended", r, at, t0)
			}
		}
	})
}

// TestFailureRecordsAreStable checks that failure records keep one
// identity per pod and a deterministic order.
func TestFailureRecordsAreStable(t *testing.T) {
	// An executor that could not pull its image, then pulled it and
	// failed, is one record, not two: the pod failed, and the record says
	// how it last failed.
	p1 := executor("team-a", "e1", "analytics", "sales", on("n0"), container(Container{Name: "executor", WaitingReason: "ErrImagePull"}))
	p2 := executor("team-a", "e1", "analytics", "sales", on("n0"), state(PodFailed), container(Container{Name: "executor",
		Terminated: &Termination{Reason: "OOMKilled", ExitCode: 137, FinishedAt: t0.Add(time.Minute)}}))
	n := []*Node{node("n0", "analytics", true)}
	prev := Compute(params(), NewSnapshot([]*Pod{p1}, n), v1alpha1.PoolCapacityObservation{}, t0.Add(time.Hour)).Observation
	got := Compute(params(), NewSnapshot([]*Pod{p2}, n), prev, t0.Add(2*time.Hour)).Observation.Failures
	if len(got) != 1 || got[0].Reason != v1alpha1.FailureOOMKilled {
		t.Errorf("failures of one pod that failed twice: got %+v, want one OOMKilled record", got)
	}
}

// TestTerminatingFailuresRecorded checks that a failure is recorded while
// its pod terminates: a drained or preempted executor says so.
func TestTerminatingFailuresRecorded(t *testing.T) {
	n := []*Node{node("n0", "analytics", true)}
	drained := executor("team-a", "drained", "analytics", "sales", running("n0"), state(PodDeleted), func(p *Pod) {
		p.DeletedAt = t0.Add(time.Minute)
		p.Disruption = &Disruption{Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", At: t0}
	})
	got := Compute(params(), NewSnapshot([]*Pod{drained}, n), v1alpha1.PoolCapacityObservation{}, t0.Add(time.Hour)).Observation
	want := []v1alpha1.Failure{{Pod: "drained", Namespace: "team-a", QueryService: "sales", Reason: v1alpha1.FailureDisrupted, Message: "EvictionByEvictionAPI: Eviction API: evicting", At: mt(t0)}}
	if diff := cmp.Diff(want, got.Failures); diff != "" {
		t.Errorf("failures of a drained executor, -want, +got:\n%s", diff)
	}
	if got.OccupiedExecutors != 0 {
		t.Errorf("occupiedExecutors = %d; a terminating executor holds no slot", got.OccupiedExecutors)
	}
}

// TestDrainingNodesGiveNoSlots checks that executors on nodes that give no
// slots (cordoned, disrupted by Karpenter, not Ready) are draining, not
// occupied: consolidation does not make a pool look full.
func TestDrainingNodesGiveNoSlots(t *testing.T) {
	nodes := []*Node{node("n0", "analytics", true), cordoned(node("n1", "analytics", true)), node("n2", "analytics", false)}
	pods := []*Pod{
		executor("team-a", "e0", "analytics", "sales", running("n0")),
		executor("team-a", "e1", "analytics", "sales", running("n1")),
		executor("team-a", "e2", "analytics", "sales", running("n1")),
		executor("team-a", "e3", "analytics", "sales", running("n2")),
	}
	got := Compute(params(), NewSnapshot(pods, nodes), v1alpha1.PoolCapacityObservation{}, t0).Observation
	type counts struct{ Total, Occupied, Available, Draining, SalesExecutors int32 }
	want := counts{Total: 2, Occupied: 1, Available: 1, Draining: 3, SalesExecutors: 4}
	if diff := cmp.Diff(want, counts{got.TotalExecutors, got.OccupiedExecutors, got.AvailableExecutors, got.DrainingExecutors, got.Allocations[0].PoolExecutors}); diff != "" {
		t.Errorf("executors on a cordoned and a not-Ready node, -want, +got:\n%s", diff)
	}
}

// TestRelistKeepsNewerState replays a relist whose LIST was read before
// watch events that the store has already applied: a pod deleted and a
// node deleted after the LIST, and a pod updated after it. The older LIST
// must not bring them back.
func TestRelistKeepsNewerState(t *testing.T) {
	v := func(rv string) podOpt { return func(p *Pod) { p.ResourceVersion = rv } }
	nv := func(n *Node, rv string) *Node { n.ResourceVersion = rv; return n }
	st := NewStore()
	st.Apply([]Event{
		{Node: nv(node("n0", "analytics", true), "5")},
		{Node: nv(node("n1", "analytics", true), "6")},
		{Pod: executor("team-a", "stays", "analytics", "sales", running("n0"), v("7"))},
		{Pod: executor("team-a", "deleted", "analytics", "sales", running("n0"), v("8"))},
	})
	// The LIST is read at version 10.
	list := List{
		Pods: []*Pod{
			executor("team-a", "stays", "analytics", "sales", running("n0"), v("7")),
			executor("team-a", "deleted", "analytics", "sales", running("n0"), v("8")),
		},
		Nodes:       []*Node{nv(node("n0", "analytics", true), "5"), nv(node("n1", "analytics", true), "6")},
		PodsVersion: "10", NodesVersion: "10",
	}
	// The watch delivers versions 11 to 14 before the relist commits.
	st.Apply([]Event{
		{Pod: executor("team-a", "deleted", "analytics", "sales", running("n0"), v("11")), Deleted: true},
		{Node: nv(node("n1", "analytics", true), "12"), Deleted: true},
		{Pod: executor("team-a", "stays", "analytics", "sales", running("n0"), v("13"), state(PodFailed))},
		{Pod: executor("team-a", "new", "analytics", "sales", running("n0"), v("14"))},
	})
	st.Replace(list)
	got := view(st.Current(), "n1")
	want := view(NewSnapshot([]*Pod{
		executor("team-a", "stays", "analytics", "sales", running("n0"), v("13"), state(PodFailed)),
		executor("team-a", "new", "analytics", "sales", running("n0"), v("14")),
	}, []*Node{nv(node("n0", "analytics", true), "5")}))
	want.Gone = []string{"n1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot after an older relist, -want, +got:\n%s", diff)
	}
}

// TestUnauthorizedListBounded checks that a flood of unauthorized executors
// is counted in full and listed at most MaxUnauthorized at a time, the same
// ones every round.
func TestUnauthorizedListBounded(t *testing.T) {
	var pods []*Pod
	for i := range 500 {
		pods = append(pods, executor("team-x", fmt.Sprintf("rogue-%03d", i), "analytics", "rogue", running("n0")))
	}
	got := Compute(params(), NewSnapshot(pods, []*Node{node("n0", "analytics", true)}), v1alpha1.PoolCapacityObservation{}, t0).Observation
	if len(got.UnauthorizedExecutors) != MaxUnauthorized || got.UnauthorizedCount != 500 || got.UnauthorizedExecutors[0].Pod != "rogue-000" {
		t.Errorf("500 unauthorized executors: listed %d (first %q), counted %d; want %d listed from rogue-000, 500 counted",
			len(got.UnauthorizedExecutors), got.UnauthorizedExecutors[0].Pod, got.UnauthorizedCount, MaxUnauthorized)
	}
}

// TestDepartedPodsKeepTheirReason deletes executors whose last state says
// why they went (a drain, a spot reclaim, an OOM kill) before any reconcile
// saw them terminating: their failure must still reach the status.
func TestDepartedPodsKeepTheirReason(t *testing.T) {
	st := NewStore()
	n := node("n0", "analytics", true)
	st.Apply([]Event{
		{Node: n},
		{Pod: executor("team-a", "drained", "analytics", "sales", running("n0"))},
		{Pod: executor("team-a", "oom", "analytics", "sales", running("n0"))},
		{Pod: executor("team-a", "scaled-down", "analytics", "sales", running("n0"))},
	})
	st.Apply([]Event{
		{Pod: executor("team-a", "drained", "analytics", "sales", running("n0"), state(PodDeleted), func(p *Pod) {
			p.DeletedAt = t0.Add(time.Minute)
			p.Disruption = &Disruption{Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", At: t0}
		}), Deleted: true},
		{Pod: executor("team-a", "oom", "analytics", "sales", running("n0"), state(PodFailed), container(Container{Name: "executor",
			Terminated: &Termination{Reason: "OOMKilled", ExitCode: 137, FinishedAt: t0}})), Deleted: true},
		{Pod: executor("team-a", "scaled-down", "analytics", "sales", running("n0"), state(PodDeleted)), Deleted: true},
	})
	got := Compute(params(), st.Current(), v1alpha1.PoolCapacityObservation{}, t0.Add(time.Hour)).Observation
	var reasons []string
	for _, f := range got.Failures {
		reasons = append(reasons, f.Pod+" "+string(f.Reason))
	}
	if diff := cmp.Diff([]string{"drained Disrupted", "oom OOMKilled"}, reasons); diff != "" {
		t.Errorf("failures of executors deleted before a reconcile saw them, -want, +got:\n%s", diff)
	}
	if got.OccupiedExecutors != 0 || got.Allocations[0].PoolExecutors != 0 {
		t.Errorf("departed executors count: occupied %d, sales %d; want 0", got.OccupiedExecutors, got.Allocations[0].PoolExecutors)
	}
}

// TestCleanupIsNotTheCause evicts an executor whose failure is recorded:
// the record keeps why it failed.
func TestCleanupIsNotTheCause(t *testing.T) {
	n := []*Node{node("n0", "analytics", true)}
	failed := executor("team-a", "e", "analytics", "sales", on("n0"), state(PodFailed), container(Container{Name: "executor",
		Terminated: &Termination{Reason: "Error", ExitCode: 1, FinishedAt: t0}}))
	prev := Compute(params(), NewSnapshot([]*Pod{failed}, n), v1alpha1.PoolCapacityObservation{}, t0.Add(time.Hour)).Observation
	evicted := executor("team-a", "e", "analytics", "sales", on("n0"), state(PodDeleted), func(p *Pod) {
		p.DeletedAt = t0.Add(2 * time.Hour)
		p.Disruption = &Disruption{Reason: "EvictionByEvictionAPI", At: t0.Add(2 * time.Hour)}
	})
	got := Compute(params(), NewSnapshot([]*Pod{evicted}, n), prev, t0.Add(3*time.Hour)).Observation.Failures
	if diff := cmp.Diff(prev.Failures, got); diff != "" {
		t.Errorf("failure record of an executor evicted after it failed, -want, +got:\n%s", diff)
	}
}
