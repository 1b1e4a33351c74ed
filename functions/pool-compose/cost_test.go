package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
)

// TestCostEncoded checks that the status the function writes carries
// status.cost as its API type marshals it: an encoder that leaves a field
// out would drop it from every Pool.
func TestCostEncoded(t *testing.T) {
	c := &poolv1alpha1.PoolCost{DollarsPerHour: "1.625526", WarmDollarsPerHour: "0.580545", WasteDollarsPerHour: "0", Dollars: "20.5",
		WarmDollars: "12", WasteDollars: "0.25",
		Since: metav1.NewTime(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)),
		QueryServices: []poolv1alpha1.QueryServiceCost{
			{QueryService: poolv1alpha1.QueryServiceReference{Name: "sales", Namespace: "team-a"}, DollarsPerHour: "1.044981", Dollars: "4.179924"},
			{QueryService: poolv1alpha1.QueryServiceReference{Name: "idle", Namespace: "team-c"}, DollarsPerHour: "0", Dollars: "0"},
		},
		ExecutorStarts: []poolv1alpha1.ExecutorStartSummary{{Placement: "NewNode", Executors: 4, P50Seconds: "75"}}}
	// Through JSON, as the API server reads it: numbers are float64, as
	// in a structpb.Value.
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	got := statusValue(poolv1alpha1.PoolStatus{Cost: c}, false, nil).GetStructValue().AsMap()["cost"]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status.cost as written: -as the API type marshals it +got:\n%s", diff)
	}
}
