package cost

import (
	"testing"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// BenchmarkNewPrices prices a pool as every reconcile of the provider and
// every warm-policy decision of the function does: the embedded catalogs
// are read in place, never copied.
func BenchmarkNewPrices(b *testing.B) {
	p := &v1alpha1.Pricing{Discounts: []v1alpha1.CapacityTypeDiscount{{CapacityType: "spot", Discount: "0.6"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewPrices(p); err != nil {
			b.Fatal(err)
		}
	}
}
