package sizing_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/internal/sizing"
)

// A pool of the r7gd family with two attached QueryServices, one executor
// per node: the larger executor sets the size (32 vCPU for 30 CPU), and
// spot capacity may also use the family's types that hold exactly as many
// of it (an r7gd.12xlarge, 47.6 CPU allocatable, holds one 30 CPU executor;
// a 16xlarge would hold two), the chosen type first.
func ExampleDerive() {
	r, err := sizing.Derive(sizing.Input{
		Cloud:            sizing.CloudAWS,
		InstanceFamily:   "r7gd",
		Spot:             true,
		MaxSpotTypes:     4,
		ExecutorsPerNode: 1,
		Executors: []sizing.Executor{
			{QueryService: "analytics/reports", CPU: resource.MustParse("15"), Memory: resource.MustParse("30Gi")},
			{QueryService: "analytics/adhoc", CPU: resource.MustParse("30"), Memory: resource.MustParse("60Gi")},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.InstanceType)
	fmt.Println(r.DerivedFrom)
	fmt.Println(sizing.FormatCPU(r.Allocatable.CPU.MilliValue()), "CPU /", sizing.FormatMemory(r.Allocatable.Memory.Value()))
	fmt.Println(r.SpotTypes)
	for _, c := range r.Compatibility {
		fmt.Println(c.QueryService, c.Compatible)
	}
	// Output:
	// r7gd.8xlarge
	// instanceFamily r7gd sized for QueryService/analytics/adhoc
	// 31.85 CPU / 235.2Gi
	// [r7gd.8xlarge r7gd.12xlarge r6gd.8xlarge r6gd.12xlarge]
	// analytics/adhoc true
	// analytics/reports true
}
