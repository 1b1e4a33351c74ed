package sizing

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// FuzzDerive feeds Derive random executors, an odd catalog entry and
// random settings, and checks it never panics and never reports an executor
// compatible with a type that cannot hold ExecutorsPerNode of it, compared
// exactly in decimal rather than with Derive's integer arithmetic.
func FuzzDerive(f *testing.F) {
	f.Add(uint64(1), uint8(3), int8(1), int64(15000), int64(30<<10), uint8(0), false, false, false, uint8(0), int64(96000), int64(768<<10), int8(0))
	f.Add(uint64(2), uint8(40), int8(4), int64(-1), int64(-1), uint8(1), true, true, true, uint8(5), int64(0), int64(0), int8(3))
	f.Add(uint64(3), uint8(1), int8(0), int64(1<<62), int64(1<<62), uint8(2), true, false, true, uint8(200), int64(1<<62), int64(1<<62), int8(-1))
	f.Add(uint64(4), uint8(9), int8(-3), int64(1), int64(1), uint8(3), true, true, false, uint8(17), int64(500), int64(100), int8(1))
	base := mustCatalog(f, CloudAWS)
	families := base.Families()
	f.Fuzz(func(t *testing.T, seed uint64, count uint8, per int8, cpuMilli, memMi int64, mode uint8, spot, autoUpgrade, running bool, prev uint8, ovCPUMilli, ovMemMi int64, maxSpot int8) {
		r := rand.New(rand.NewPCG(seed, uint64(count)))
		cat := base.WithOverrides([]InstanceType{{
			Name: "fuzz.box", Family: "fuzz", Arch: []string{ArchAMD64, ArchARM64}[r.IntN(2)], PricePerHour: r.Float64() * 10,
			CPU: *resource.NewMilliQuantity(ovCPUMilli, resource.DecimalSI), Memory: *resource.NewQuantity(ovMemMi<<20>>20<<20, resource.BinarySI),
			LocalNVMeGiB: int64(r.IntN(2) * 100),
		}})
		execs := make([]Executor, count)
		for i := range execs {
			cpu, mem := int64(1+r.IntN(200_000)), int64(1+r.IntN(2<<20))<<20
			if i == 0 {
				cpu, mem = cpuMilli, memMi<<20>>20<<20
			}
			execs[i] = Executor{
				QueryService: fmt.Sprintf("ns-%d/qs-%d", r.IntN(5), r.IntN(20)),
				CPU:          *resource.NewMilliQuantity(cpu, resource.DecimalSI),
				Memory:       *resource.NewQuantity(mem, resource.BinarySI),
			}
		}
		in := Input{
			Cloud: CloudAWS, Catalog: cat, Spot: spot, AutoUpgrade: autoUpgrade, ExecutorsHaveRun: running,
			ExecutorsPerNode: int32(per), Executors: execs, Overhead: poolOverhead, MaxSpotTypes: int(maxSpot),
			Arch: []string{"", ArchAMD64, ArchARM64}[r.IntN(3)],
		}
		if int(prev) < len(cat.Types) {
			in.Previous = cat.Types[prev].Name
		}
		switch mode % 4 {
		case 0:
			in.InstanceFamily = families[int(seed%uint64(len(families)))]
		case 1:
			in.InstanceType = cat.Types[int(seed%uint64(len(cat.Types)))].Name
		case 2:
			in.InstanceFamily = "fuzz"
		}
		got, err := Derive(in)
		if err != nil {
			if mode%4 == 3 && count > 0 {
				t.Fatalf("sizing from the catalog failed: %v", err)
			}
			return
		}
		chosen, ok := cat.Lookup(got.InstanceType)
		if !ok {
			t.Fatalf("chose %q, which is not in the catalog", got.InstanceType)
		}
		alloc := Allocatable(CloudAWS, chosen, poolOverhead)
		if got.Allocatable.CPU.Cmp(alloc.CPU) != 0 || got.Allocatable.Memory.Cmp(alloc.Memory) != 0 {
			t.Fatalf("Allocatable %v is not Allocatable() of %s, %v", got.Allocatable, chosen.Name, alloc)
		}
		n := max(int64(per), 1)
		if len(got.Compatibility) != len(execs) {
			t.Fatalf("%d compatibility entries for %d executors", len(got.Compatibility), len(execs))
		}
		if !slices.IsSortedFunc(got.Compatibility, func(a, b Compatibility) int {
			if a.QueryService < b.QueryService {
				return -1
			}
			if a.QueryService > b.QueryService {
				return 1
			}
			return 0
		}) {
			t.Fatal("compatibility is not sorted by QueryService")
		}
		for _, c := range got.Compatibility {
			if c.InstanceType != chosen.Name {
				t.Fatalf("%s reported against %s, not the chosen %s", c.QueryService, c.InstanceType, chosen.Name)
			}
			if c.Compatible != (c.Message == "") {
				t.Fatalf("%s: compatible %v with message %q", c.QueryService, c.Compatible, c.Message)
			}
			if c.Compatible && !holds(n, c.RequiredCPU, alloc.CPU) || c.Compatible && !holds(n, c.RequiredMemory, alloc.Memory) {
				t.Fatalf("%s (%s CPU, %s) x %d is compatible with %s but its allocatable is %s CPU, %s",
					c.QueryService, c.RequiredCPU.String(), c.RequiredMemory.String(), n, chosen.Name, alloc.CPU.String(), alloc.Memory.String())
			}
		}
		// Every offered type holds as many of the largest compatible
		// executor (per resource) as PerNode says.
		var req need
		for _, c := range got.Compatibility {
			if c.Compatible {
				req = req.max(need{cpu: milli(c.RequiredCPU), mem: value(c.RequiredMemory), pods: 1})
			}
		}
		if len(got.Offered) == 0 || got.Offered[0].Name != chosen.Name {
			t.Fatalf("offered %v does not start with the chosen %s", got.Offered, chosen.Name)
		}
		for _, o := range got.Offered {
			it, _ := cat.Lookup(o.Name)
			a := Allocatable(CloudAWS, it, poolOverhead)
			var slots int64
			if req.cpu > 0 || req.mem > 0 {
				slots = limit
				if req.cpu > 0 {
					slots = min(slots, milli(a.CPU)/req.cpu)
				}
				if req.mem > 0 {
					slots = min(slots, value(a.Memory)/req.mem)
				}
			}
			if slots != got.PerNode || o.PerNode != got.PerNode {
				t.Fatalf("offered %s holds %d (reported %d), the chosen %s %d", o.Name, slots, o.PerNode, chosen.Name, got.PerNode)
			}
		}
		if got.SpotTypes != nil {
			if !spot {
				t.Fatalf("spot types %v without spot", got.SpotTypes)
			}
			limit := int(maxSpot)
			if limit < 1 {
				limit = DefaultMaxSpotTypes
			}
			if len(got.SpotTypes) > limit || !slices.Contains(got.SpotTypes, chosen.Name) {
				t.Fatalf("spot types %v: more than %d or without %s", got.SpotTypes, limit, chosen.Name)
			}
			for _, name := range got.SpotTypes {
				it, ok := cat.Lookup(name)
				if !ok || it.Arch != chosen.Arch {
					t.Fatalf("spot type %s is unknown or not %s", name, chosen.Arch)
				}
				if in.InstanceType != "" && (it.CPU.Cmp(chosen.CPU) != 0 || it.Memory.Cmp(chosen.Memory) != 0) {
					t.Fatalf("spot type %s stands in for the pinned %s with another CPU or memory", name, chosen.Name)
				}
				a := Allocatable(CloudAWS, it, poolOverhead)
				for _, c := range got.Compatibility {
					if c.Compatible && (!holds(n, c.RequiredCPU, a.CPU) || !holds(n, c.RequiredMemory, a.Memory)) {
						t.Fatalf("spot type %s cannot hold %d of %s", name, n, c.QueryService)
					}
				}
			}
		}
	})
}

// holds reports whether n x req <= alloc, exactly.
func holds(n int64, req, alloc resource.Quantity) bool {
	if req.Sign() <= 0 {
		return true
	}
	total := req.AsDec()
	total.Mul(total, resource.NewQuantity(n, resource.DecimalSI).AsDec())
	return total.Cmp(alloc.AsDec()) <= 0
}
