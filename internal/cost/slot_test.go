package cost

import (
	"testing"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

func TestSlotPrice(t *testing.T) {
	cases := map[string]struct {
		reason string
		o      *v1alpha1.CostObservation
		want   float64
		wantOK bool
	}{
		"NotCounting": {
			reason: "A pool whose cost is not counted yet has no slot price.",
		},
		"NoNodes": {
			reason: "A pool that never had a node has no slot price.",
			o:      &v1alpha1.CostObservation{},
		},
		"Unpriced": {
			reason: "Nodes of a type no price is known for give no slot price.",
			o:      &v1alpha1.CostObservation{ByNodeType: []v1alpha1.NodeTypeCost{{InstanceType: "mystery", CapacityType: OnDemand}}},
		},
		"Highest": {
			reason: "A slot costs the highest node price the pool has paid divided by executorsPerNode (4), gone nodes' types included.",
			o: &v1alpha1.CostObservation{ByNodeType: []v1alpha1.NodeTypeCost{
				{InstanceType: "r7gd.4xlarge", CapacityType: "spot", PricePerHour: "0.464436"},
				{InstanceType: "r7gd.8xlarge", CapacityType: OnDemand, PricePerHour: "2",
					CostFigures: v1alpha1.CostFigures{Nodes: "0", DollarsPerHour: "0"}},
				{InstanceType: "mystery", CapacityType: OnDemand},
			}},
			want: 0.5, wantOK: true,
		},
		"Free": {
			reason: "A node priced at zero gives a slot price of zero, known.",
			o:      &v1alpha1.CostObservation{ByNodeType: []v1alpha1.NodeTypeCost{{InstanceType: "kwok", CapacityType: OnDemand, PricePerHour: "0"}}},
			want:   0, wantOK: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := SlotPrice(daySpec, tc.o)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("%s\nSlotPrice: got %v, %t; want %v, %t", tc.reason, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
