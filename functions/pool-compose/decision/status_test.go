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
