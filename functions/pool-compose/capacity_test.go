package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestObserveCapacityReadsProviderStatus writes a status the way the
// capacity provider does, from its Go type, and reads it back as the
// function does: every field the Pool status uses survives.
func TestObserveCapacityReadsProviderStatus(t *testing.T) {
	at := metav1.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	want := capv1alpha1.PoolCapacityObservation{
		TotalExecutors: 8, AvailableExecutors: 3, OccupiedExecutors: 5, PendingExecutors: 1,
		Nodes:          capv1alpha1.NodeCounts{Ready: 4, NotReady: 1},
		Allocations:    []capv1alpha1.Allocation{{QueryService: "qs", Namespace: "ns", PoolExecutors: 5, RegularExecutors: 2, AllocatedAt: &at}},
		WarmupFailures: []capv1alpha1.WarmupFailure{{Image: "img:1", Reason: "ErrImagePull", Message: "not found", Nodes: 2}},
		ObservedAt:     at,
	}
	ap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&want)
	if err != nil {
		t.Fatal(err)
	}
	s, err := structpb.NewStruct(map[string]any{"status": map[string]any{"atProvider": ap}})
	if err != nil {
		t.Fatal(err)
	}
	got := observeCapacity(s)
	if got == nil {
		t.Fatal("observeCapacity() = nil: the provider's status does not decode")
	}
	if diff := cmp.Diff(want, got.PoolCapacityObservation); diff != "" {
		t.Errorf("observeCapacity() (-provider +function):\n%s", diff)
	}
}

// TestPoolStatusShowsFailuresAndUnauthorized checks that what tenants see
// on their Pool counts the capacity's failures by reason and names the
// unauthorized executors.
func TestPoolStatusShowsFailuresAndUnauthorized(t *testing.T) {
	o := &CapacityObservation{capv1alpha1.PoolCapacityObservation{
		Failures: []capv1alpha1.Failure{
			{Pod: "a", Reason: capv1alpha1.FailureOOMKilled}, {Pod: "b", Reason: capv1alpha1.FailureDisrupted}, {Pod: "c", Reason: capv1alpha1.FailureOOMKilled},
		},
		UnauthorizedExecutors: []capv1alpha1.UnauthorizedExecutor{{Pod: "r", Namespace: "team-x", QueryService: "rogue"}},
	}}
	type view struct {
		Failures     []poolv1alpha1.ExecutorFailureCount
		Unauthorized []poolv1alpha1.UnauthorizedExecutor
	}
	want := view{
		Failures:     []poolv1alpha1.ExecutorFailureCount{{Reason: "OOMKilled", Count: 2}, {Reason: "Disrupted", Count: 1}},
		Unauthorized: []poolv1alpha1.UnauthorizedExecutor{{Pod: "r", Namespace: "team-x", QueryService: "rogue"}},
	}
	if diff := cmp.Diff(want, view{o.executorFailures(), o.unauthorizedExecutors()}); diff != "" {
		t.Errorf("Pool status from the capacity (-want +got):\n%s", diff)
	}
}
