package decision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

func TestCost(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	figures := func(rate, total string) capv1alpha1.CostFigures {
		return capv1alpha1.CostFigures{Nodes: "1", DollarsPerHour: rate, NodeSeconds: "3600", Dollars: total}
	}
	cases := map[string]struct {
		reason string
		o      *CapacityObservation
		want   *poolv1alpha1.PoolCost
	}{
		"NotCounted": {
			reason: "A PoolCapacity that counts no cost yet leaves status.cost out.",
			o:      &CapacityObservation{},
		},
		"AttachedAndIdle": {
			reason: "Every attached QueryService is listed, at zero when its executors hold no node, beside the rate of warm slots and waste and the median executor start on existing and new nodes; one that is not attached but ran is listed too.",
			o: &CapacityObservation{capv1alpha1.PoolCapacityObservation{
				Allocations: []capv1alpha1.Allocation{{QueryService: "sales", Namespace: "team-a"}, {QueryService: "idle", Namespace: "team-c"}},
				Cost: &capv1alpha1.CostObservation{Since: since, DollarsPerHour: "1.625526", Dollars: "20.5",
					ByUse: []capv1alpha1.UseCost{
						{Part: capv1alpha1.CostQueryService, QueryService: "sales", Namespace: "team-a", CostFigures: figures("1.044981", "4.179924")},
						{Part: capv1alpha1.CostQueryService, QueryService: "stray", Namespace: "team-x", CostFigures: figures("0.1", "0.2")},
						{Part: capv1alpha1.CostWarm, CostFigures: figures("0.580545", "12")},
					}},
				ExecutorStarts: &capv1alpha1.ExecutorStarts{ByPlacement: []capv1alpha1.PlacementStarts{
					{Placement: capv1alpha1.PlacementExistingNode, Count: 2, SumSeconds: "2", P50Seconds: "0.5"},
					{Placement: capv1alpha1.PlacementNewNode, Count: 4, SumSeconds: "284", P50Seconds: "75"},
				}},
			}},
			want: &poolv1alpha1.PoolCost{DollarsPerHour: "1.625526", Dollars: "20.5", Since: since, WarmDollarsPerHour: "0.580545", WasteDollarsPerHour: "0",
				WarmDollars: "12", WasteDollars: "0",
				QueryServices: []poolv1alpha1.QueryServiceCost{
					{QueryService: poolv1alpha1.QueryServiceReference{Name: "sales", Namespace: "team-a"}, DollarsPerHour: "1.044981", Dollars: "4.179924"},
					{QueryService: poolv1alpha1.QueryServiceReference{Name: "idle", Namespace: "team-c"}, DollarsPerHour: "0", Dollars: "0"},
					{QueryService: poolv1alpha1.QueryServiceReference{Name: "stray", Namespace: "team-x"}, DollarsPerHour: "0.1", Dollars: "0.2"},
				},
				ExecutorStarts: []poolv1alpha1.ExecutorStartSummary{
					{Placement: "ExistingNode", Executors: 2, P50Seconds: "0.5"},
					{Placement: "NewNode", Executors: 4, P50Seconds: "75"},
				}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.o.cost()); diff != "" {
				t.Errorf("%s\ncost(): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPricingReachesPoolCapacity(t *testing.T) {
	p := &capv1alpha1.Pricing{Catalog: "aws", Discounts: []capv1alpha1.CapacityTypeDiscount{{CapacityType: "spot", Discount: "0.6"}}}
	cases := map[string]struct {
		reason string
		p      *capv1alpha1.Pricing
		want   any
	}{
		"Unset":    {reason: "Without settings' capacity.pricing the PoolCapacity carries none: the provider prices from the embedded catalogs."},
		"Settings": {reason: "The settings' capacity.pricing is written to spec.forProvider.pricing as is.", p: p, want: map[string]any{"catalog": "aws", "discounts": []any{map[string]any{"capacityType": "spot", "discount": "0.6"}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := objects.CapacityArgs{Pool: "shared", Namespace: "platform", ExecutorsPerNode: 4, MaxExecutors: 8, Pricing: tc.p}
			u := objects.PoolCapacity(a)
			got := u.Object["spec"].(map[string]any)["forProvider"].(map[string]any)["pricing"]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nspec.forProvider.pricing: -want +got:\n%s", tc.reason, diff)
			}
			if tc.p != nil && capacityKey(a) == capacityKey(objects.CapacityArgs{Pool: "shared", Namespace: "platform", ExecutorsPerNode: 4, MaxExecutors: 8}) {
				t.Errorf("%s\ncapacityKey ignores pricing: a change of prices would not rebuild the PoolCapacity", tc.reason)
			}
		})
	}
}
