package sizing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func mustCatalog(t testing.TB, c Cloud) *Catalog {
	t.Helper()
	cat, err := LoadCatalog(c)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func exec(qs, cpu, mem string) Executor {
	return Executor{QueryService: qs, CPU: q(cpu), Memory: q(mem)}
}

func fit(qs, cpu, mem, it string) Compatibility {
	return Compatibility{QueryService: qs, Compatible: true, RequiredCPU: q(cpu), RequiredMemory: q(mem), InstanceType: it}
}

func misfit(qs, cpu, mem, it, msg string) Compatibility {
	return Compatibility{QueryService: qs, RequiredCPU: q(cpu), RequiredMemory: q(mem), InstanceType: it, Message: msg}
}

// The sizing guideline for r7gd with one executor per node is 30Gi on a
// 4xlarge, 60Gi on an 8xlarge and 120Gi on a 16xlarge. Executors in these
// cases request 1 vCPU per 2Gi (15, 30 and 60 CPU), all but about one vCPU
// of the node, which with the pool's DaemonSets (poolOverhead) makes the
// guideline hold: the next smaller size has 7.7, 15.68 and 47.6 CPU
// allocatable, too little, the chosen one 15.68, 31.64 and 63.56.
var (
	q30  = exec("analytics/q30", "15", "30Gi")
	q60  = exec("analytics/q60", "30", "60Gi")
	q120 = exec("analytics/q120", "60", "120Gi")
)

// Allocatable of AWS types with poolOverhead (210m, 544Mi), worked by hand
// as in TestAllocatable: arm64 (Graviton) types lose 64Mi CMA before the VM
// overhead, and types whose network holds fewer than 110 pods reserve
// 11Mi a pod for fewer pods (r7gd.medium 8, the xlarges 58).
var (
	r7gdMedium  = res("730m", "6531Mi")
	r7gd4xlarge = res("15680m", "119073Mi")
	r7gd8xlarge = res("31640m", "240315Mi") // also r6gd.8xlarge
	r6i8xlarge  = res("31640m", "240374Mi")
	r7gd16xl    = res("63560m", "482798Mi")
	c7gXlarge   = res("3710m", "5981Mi")
	c6iXlarge   = res("3710m", "6040Mi")
)

// ignoreOffered leaves the offered set, with its reasons, and the count
// per node to the tests of each rule (rules_test.go), and what the offered
// types add up to to TestDescribeOffered.
var ignoreOffered = cmpopts.IgnoreFields(Result{}, "Offered", "PerNode", "LargestOffered", "Kubelet", "LocalNVMe")

func TestDerive(t *testing.T) {
	aws := mustCatalog(t, CloudAWS)
	cases := map[string]struct {
		reason string
		in     Input
		want   Result
	}{
		"ExplicitTypeWins": {
			reason: "A pinned type is used as is; 4 executors of 30 CPU need 120 CPU, far more than an r6gd.8xlarge's 31.64, so that QueryService is incompatible while 4 x 4 CPU fit; on spot it is offered alone: the owner chose that type.",
			in: Input{
				Cloud: CloudAWS, Catalog: aws, InstanceType: "r6gd.8xlarge", InstanceFamily: "r7gd", Spot: true,
				ExecutorsPerNode: 4, Overhead: poolOverhead,
				Executors: []Executor{exec("team-a/etl", "30", "60Gi"), exec("team-b/adhoc", "4", "8Gi")},
			},
			want: Result{
				InstanceType: "r6gd.8xlarge", SpotTypes: []string{"r6gd.8xlarge"}, DerivedFrom: "spec.instanceConfig.instanceType", Arch: "arm64", Allocatable: r7gd8xlarge,
				Compatibility: []Compatibility{
					misfit("team-a/etl", "30", "60Gi", "r6gd.8xlarge", "executor needs 30 CPU / 60Gi x 4 per node; r6gd.8xlarge allocatable is 31.64 CPU / 234.6Gi; choose a larger spec.instanceConfig.instanceType or lower spec.executorsPerNode"),
					fit("team-b/adhoc", "4", "8Gi", "r6gd.8xlarge"),
				},
			},
		},
		"ExplicitTypeStandInsWhereAllowed": {
			reason: "Where the platform allows stand-ins (PinnedStandIns), r7gd.8xlarge, of the pinned type's 32 vCPU / 256Gi, stands in on spot.",
			in: Input{
				Cloud: CloudAWS, Catalog: aws, InstanceType: "r6gd.8xlarge", InstanceFamily: "r7gd", Spot: true, PinnedStandIns: true,
				ExecutorsPerNode: 4, Overhead: poolOverhead,
				Executors: []Executor{exec("team-a/etl", "30", "60Gi"), exec("team-b/adhoc", "4", "8Gi")},
			},
			want: Result{
				InstanceType: "r6gd.8xlarge", SpotTypes: []string{"r6gd.8xlarge", "r7gd.8xlarge"}, DerivedFrom: "spec.instanceConfig.instanceType", Arch: "arm64", Allocatable: r7gd8xlarge,
				Compatibility: []Compatibility{
					misfit("team-a/etl", "30", "60Gi", "r6gd.8xlarge", "executor needs 30 CPU / 60Gi x 4 per node; r6gd.8xlarge allocatable is 31.64 CPU / 234.6Gi; choose a larger spec.instanceConfig.instanceType or lower spec.executorsPerNode"),
					fit("team-b/adhoc", "4", "8Gi", "r6gd.8xlarge"),
				},
			},
		},
		"ExplicitTypeUpgradedFromPrevious": {
			reason: "A pinned type larger than the previous one is an upgrade.",
			in:     Input{Catalog: aws, InstanceType: "r7gd.16xlarge", Previous: "r7gd.8xlarge", Overhead: poolOverhead},
			want:   Result{InstanceType: "r7gd.16xlarge", DerivedFrom: "spec.instanceConfig.instanceType", Arch: "arm64", Allocatable: r7gd16xl, Upgraded: true},
		},
		"GuidelineR7gd30Gi": {
			reason: "A 15 CPU / 30Gi executor fits an r7gd.4xlarge (15.68 CPU), not a 2xlarge (7.7 CPU).",
			in:     Input{Cloud: CloudAWS, Catalog: aws, InstanceFamily: "r7gd", ExecutorsPerNode: 1, Overhead: poolOverhead, Executors: []Executor{q30}},
			want: Result{
				InstanceType: "r7gd.4xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q30", Arch: "arm64", Allocatable: r7gd4xlarge,
				Compatibility: []Compatibility{fit("analytics/q30", "15", "30Gi", "r7gd.4xlarge")},
			},
		},
		"GuidelineR7gd60Gi": {
			reason: "A 30 CPU / 60Gi executor fits an r7gd.8xlarge (31.64 CPU), not a 4xlarge.",
			in:     Input{Cloud: CloudAWS, Catalog: aws, InstanceFamily: "r7gd", ExecutorsPerNode: 1, Overhead: poolOverhead, Executors: []Executor{q60}},
			want: Result{
				InstanceType: "r7gd.8xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q60", Arch: "arm64", Allocatable: r7gd8xlarge,
				Compatibility: []Compatibility{fit("analytics/q60", "30", "60Gi", "r7gd.8xlarge")},
			},
		},
		"GuidelineR7gd120Gi": {
			reason: "A 60 CPU / 120Gi executor fits an r7gd.16xlarge (63.56 CPU), not a 12xlarge (47.6 CPU), and not the equal metal.",
			in:     Input{Cloud: CloudAWS, Catalog: aws, InstanceFamily: "r7gd", ExecutorsPerNode: 1, Overhead: poolOverhead, Executors: []Executor{q120}},
			want: Result{
				InstanceType: "r7gd.16xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q120", Arch: "arm64", Allocatable: r7gd16xl,
				Compatibility: []Compatibility{fit("analytics/q120", "60", "120Gi", "r7gd.16xlarge")},
			},
		},
		"FamilySizedForTheLargest": {
			reason: "The family size holds the largest attached executor; every QueryService is reported, sorted.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Overhead: poolOverhead, Executors: []Executor{q60, q120, q30}},
			want: Result{
				InstanceType: "r7gd.16xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q120", Arch: "arm64", Allocatable: r7gd16xl,
				Compatibility: []Compatibility{
					fit("analytics/q120", "60", "120Gi", "r7gd.16xlarge"),
					fit("analytics/q30", "15", "30Gi", "r7gd.16xlarge"),
					fit("analytics/q60", "30", "60Gi", "r7gd.16xlarge"),
				},
			},
		},
		"SizedForTheMemoryHeavy": {
			reason: "When the memory-heavy QueryService alone needs the chosen size (400Gi: more than a 12xlarge's 353.1Gi) it is named, not the CPU-heavy one that an 8xlarge would hold.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Overhead: poolOverhead, Executors: []Executor{exec("x/cpu", "20", "1Gi"), exec("y/mem", "1", "400Gi")}},
			want: Result{
				InstanceType: "r7gd.16xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/y/mem", Arch: "arm64", Allocatable: r7gd16xl,
				Compatibility: []Compatibility{fit("x/cpu", "20", "1Gi", "r7gd.16xlarge"), fit("y/mem", "1", "400Gi", "r7gd.16xlarge")},
			},
		},
		"SizedForTheFirstOfTwo": {
			reason: "When the CPU-heavy and the memory-heavy QueryService each need the chosen size, the first by name is named.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Overhead: poolOverhead, Executors: []Executor{exec("z/cpu", "60", "1Gi"), exec("a/mem", "1", "400Gi")}},
			want: Result{
				InstanceType: "r7gd.16xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/a/mem", Arch: "arm64", Allocatable: r7gd16xl,
				Compatibility: []Compatibility{fit("a/mem", "1", "400Gi", "r7gd.16xlarge"), fit("z/cpu", "60", "1Gi", "r7gd.16xlarge")},
			},
		},
		"FamilyExecutorsPerNode": {
			reason: "Two 15 CPU executors per node need 30 CPU: an r7gd.8xlarge; zero executors per node counts as one elsewhere.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", ExecutorsPerNode: 2, Overhead: poolOverhead, Executors: []Executor{q30}},
			want: Result{
				InstanceType: "r7gd.8xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q30", Arch: "arm64", Allocatable: r7gd8xlarge,
				Compatibility: []Compatibility{fit("analytics/q30", "15", "30Gi", "r7gd.8xlarge")},
			},
		},
		"FamilyTooSmallForOne": {
			reason: "An executor no size of the family holds is incompatible, with the largest size's allocatable; the others size the pool.",
			in: Input{Catalog: aws, InstanceFamily: "r7gd", ExecutorsPerNode: 0, Overhead: poolOverhead,
				Executors: []Executor{exec("bi/huge", "120", "500Gi"), q30}},
			want: Result{
				InstanceType: "r7gd.4xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q30", Arch: "arm64", Allocatable: r7gd4xlarge,
				Compatibility: []Compatibility{
					fit("analytics/q30", "15", "30Gi", "r7gd.4xlarge"),
					misfit("bi/huge", "120", "500Gi", "r7gd.4xlarge", "executor needs 120 CPU / 500Gi x 1 per node; largest r7gd (r7gd.16xlarge) allocatable is 63.56 CPU / 471.4Gi; choose a larger spec.instanceConfig.instanceFamily or lower spec.executorsPerNode or the executor's requests"),
				},
			},
		},
		"FamilyNothingFits": {
			reason: "When no attached executor fits, the smallest size is kept.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Overhead: poolOverhead, Executors: []Executor{exec("bi/huge", "120", "500Gi")}},
			want: Result{
				InstanceType: "r7gd.medium", DerivedFrom: "instanceFamily r7gd: no attached QueryService fits, smallest size", Arch: "arm64", Allocatable: r7gdMedium,
				Compatibility: []Compatibility{
					misfit("bi/huge", "120", "500Gi", "r7gd.medium", "executor needs 120 CPU / 500Gi x 1 per node; largest r7gd (r7gd.16xlarge) allocatable is 63.56 CPU / 471.4Gi; choose a larger spec.instanceConfig.instanceFamily or lower spec.executorsPerNode or the executor's requests"),
				},
			},
		},
		"FamilyNoQueryService": {
			reason: "A family with nothing attached yet starts at its smallest size.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Overhead: poolOverhead},
			want:   Result{InstanceType: "r7gd.medium", DerivedFrom: "instanceFamily r7gd: no QueryService attached, smallest size", Arch: "arm64", Allocatable: r7gdMedium},
		},
		"FamilyIgnoresOtherArchPreference": {
			reason: "The arch is a preference: a family with no type of that arch is used as it is.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Arch: "amd64", Overhead: poolOverhead, Executors: []Executor{q30}},
			want: Result{
				InstanceType: "r7gd.4xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q30", Arch: "arm64", Allocatable: r7gd4xlarge,
				Compatibility: []Compatibility{fit("analytics/q30", "15", "30Gi", "r7gd.4xlarge")},
			},
		},
		"AutoUpgrade": {
			reason: "With autoUpgrade a larger QueryService attaching moves the pool up, even while executors run.",
			in: Input{Catalog: aws, InstanceFamily: "r7gd", AutoUpgrade: true, Previous: "r7gd.8xlarge", ExecutorsHaveRun: true, Overhead: poolOverhead,
				Executors: []Executor{q60, q120}},
			want: Result{
				InstanceType: "r7gd.16xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q120", Arch: "arm64", Allocatable: r7gd16xl, Upgraded: true,
				Compatibility: []Compatibility{
					fit("analytics/q120", "60", "120Gi", "r7gd.16xlarge"),
					fit("analytics/q60", "30", "60Gi", "r7gd.16xlarge"),
				},
			},
		},
		"NoAutoUpgradeKeepsPrevious": {
			reason: "Once executors have run, without autoUpgrade the pool keeps its type and the larger QueryService (60 CPU, more than an r7gd.8xlarge's 31.64) is incompatible, told how to move the pool.",
			in: Input{Catalog: aws, InstanceFamily: "r7gd", Previous: "r7gd.8xlarge", ExecutorsHaveRun: true, Overhead: poolOverhead,
				Executors: []Executor{q60, q120}},
			want: Result{
				InstanceType: "r7gd.8xlarge", DerivedFrom: "previous r7gd.8xlarge kept: executors have run on it and spec.instanceConfig.autoUpgrade is off", Arch: "arm64", Allocatable: r7gd8xlarge,
				Kept: "executors have run on it and spec.instanceConfig.autoUpgrade is off",
				Compatibility: []Compatibility{
					misfit("analytics/q120", "60", "120Gi", "r7gd.8xlarge", "executor needs 60 CPU / 120Gi x 1 per node; the pool keeps r7gd.8xlarge (allocatable 31.64 CPU / 234.6Gi) because executors have run on it and spec.instanceConfig.autoUpgrade is off; set it to true to move the pool up to r7gd.16xlarge"),
					fit("analytics/q60", "30", "60Gi", "r7gd.8xlarge"),
				},
			},
		},
		"NeverDownsizeWhileExecutorsRun": {
			reason: "The large QueryService detached, but executors have run: the pool keeps its size (an r7gd.16xlarge, 63.56 CPU, holds 4 of the 15 CPU executor).",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", AutoUpgrade: true, Previous: "r7gd.16xlarge", ExecutorsHaveRun: true, Overhead: poolOverhead, Executors: []Executor{q30}},
			want: Result{
				InstanceType: "r7gd.16xlarge", DerivedFrom: "previous r7gd.16xlarge kept: executors have run on it and it holds every compatible QueryService", Arch: "arm64", Allocatable: r7gd16xl,
				Kept:          "executors have run on it and it holds every compatible QueryService",
				Compatibility: []Compatibility{fit("analytics/q30", "15", "30Gi", "r7gd.16xlarge")},
			},
		},
		"DownsizeWhenIdle": {
			reason: "With no executor running the pool shrinks to what its QueryServices need.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Previous: "r7gd.16xlarge", Overhead: poolOverhead, Executors: []Executor{q30}},
			want: Result{
				InstanceType: "r7gd.4xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q30", Arch: "arm64", Allocatable: r7gd4xlarge,
				Compatibility: []Compatibility{fit("analytics/q30", "15", "30Gi", "r7gd.4xlarge")},
			},
		},
		"PreviousOfAnotherFamilyIsLeft": {
			reason: "Changing the family is a request to move, executors running or not.",
			in:     Input{Catalog: aws, InstanceFamily: "r7gd", Previous: "r6gd.16xlarge", ExecutorsHaveRun: true, Overhead: poolOverhead, Executors: []Executor{q30}},
			want: Result{
				InstanceType: "r7gd.4xlarge", DerivedFrom: "instanceFamily r7gd sized for QueryService/analytics/q30", Arch: "arm64", Allocatable: r7gd4xlarge,
				Compatibility: []Compatibility{fit("analytics/q30", "15", "30Gi", "r7gd.4xlarge")},
			},
		},
		"Inherit": {
			reason: "Inheriting takes the QueryService's type, alone on spot too: the inherited type is pinned.",
			in: Input{Catalog: aws, InstanceFamily: "r7gd", Spot: true, Inherit: &Inherited{QueryService: "etl/warehouse", InstanceType: "r6i.8xlarge"}, Overhead: poolOverhead,
				Executors: []Executor{q30, exec("etl/warehouse", "40", "60Gi")}},
			want: Result{
				InstanceType: "r6i.8xlarge", SpotTypes: []string{"r6i.8xlarge"}, DerivedFrom: "QueryService/etl/warehouse", Arch: "amd64", Allocatable: r6i8xlarge,
				Compatibility: []Compatibility{
					fit("analytics/q30", "15", "30Gi", "r6i.8xlarge"),
					misfit("etl/warehouse", "40", "60Gi", "r6i.8xlarge", "executor needs 40 CPU / 60Gi x 1 per node; r6i.8xlarge allocatable is 31.64 CPU / 234.7Gi; the type inherited from QueryService etl/warehouse is too small; set spec.instanceConfig.instanceType or spec.instanceConfig.instanceFamily instead"),
				},
			},
		},
		"ExplicitTypeBeatsInherit": {
			reason: "A pinned type wins over an inherited one.",
			in:     Input{Catalog: aws, InstanceType: "r7gd.4xlarge", Inherit: &Inherited{QueryService: "etl/warehouse", InstanceType: "r6i.8xlarge"}, Overhead: poolOverhead},
			want:   Result{InstanceType: "r7gd.4xlarge", DerivedFrom: "spec.instanceConfig.instanceType", Arch: "arm64", Allocatable: r7gd4xlarge},
		},
		"CheapestFromTheCatalog": {
			reason: "With no type or family the cheapest type holding the executors is chosen: 2 CPU need 4 vCPU, and c7g.xlarge is the cheapest of those.",
			in:     Input{Cloud: CloudAWS, Overhead: poolOverhead, Executors: []Executor{exec("web/small", "2", "4Gi")}},
			want: Result{
				InstanceType: "c7g.xlarge", DerivedFrom: "cheapest aws type sized for QueryService/web/small", Arch: "arm64", Allocatable: c7gXlarge,
				Compatibility: []Compatibility{fit("web/small", "2", "4Gi", "c7g.xlarge")},
			},
		},
		"CheapestOfThePreferredArch": {
			reason: "A preferred arch keeps the choice to that arch's types: c6i.xlarge.",
			in:     Input{Cloud: CloudAWS, Arch: "amd64", Overhead: poolOverhead, Executors: []Executor{exec("web/small", "2", "4Gi")}},
			want: Result{
				InstanceType: "c6i.xlarge", DerivedFrom: "cheapest aws type sized for QueryService/web/small", Arch: "amd64", Allocatable: c6iXlarge,
				Compatibility: []Compatibility{fit("web/small", "2", "4Gi", "c6i.xlarge")},
			},
		},
		"ShapesPullApart": {
			reason: "When no type holds both a CPU-heavy and a memory-heavy QueryService, the type holding the most (the cheaper of equals) is chosen and the other is incompatible.",
			in: Input{Cloud: CloudKWOK, Catalog: &Catalog{Cloud: CloudKWOK, Version: "test", Types: []InstanceType{
				{Name: "cpu-box", Family: "box", CPU: q("128"), Memory: q("64Gi"), Arch: "amd64", PricePerHour: 2},
				{Name: "mem-box", Family: "box", CPU: q("8"), Memory: q("1Ti"), Arch: "amd64", PricePerHour: 3},
			}}, Executors: []Executor{exec("b/mem", "1", "900Gi"), exec("a/cpu", "100", "1Gi")}},
			want: Result{
				InstanceType: "cpu-box", DerivedFrom: "cheapest kwok type sized for QueryService/a/cpu", Arch: "amd64", Allocatable: res("127900m", "65526Mi"),
				Compatibility: []Compatibility{
					fit("a/cpu", "100", "1Gi", "cpu-box"),
					misfit("b/mem", "1", "900Gi", "cpu-box", "executor needs 1 CPU / 900Gi x 1 per node; cpu-box, sized for the other QueryServices, allocatable is 127.9 CPU / 63.9Gi; give this QueryService its own pool or set spec.instanceConfig.instanceType"),
				},
			},
		},
		"SizedForTwo": {
			reason: "When only together a CPU-heavy and a memory-heavy QueryService need the chosen type, both are named.",
			in: Input{Catalog: &Catalog{Cloud: CloudKWOK, Version: "test", Types: []InstanceType{
				{Name: "a", Family: "a", CPU: q("64"), Memory: q("64Gi"), Arch: "amd64", PricePerHour: 1},
				{Name: "b", Family: "b", CPU: q("16"), Memory: q("512Gi"), Arch: "amd64", PricePerHour: 1.5},
				{Name: "c", Family: "c", CPU: q("64"), Memory: q("512Gi"), Arch: "amd64", PricePerHour: 5},
			}}, Executors: []Executor{exec("x/cpu", "40", "1Gi"), exec("y/mem", "1", "300Gi")}},
			want: Result{
				InstanceType: "c", DerivedFrom: "cheapest kwok type sized for QueryService/x/cpu (CPU) and QueryService/y/mem (memory)", Arch: "amd64", Allocatable: res("63900m", "524278Mi"),
				Compatibility: []Compatibility{fit("x/cpu", "40", "1Gi", "c"), fit("y/mem", "1", "300Gi", "c")},
			},
		},
		"NoCatalogTypeHoldsIt": {
			reason: "An executor larger than every catalog type is incompatible, told the largest type: most CPU, then memory, the cheaper of equals.",
			in:     Input{Cloud: CloudAWS, Overhead: poolOverhead, Executors: []Executor{exec("web/small", "2", "4Gi"), exec("bi/enormous", "500", "10Ti")}},
			want: Result{
				InstanceType: "c7g.xlarge", DerivedFrom: "cheapest aws type sized for QueryService/web/small", Arch: "arm64", Allocatable: c7gXlarge,
				Compatibility: []Compatibility{
					misfit("bi/enormous", "500", "10Ti", "c7g.xlarge", "executor needs 500 CPU / 10Ti x 1 per node; no aws instance type holds that, the largest (r8g.48xlarge) allocatable is 191.24 CPU / 1418.6Gi; lower spec.executorsPerNode or the executor's requests, or add a larger type as a catalog override"),
					fit("web/small", "2", "4Gi", "c7g.xlarge"),
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Derive(tc.in)
			if err != nil {
				t.Fatalf("%s\nDerive(...): unexpected error: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got, ignoreOffered); diff != "" {
				t.Errorf("%s\nDerive(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDeriveErrors(t *testing.T) {
	aws := mustCatalog(t, CloudAWS)
	cases := map[string]struct {
		reason string
		in     Input
		want   string
	}{
		"UnknownType": {
			reason: "An unknown pinned type of a known family lists the family's sizes.",
			in:     Input{Catalog: aws, InstanceType: "r7gd.9xlarge"},
			want:   `spec.instanceConfig.instanceType: "r7gd.9xlarge" is not in the aws instance catalog (version 2026.11.2); the r7gd sizes are r7gd.medium, r7gd.large, r7gd.xlarge, r7gd.2xlarge, r7gd.4xlarge, r7gd.8xlarge, r7gd.12xlarge, r7gd.16xlarge, r7gd.metal, or add it as a catalog override`,
		},
		"UnknownTypeOfUnknownFamily": {
			reason: "An unknown pinned type of no known family says to pick a listed one.",
			in:     Input{Catalog: aws, InstanceType: "z9.large"},
			want:   `spec.instanceConfig.instanceType: "z9.large" is not in the aws instance catalog (version 2026.11.2); choose a type the catalog lists, or add it as a catalog override`,
		},
		"UnknownFamily": {
			reason: "An unknown family lists the catalog's families.",
			in:     Input{Catalog: aws, InstanceFamily: "r9gd"},
			want:   `spec.instanceConfig.instanceFamily: "r9gd" is not a family of the aws instance catalog (version 2026.11.2); use one of c6i, c7g, i4i, m6i, m7g, m7i, r5, r6g, r6gd, r6i, r6id, r7g, r7gd, r7i, r8g, x2gd, or add its types as catalog overrides`,
		},
		"NothingToSizeFrom": {
			reason: "No type, family, inherited QueryService or attached QueryService leaves nothing to choose from.",
			in:     Input{Catalog: aws},
			want:   `spec.instanceConfig: nothing to size the pool from; set spec.instanceConfig.instanceType or spec.instanceConfig.instanceFamily, set spec.inheritNodeConfigFrom, or attach a QueryService`,
		},
		"InheritWithoutName": {
			reason: "Inheriting needs a QueryService.",
			in:     Input{Catalog: aws, Inherit: &Inherited{}},
			want:   `spec.inheritNodeConfigFrom: name the QueryService to inherit the instance type from`,
		},
		"InheritWithoutType": {
			reason: "A QueryService whose nodes are not known yet cannot be inherited from.",
			in:     Input{Catalog: aws, Inherit: &Inherited{QueryService: "etl/warehouse"}},
			want:   `spec.inheritNodeConfigFrom: QueryService etl/warehouse has no instance type yet; wait for its regular nodes, or set spec.instanceConfig.instanceType or spec.instanceConfig.instanceFamily`,
		},
		"InheritUnknownType": {
			reason: "An inherited type the catalog does not list names the QueryService.",
			in:     Input{Catalog: aws, Inherit: &Inherited{QueryService: "etl/warehouse", InstanceType: "m5.8xlarge"}},
			want:   `spec.inheritNodeConfigFrom (QueryService etl/warehouse): "m5.8xlarge" is not in the aws instance catalog (version 2026.11.2); choose a type the catalog lists, or add it as a catalog override`,
		},
		"UnknownCloud": {
			reason: "Without a catalog, the cloud's is loaded; an unknown cloud has none.",
			in:     Input{Cloud: "onprem", InstanceType: "rack-a"},
			want:   `cannot size the pool: no instance catalog for cloud "onprem"; known clouds are aws, azure, coreweave, digitalocean, gcp, kwok, linode`,
		},
		"EmptyCatalog": {
			reason: "A catalog without types cannot size anything.",
			in:     Input{Catalog: &Catalog{Cloud: CloudAWS}, InstanceFamily: "r7gd"},
			want:   `the aws instance catalog has no instance types; add types as catalog overrides`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Derive(tc.in)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDerive(...) error: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDeriveWithOverrides pins an on-premises machine added to a catalog.
func TestDeriveWithOverrides(t *testing.T) {
	cat := mustCatalog(t, CloudAWS).WithOverrides([]InstanceType{{Name: "rack-a", CPU: q("96"), Memory: q("768Gi"), Arch: "amd64", LocalNVMeGiB: 7000}})
	got, err := Derive(Input{Cloud: CloudAWS, Catalog: cat, InstanceType: "rack-a", Executors: []Executor{q60}})
	if err != nil {
		t.Fatal(err)
	}
	// 96 vCPU less 60+10+10+92x2.5 = 310m; 786432Mi less 58983Mi, 1465Mi and 100Mi.
	want := Result{
		InstanceType: "rack-a", DerivedFrom: "spec.instanceConfig.instanceType", Arch: "amd64", Allocatable: res("95690m", "725884Mi"),
		Compatibility: []Compatibility{fit("analytics/q60", "30", "60Gi", "rack-a")},
	}
	if diff := cmp.Diff(want, got, ignoreOffered); diff != "" {
		t.Errorf("Derive with an override: -want, +got:\n%s", diff)
	}
}

// TestDescribeOffered: the NodePool's limits count nodes of the largest
// offered type, and the NodeClass's kubelet must suit every offered type,
// so both follow the whole offered set, not only the chosen type.
func TestDescribeOffered(t *testing.T) {
	aws := mustCatalog(t, CloudAWS)
	// Every type offered below holds 110 pods; AWS kube-reserves 11Mi a pod
	// plus 255Mi (1465Mi) and evicts below 100Mi (KubeletFor).
	aws110Pods := Kubelet{MaxPods: 110, KubeReservedMemory: 1465 << 20, EvictionHardMemory: 100 << 20}
	type offered struct {
		Largest   Resources
		Kubelet   Kubelet
		LocalNVMe bool
	}
	cases := map[string]struct {
		reason string
		in     Input
		want   offered
	}{
		"SpotStandInLargerThanChosen": {
			reason: "m7g.4xlarge (16 vCPU / 64Gi) is chosen; its spot stand-ins include r6g.4xlarge (128Gi), so the largest memory is a stand-in's; r6gd.4xlarge has local NVMe but the chosen type does not.",
			in:     Input{Cloud: CloudAWS, Catalog: aws, Spot: true, SpotNeighbours: true, MaxSpotTypes: 5, Overhead: poolOverhead, Executors: []Executor{exec("a/b", "15", "30Gi")}},
			want:   offered{Largest: res("16", "128Gi"), Kubelet: aws110Pods, LocalNVMe: false},
		},
		"PinnedTypeWithNVMe": {
			reason: "r6gd.8xlarge and its stand-in r7gd.8xlarge are both 32 vCPU / 256Gi with local NVMe.",
			in:     Input{Cloud: CloudAWS, Catalog: aws, InstanceType: "r6gd.8xlarge", Spot: true, PinnedStandIns: true, MaxSpotTypes: 5, Overhead: poolOverhead, Executors: []Executor{exec("a/b", "4", "8Gi")}},
			want:   offered{Largest: res("32", "256Gi"), Kubelet: aws110Pods, LocalNVMe: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := Derive(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got := offered{Largest: r.LargestOffered, Kubelet: r.Kubelet, LocalNVMe: r.LocalNVMe}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDerive(...) offered: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
