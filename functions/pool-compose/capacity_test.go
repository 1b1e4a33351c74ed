package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
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
