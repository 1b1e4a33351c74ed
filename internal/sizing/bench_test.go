package sizing

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkDerive sizes a pool from the full AWS catalog for a growing
// number of attached executors of random shapes (1 to 64 CPU, 1 to 8Gi
// per CPU, some too large for any type), once from a family and once from
// the whole catalog with a ranked spot set, checking in the loop that every
// compatible executor fits the chosen type.
func BenchmarkDerive(b *testing.B) {
	cat := mustCatalog(b, CloudAWS)
	for _, mode := range []struct {
		name   string
		family string
		spot   bool
	}{
		{name: "family", family: "r7gd"},
		{name: "catalog-spot", spot: true},
	} {
		for _, n := range []int{1, 10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/executors=%d", mode.name, n), func(b *testing.B) {
				r := rand.New(rand.NewPCG(7, uint64(n)))
				execs := make([]Executor, n)
				for i := range execs {
					cpu := 1 + r.IntN(64)
					mem := cpu * (1 + r.IntN(8))
					execs[i] = exec(fmt.Sprintf("tenant-%d/qs-%d", r.IntN(50), i), fmt.Sprint(cpu), fmt.Sprintf("%dGi", mem))
				}
				in := Input{
					Cloud: CloudAWS, Catalog: cat, InstanceFamily: mode.family, Spot: mode.spot,
					ExecutorsPerNode: 1, Executors: execs, Overhead: poolOverhead, AutoUpgrade: true,
				}
				var compatible int
				var price float64
				b.ReportAllocs()
				for b.Loop() {
					got, err := Derive(in)
					if err != nil {
						b.Fatal(err)
					}
					it, _ := cat.Lookup(got.InstanceType)
					alloc := need{cpu: got.Allocatable.CPU.MilliValue(), mem: got.Allocatable.Memory.Value(), pods: MaxPods}
					compatible = 0
					for _, c := range got.Compatibility {
						if !c.Compatible {
							continue
						}
						compatible++
						if !fits(1, need{cpu: c.RequiredCPU.MilliValue(), mem: c.RequiredMemory.Value(), pods: 1}, alloc) {
							b.Fatalf("%s is compatible with %s but does not fit", c.QueryService, got.InstanceType)
						}
					}
					if len(got.Compatibility) != n || (mode.spot && len(got.SpotTypes) == 0) {
						b.Fatalf("%d compatibility entries for %d executors, %d spot types", len(got.Compatibility), n, len(got.SpotTypes))
					}
					price = it.PricePerHour
				}
				b.ReportMetric(float64(compatible)/float64(n), "compatible/executor")
				b.ReportMetric(price, "usd/h")
			})
		}
	}
}
