package sizing

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

// decision is the part of a Result each rule speaks about.
type decision struct {
	Type         string
	Kept         string
	Upgraded     bool
	PerNode      int64
	Offered      []string
	Incompatible []string
}

func decisionOf(r Result) decision {
	d := decision{Type: r.InstanceType, Kept: r.Kept, Upgraded: r.Upgraded, PerNode: r.PerNode}
	for _, o := range r.Offered {
		d.Offered = append(d.Offered, o.Name)
	}
	for _, c := range r.Compatibility {
		if !c.Compatible {
			d.Incompatible = append(d.Incompatible, c.QueryService)
		}
	}
	return d
}

func runRules(t *testing.T, cases map[string]struct {
	reason string
	in     Input
	want   decision
}) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Derive(tc.in)
			if err != nil {
				t.Fatalf("%s\nDerive(...): unexpected error: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, decisionOf(got)); diff != "" {
				t.Errorf("%s\nDerive(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRuleNoSilentDownsizing: until an executor has run on the pool, a
// family or catalog pool follows the QueryServices attached now; once
// executors have run, the type changes only with autoUpgrade, only upward,
// only to a type that holds every compatible QueryService; nothing
// attached or nothing fitting keeps what the pool has.
func TestRuleNoSilentDownsizing(t *testing.T) {
	aws := mustCatalog(t, CloudAWS)
	huge := exec("bi/huge", "120", "500Gi")
	// Three shapes on KWOK (100m and 10Mi reserved): wide memory, wide
	// CPU, and both.
	shapes := &Catalog{Cloud: CloudKWOK, Version: "test", Types: []InstanceType{
		{Name: "x.mem", Family: "x", CPU: q("8"), Memory: q("64Gi"), Arch: "amd64", PricePerHour: 1},
		{Name: "x.cpu", Family: "x", CPU: q("16"), Memory: q("32Gi"), Arch: "amd64", PricePerHour: 1.2},
		{Name: "x.both", Family: "x", CPU: q("16"), Memory: q("64Gi"), Arch: "amd64", PricePerHour: 2},
	}}
	runRules(t, map[string]struct {
		reason string
		in     Input
		want   decision
	}{
		"FamilyBeforeAnyQueryService": {
			reason: "Nothing attached and nothing recorded: the family's smallest size (r7gd.medium, 1 vCPU / 8Gi), not locked.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Overhead: poolOverhead},
			want:   decision{Type: "r7gd.medium", Offered: []string{"r7gd.medium"}},
		},
		"FirstQueryServiceDecides": {
			reason: "The pool recorded r7gd.medium before any QueryService; no executor has run, so the first QueryService (15 CPU, 30Gi) moves it to r7gd.4xlarge (15.68 CPU allocatable) although autoUpgrade is off.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Previous: "r7gd.medium", Overhead: poolOverhead, Executors: []Executor{q30}},
			want:   decision{Type: "r7gd.4xlarge", Upgraded: true, PerNode: 1, Offered: []string{"r7gd.4xlarge"}},
		},
		"FollowsDownBeforeExecutorsRun": {
			reason: "A larger QueryService was replaced before any executor ran: the pool follows down to r7gd.4xlarge (15.68 CPU holds one 15 CPU executor).",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Previous: "r7gd.16xlarge", Overhead: poolOverhead, Executors: []Executor{q30}},
			want:   decision{Type: "r7gd.4xlarge", PerNode: 1, Offered: []string{"r7gd.4xlarge"}},
		},
		"LockedKeepsWithoutAutoUpgrade": {
			reason: "Executors have run on r7gd.4xlarge (15.68 CPU); a 30 CPU QueryService attaches, autoUpgrade is off: the type stays and that QueryService is incompatible.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Previous: "r7gd.4xlarge", ExecutorsHaveRun: true, Overhead: poolOverhead, Executors: []Executor{q30, q60}},
			want: decision{Type: "r7gd.4xlarge", Kept: "executors have run on it and spec.instanceConfig.autoUpgrade is off", PerNode: 1,
				Offered: []string{"r7gd.4xlarge"}, Incompatible: []string{"analytics/q60"}},
		},
		"LockedUpgradesWithAutoUpgrade": {
			reason: "The same with autoUpgrade: r7gd.8xlarge (31.64 CPU) holds one 30 CPU executor and is larger than r7gd.4xlarge.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", AutoUpgrade: true, Previous: "r7gd.4xlarge", ExecutorsHaveRun: true, Overhead: poolOverhead, Executors: []Executor{q30, q60}},
			want:   decision{Type: "r7gd.8xlarge", Upgraded: true, PerNode: 1, Offered: []string{"r7gd.8xlarge"}},
		},
		"LockedNeverDownsizes": {
			reason: "Executors have run on r7gd.16xlarge; only a 15 CPU QueryService is left, which a 4xlarge would hold: the 16xlarge (63.56 CPU, 4 executors) stays, autoUpgrade or not.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", AutoUpgrade: true, Previous: "r7gd.16xlarge", ExecutorsHaveRun: true, Overhead: poolOverhead, Executors: []Executor{q30}},
			want:   decision{Type: "r7gd.16xlarge", Kept: "executors have run on it and it holds every compatible QueryService", PerNode: 4, Offered: []string{"r7gd.16xlarge"}},
		},
		"NothingAttachedKeeps": {
			reason: "Every QueryService detached before any executor ran: the pool keeps r7gd.8xlarge rather than dropping to r7gd.medium.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Previous: "r7gd.8xlarge", Overhead: poolOverhead},
			want:   decision{Type: "r7gd.8xlarge", Kept: "no QueryService is attached", Offered: []string{"r7gd.8xlarge"}},
		},
		"NothingFitsKeeps": {
			reason: "Only a 120 CPU / 500Gi QueryService is attached, more than r7gd.16xlarge's 63.56 CPU: the pool keeps r7gd.8xlarge.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Previous: "r7gd.8xlarge", Overhead: poolOverhead, Executors: []Executor{huge}},
			want:   decision{Type: "r7gd.8xlarge", Kept: "no attached QueryService fits any candidate type", Offered: []string{"r7gd.8xlarge"}, Incompatible: []string{"bi/huge"}},
		},
		"CatalogPoolKeepsWhenAllDetach": {
			reason: "A pool sized from the catalog (c6i.xlarge) whose QueryServices all detached keeps its type instead of failing for want of something to size from.",
			in:     Input{Catalog: aws, Arch: ArchAMD64, Previous: "c6i.xlarge", ExecutorsHaveRun: true, Overhead: poolOverhead},
			want:   decision{Type: "c6i.xlarge", Kept: "no QueryService is attached", Offered: []string{"c6i.xlarge"}},
		},
		"UpgradeOnlyUpward": {
			reason: "Executors ran on x.mem (7.9 CPU / 63.99Gi); a 12 CPU / 8Gi executor needs more CPU. x.cpu (15.9 CPU) holds it but has only 31.99Gi, less memory than x.mem: the pool moves to x.both (15.9 CPU / 63.99Gi) instead.",
			in: Input{Cloud: CloudKWOK, Catalog: shapes, InstanceFamily: "x", AutoUpgrade: true, Previous: "x.mem", ExecutorsHaveRun: true,
				Executors: []Executor{exec("a/small", "4", "8Gi"), exec("a/cpu", "12", "8Gi")}},
			want: decision{Type: "x.both", Upgraded: true, PerNode: 1, Offered: []string{"x.both"}},
		},
		"NoRequestsIsIncompatible": {
			reason: "A QueryService without a memory request cannot be sized for: it is incompatible and does not size the pool (r7gd.4xlarge for the 15 CPU / 30Gi one).",
			in: Input{Catalog: aws, InstanceFamily: "r7gd", Overhead: poolOverhead,
				Executors: []Executor{q30, {QueryService: "bi/unset", CPU: q("100")}}},
			want: decision{Type: "r7gd.4xlarge", PerNode: 1, Offered: []string{"r7gd.4xlarge"}, Incompatible: []string{"bi/unset"}},
		},
	})
}

// TestRuleExecutorsPerNodeExact: every offered type holds exactly as many
// executors of the largest compatible QueryService as executorsPerNode
// asks (when any candidate does); spot stand-ins are of the same shape,
// not bare metal unless asked, of the same family unless neighbours are
// allowed.
func TestRuleExecutorsPerNodeExact(t *testing.T) {
	aws := mustCatalog(t, CloudAWS)
	runRules(t, map[string]struct {
		reason string
		in     Input
		want   decision
	}{
		"SpotSetSameShapeOnly": {
			reason: "A 15 CPU executor, one per node: r7gd.4xlarge (15.68 CPU) holds one; the 8xlarge (31.64) holds two and the 12xlarge three, so neither stands in; the family alone gives fewer than SpotMinTypes, so r6gd.4xlarge joins; no other family, since the pool names r7gd.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Spot: true, Overhead: poolOverhead, Executors: []Executor{q30}},
			want:   decision{Type: "r7gd.4xlarge", PerNode: 1, Offered: []string{"r7gd.4xlarge", "r6gd.4xlarge"}},
		},
		"SpotNeighbourGeneration": {
			reason: "With neighbours allowed, r6gd.4xlarge (16 vCPU / 128Gi, 15.68 CPU allocatable) holds the same one executor; r6g has no NVMe.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Spot: true, SpotNeighbours: true, Overhead: poolOverhead, Executors: []Executor{q30}},
			want:   decision{Type: "r7gd.4xlarge", PerNode: 1, Offered: []string{"r7gd.4xlarge", "r6gd.4xlarge"}},
		},
		"FourPerNodeSpot": {
			reason: "Four 3.5 CPU / 28Gi executors per node: r7gd.4xlarge (15.68 CPU / 116.3Gi) holds exactly 4; r6gd.4xlarge the same; 8xlarges hold 8.",
			in: Input{Catalog: aws, InstanceFamily: "r7gd", Spot: true, SpotNeighbours: true, ExecutorsPerNode: 4, Overhead: poolOverhead,
				Executors: []Executor{exec("a/q", "3500m", "28Gi")}},
			want: decision{Type: "r7gd.4xlarge", PerNode: 4, Offered: []string{"r7gd.4xlarge", "r6gd.4xlarge"}},
		},
		"NoMetalUnlessAsked": {
			reason: "A 60 CPU executor needs r7gd.16xlarge (63.56 CPU); r7gd.metal has the same 64 vCPU / 512Gi and holds one too, but is not offered; r6gd.16xlarge, a neighbouring generation, is.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Spot: true, Overhead: poolOverhead, Executors: []Executor{q120}},
			want:   decision{Type: "r7gd.16xlarge", PerNode: 1, Offered: []string{"r7gd.16xlarge", "r6gd.16xlarge"}},
		},
		"MetalWhenAsked": {
			reason: "With bare metal allowed, r7gd.metal (64 vCPU / 512Gi, one 60 CPU executor) stands in, and so do r6gd's 16xlarge and metal.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Spot: true, AllowMetal: true, Overhead: poolOverhead, Executors: []Executor{q120}},
			want:   decision{Type: "r7gd.16xlarge", PerNode: 1, Offered: []string{"r7gd.16xlarge", "r7gd.metal", "r6gd.16xlarge", "r6gd.metal"}},
		},
		"CatalogExactHolder": {
			reason: "Two 7 CPU / 14Gi executors per node from the amd64 catalog: c6i.4xlarge (32Gi) cannot hold 28Gi; m6i.4xlarge (15.68 CPU / 58.9Gi) holds exactly 2.",
			in: Input{Catalog: aws, Arch: ArchAMD64, ExecutorsPerNode: 2, Overhead: poolOverhead,
				Executors: []Executor{exec("a/q", "7", "14Gi")}},
			want: decision{Type: "m6i.4xlarge", PerNode: 2, Offered: []string{"m6i.4xlarge"}},
		},
		"CatalogPrefersExactOverCheaper": {
			reason: "One 6 CPU executor per node on KWOK (100m reserved): big (16 vCPU, 15.9 CPU allocatable) is cheaper but holds 2; small (8 vCPU, 7.9 CPU) holds exactly 1 and is chosen.",
			in: Input{Cloud: CloudKWOK, Catalog: &Catalog{Cloud: CloudKWOK, Version: "test", Types: []InstanceType{
				{Name: "big", Family: "b", CPU: q("16"), Memory: q("64Gi"), Arch: "amd64", PricePerHour: 1},
				{Name: "small", Family: "s", CPU: q("8"), Memory: q("32Gi"), Arch: "amd64", PricePerHour: 1.1},
			}}, Executors: []Executor{exec("a/q", "6", "12Gi")}},
			want: decision{Type: "small", PerNode: 1, Offered: []string{"small"}},
		},
		"FamilyWithoutExactSize": {
			reason: "Four 1 CPU / 8Gi executors per node: r7gd.xlarge (3.71 CPU) holds 3, r7gd.2xlarge (7.7 CPU / 56.8Gi) holds 7: no r7gd size holds exactly 4, and PerNode says 7.",
			in: Input{Catalog: aws, InstanceFamily: "r7gd", ExecutorsPerNode: 4, Overhead: poolOverhead,
				Executors: []Executor{exec("a/q", "1", "8Gi")}},
			want: decision{Type: "r7gd.2xlarge", PerNode: 7, Offered: []string{"r7gd.2xlarge"}},
		},
	})
}

// TestPropertyOfferedHoldExactly sizes random executors built to fit a
// random AWS type exactly executorsPerNode times, from that type's family
// and from the catalog of its arch, on spot with and without neighbours:
// every offered type must hold exactly executorsPerNode executors of the
// largest compatible executor, computed here with Allocatable and the pods
// the type's network holds beside the DaemonSets.
func TestPropertyOfferedHoldExactly(t *testing.T) {
	cat := mustCatalog(t, CloudAWS)
	r := rand.New(rand.NewPCG(10, 2026))
	holds := func(it InstanceType, cpu, mem int64) int64 {
		a := Allocatable(CloudAWS, it, poolOverhead)
		pods := maxPods(CloudAWS, &it) - int64(len(poolOverhead.DaemonSets))
		return min(a.CPU.MilliValue()/cpu, a.Memory.Value()/mem, pods)
	}
	checked := 0
	for range 2000 {
		it := cat.Types[r.IntN(len(cat.Types))]
		if isMetal(it) {
			continue
		}
		per := int64(1 + r.IntN(8))
		a := Allocatable(CloudAWS, it, poolOverhead)
		cpu := a.CPU.MilliValue() / per * int64(90+r.IntN(11)) / 100
		mem := a.Memory.Value() / per * int64(90+r.IntN(11)) / 100 >> 20 << 20
		if cpu == 0 || mem == 0 || holds(it, cpu, mem) != per {
			continue
		}
		execs := []Executor{{QueryService: "p/largest", CPU: *resource.NewMilliQuantity(cpu, resource.DecimalSI), Memory: *resource.NewQuantity(mem, resource.BinarySI)}}
		for i := range r.IntN(5) {
			execs = append(execs, Executor{QueryService: fmt.Sprintf("p/small-%d", i),
				CPU: *resource.NewMilliQuantity(1+r.Int64N(cpu), resource.DecimalSI), Memory: *resource.NewQuantity(1+r.Int64N(mem), resource.BinarySI)})
		}
		for _, in := range []Input{
			{InstanceFamily: it.Family},
			{Arch: it.Arch},
		} {
			in.Cloud, in.Catalog, in.Spot, in.SpotNeighbours = CloudAWS, cat, true, r.IntN(2) == 0
			in.ExecutorsPerNode, in.Executors, in.Overhead = int32(per), execs, poolOverhead
			got, err := Derive(in)
			if err != nil {
				t.Fatalf("Derive(%s x %d of %dm / %d): %v", it.Name, per, cpu, mem, err)
			}
			if got.PerNode != per {
				t.Errorf("%s family %q: chosen %s holds %d, want executorsPerNode %d", it.Name, in.InstanceFamily, got.InstanceType, got.PerNode, per)
			}
			for _, o := range got.Offered {
				ot, _ := cat.Lookup(o.Name)
				if n := holds(ot, cpu, mem); n != per || o.PerNode != per {
					t.Errorf("%s family %q: offered %s holds %d (reported %d), want %d (%s)", it.Name, in.InstanceFamily, o.Name, n, o.PerNode, per, o.Reason)
				}
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d derivations checked; the generator misses too often", checked)
	}
}
