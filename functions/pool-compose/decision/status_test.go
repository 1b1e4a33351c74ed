package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
)

// TestPhase: the pool's phase and its message, from the problem, the
// suspension, what the PoolCapacity observed and what is still not ready.
func TestPhase(t *testing.T) {
	observed := func(nodes, occupied, pending int32) *CapacityObservation {
		return &CapacityObservation{capv1alpha1.PoolCapacityObservation{
			Nodes: capv1alpha1.NodeCounts{Ready: nodes}, OccupiedExecutors: occupied, PendingExecutors: pending,
		}}
	}
	img := func(st poolv1alpha1.WarmupStatus, unused bool) poolv1alpha1.CachedImage {
		c := poolv1alpha1.CachedImage{Image: "ghcr.io/e6data/executor:3.1", WarmupStatus: st}
		if unused {
			c.UnusedSince = &metav1.Time{}
		}
		return c
	}
	type want struct {
		Phase   poolv1alpha1.PoolPhase
		Message string
	}
	cases := map[string]struct {
		reason string
		in     PhaseInput
		want   want
	}{
		"Deleting": {
			reason: "A pool being deleted says so, whatever else is wrong.",
			in:     PhaseInput{Deleting: true, Problem: failed("SizingFailed", "cannot size")},
			want:   want{poolv1alpha1.PhaseDeleting, "the pool is being deleted"},
		},
		"Failed": {
			reason: "A failure is the phase, with its message.",
			in:     PhaseInput{Problem: failed("SizingFailed", "cannot size pool"), MaxExecutors: 21},
			want:   want{poolv1alpha1.PhaseFailed, "cannot size pool"},
		},
		"Pending": {
			reason: "A pending problem is the phase, with its message.",
			in:     PhaseInput{Problem: pending("NodeSelectorRequired", "set spec.nodeSelector"), Suspend: true},
			want:   want{poolv1alpha1.PhasePending, "set spec.nodeSelector"},
		},
		"SuspendingKarpenterNodes": {
			reason: "A suspended Karpenter pool is Suspending while its nodes remain.",
			in:     PhaseInput{Suspend: true, Karpenter: true, Capacity: observed(2, 0, 0)},
			want:   want{poolv1alpha1.PhaseSuspending, "suspended: no new nodes; 2 pool node(s) remain until their executors finish"},
		},
		"SuspendingKarpenterNodePool": {
			reason: "Before the PoolCapacity reports, the NodePool's count says which nodes remain.",
			in:     PhaseInput{Suspend: true, Karpenter: true, NodePoolNodes: 1},
			want:   want{poolv1alpha1.PhaseSuspending, "suspended: no new nodes; 1 pool node(s) remain until their executors finish"},
		},
		"SuspendedKarpenter": {
			reason: "No node left: Suspended.",
			in:     PhaseInput{Suspend: true, Karpenter: true, Capacity: observed(0, 0, 0)},
			want:   want{poolv1alpha1.PhaseSuspended, "suspended: the pool launches no nodes; warm images are kept"},
		},
		"SuspendingCloudUnobserved": {
			reason: "A suspended pool of nodes burstpool does not remove waits for the PoolCapacity to say what still runs.",
			in:     PhaseInput{Suspend: true},
			want:   want{poolv1alpha1.PhaseSuspending, "suspended: no new executors; waiting for the PoolCapacity to report the executors still running"},
		},
		"SuspendingCloudExecutors": {
			reason: "Executors running or pending and placeholders keep it Suspending; its nodes stay.",
			in:     PhaseInput{Suspend: true, Capacity: observed(3, 1, 1), Placeholders: 2},
			want:   want{poolv1alpha1.PhaseSuspending, "suspended: no new executors; 2 executor(s) and 2 placeholder(s) remain"},
		},
		"SuspendedCloud": {
			reason: "Nothing of the pool runs on the nodes that stay: Suspended.",
			in:     PhaseInput{Suspend: true, Capacity: observed(3, 0, 0)},
			want:   want{poolv1alpha1.PhaseSuspended, "suspended: the pool launches no nodes; warm images are kept"},
		},
		"NoExistingNodes": {
			reason: "A pool on existing nodes that has none is Pending with what to do.",
			in:     PhaseInput{NoNodes: "no node matches", MaxExecutors: 21},
			want:   want{poolv1alpha1.PhasePending, "no node matches"},
		},
		"Active": {
			reason: "Everything ready and warm: Active, up to maxExecutors.",
			in:     PhaseInput{MaxExecutors: 21, Images: []poolv1alpha1.CachedImage{img(poolv1alpha1.WarmupReady, false)}},
			want:   want{poolv1alpha1.PhaseActive, "the pool runs up to 21 executors"},
		},
		"ActiveWhileWarming": {
			reason: "A new image warming does not take an Active pool out of service.",
			in:     PhaseInput{MaxExecutors: 21, Previous: poolv1alpha1.PhaseActive, Images: []poolv1alpha1.CachedImage{img(poolv1alpha1.WarmupPending, false)}},
			want:   want{poolv1alpha1.PhaseActive, "the pool runs up to 21 executors; warmup of ghcr.io/e6data/executor:3.1 in progress"},
		},
		"UnusedImageNotAwaited": {
			reason: "An image that left the warm set is not waited for.",
			in:     PhaseInput{MaxExecutors: 21, Images: []poolv1alpha1.CachedImage{img(poolv1alpha1.WarmupPending, true)}},
			want:   want{poolv1alpha1.PhaseActive, "the pool runs up to 21 executors"},
		},
		"Creating": {
			reason: "A new pool waits for its objects and its images.",
			in:     PhaseInput{MaxExecutors: 21, Waiting: []string{"NodePool burst-nodepool"}, Images: []poolv1alpha1.CachedImage{img(poolv1alpha1.WarmupPending, false)}},
			want:   want{poolv1alpha1.PhaseCreating, "waiting for NodePool burst-nodepool, warmup of ghcr.io/e6data/executor:3.1"},
		},
		"CreatingWhileActive": {
			reason: "An object that is not ready takes even an Active pool back to Creating.",
			in:     PhaseInput{MaxExecutors: 21, Previous: poolv1alpha1.PhaseActive, Waiting: []string{"PoolCapacity burst-capacity"}},
			want:   want{poolv1alpha1.PhaseCreating, "waiting for PoolCapacity burst-capacity"},
		},
		"Resuming": {
			reason: "A pool that was suspended is Resuming until it is ready.",
			in:     PhaseInput{MaxExecutors: 21, Previous: poolv1alpha1.PhaseSuspended, Waiting: []string{"NodePool burst-nodepool"}},
			want:   want{poolv1alpha1.PhaseResuming, "resuming: waiting for NodePool burst-nodepool"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			got.Phase, got.Message = phase(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nphase (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestBurstsCondition: the pool's BurstsUnblocked condition, from what the
// PoolCapacity says is overdue.
func TestBurstsCondition(t *testing.T) {
	observed := func(late *capv1alpha1.Overdue) *CapacityObservation {
		return &CapacityObservation{capv1alpha1.PoolCapacityObservation{Overdue: late}}
	}
	const check = ": check that the capacity provider runs and one replica holds its Lease provider-burstpool-capacity, and the PoolCapacity's Synced condition; to unblock the burst now, "
	const fixExecutors = "delete the pool's ExecutorGate and remove the gate from each waiting executor (docs/capacity.md, If the provider stops)"
	const fixNodes = "open each node with kubectl taint node <node> e6data.io/warming-"
	cases := map[string]struct {
		reason string
		o      *CapacityObservation
		want   Condition
	}{
		"NotCurrent": {
			reason: "Before the PoolCapacity reports, or while its figures are stale, nobody knows: Unknown, pointing at CapacityObserved.",
			want: Condition{Type: CondBurstsUnblocked, Status: metav1.ConditionUnknown, Reason: "CapacityNotCurrent",
				Message: "whether executors or pool nodes wait on the capacity provider past their bounds is not known while the PoolCapacity's figures are not current: see the CapacityObserved condition"},
		},
		"NothingOverdue": {
			reason: "Nothing overdue: True.",
			o:      observed(nil),
			want:   Condition{Type: CondBurstsUnblocked, Status: metav1.ConditionTrue, Reason: "NothingOverdue"},
		},
		"ExecutorsGated": {
			reason: "Executors still gated past the bound: False, with their count, what to check and how to release them.",
			o:      observed(&capv1alpha1.Overdue{Executors: 3}),
			want: Condition{Type: CondBurstsUnblocked, Status: metav1.ConditionFalse, Reason: "ExecutorsGatedPastBound",
				Message: "3 executor(s) still carry the scheduling gate e6data.io/pool-slot well past the bound at which the capacity provider releases them" + check + fixExecutors},
		},
		"NodesWarming": {
			reason: "Nodes still closed past openAfter: False, naming them, and how to open one.",
			o:      observed(&capv1alpha1.Overdue{Nodes: 2, NodeNames: []string{"n2", "n1"}}),
			want: Condition{Type: CondBurstsUnblocked, Status: metav1.ConditionFalse, Reason: "NodesWarmingPastOpenAfter",
				Message: "2 pool node(s) still carry the startup taint e6data.io/warming well past warmup.openAfter: n2, n1" + check + fixNodes},
		},
		"NodesBeyondTheList": {
			reason: "More nodes overdue than the PoolCapacity names: the rest are counted.",
			o:      observed(&capv1alpha1.Overdue{Nodes: 12, NodeNames: []string{"n1", "n2"}}),
			want: Condition{Type: CondBurstsUnblocked, Status: metav1.ConditionFalse, Reason: "NodesWarmingPastOpenAfter",
				Message: "12 pool node(s) still carry the startup taint e6data.io/warming well past warmup.openAfter: n1, n2 and 10 more" + check + fixNodes},
		},
		"Both": {
			reason: "Executors and nodes overdue: the executors' reason (what the burst waits for), and both in the message.",
			o:      observed(&capv1alpha1.Overdue{Executors: 1, Nodes: 1, NodeNames: []string{"n1"}}),
			want: Condition{Type: CondBurstsUnblocked, Status: metav1.ConditionFalse, Reason: "ExecutorsGatedPastBound",
				Message: "1 executor(s) still carry the scheduling gate e6data.io/pool-slot well past the bound at which the capacity provider releases them; " +
					"1 pool node(s) still carry the startup taint e6data.io/warming well past warmup.openAfter: n1" + check + fixExecutors + ", and " + fixNodes},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, burstsCondition(tc.o)); diff != "" {
				t.Errorf("%s\ncondition (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
