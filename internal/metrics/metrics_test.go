package metrics

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

func TestRecordAndForget(t *testing.T) {
	spec := v1alpha1.PoolCapacityParameters{Pool: v1alpha1.PoolRef{Name: "analytics", Namespace: "team-a"}, MaxExecutors: 10}
	res := capacity.Result{WarmImagesReady: 2, Observation: v1alpha1.PoolCapacityObservation{
		TotalExecutors: 8, AvailableExecutors: 3, OccupiedExecutors: 5, PendingExecutors: 1, UnplaceableCount: 3,
		Allocations: []v1alpha1.Allocation{{QueryService: "sales", Namespace: "team-a", PoolExecutors: 5, RegularExecutors: 2, PendingExecutors: 1, MaxPoolExecutors: 4}},
		Failures:    []v1alpha1.Failure{{Pod: "p", Namespace: "team-a", Reason: v1alpha1.FailureOOMKilled}},
		Overdue:     &v1alpha1.Overdue{Executors: 2, Nodes: 1, NodeNames: []string{"n1"}},
	}}
	cases := map[string]struct {
		reason  string
		forget  bool
		repoint bool
		onTime  bool
		names   []string
		want    string
	}{
		"Recorded": {
			reason: "Record sets the pool's executor and QueryService gauges, a QueryService's share and pending executors included.",
			names:  []string{"burstpool_pool_executors", "burstpool_queryservice_executors", "burstpool_pool_warm_images_ready"},
			want: `
# HELP burstpool_pool_executors Executor slots of a pool by state: total, available, occupied, pending or draining.
# TYPE burstpool_pool_executors gauge
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="available"} 3
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="draining"} 0
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="occupied"} 5
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="pending"} 1
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="total"} 8
# HELP burstpool_pool_warm_images_ready Images with at least one running warmup pod on the pool.
# TYPE burstpool_pool_warm_images_ready gauge
burstpool_pool_warm_images_ready{pool="analytics",pool_namespace="team-a"} 2
# HELP burstpool_queryservice_executors Executors of an attached QueryService by type: pool, pending (pool executors waiting for a slot), regular, or share (its maxPoolExecutors, when the pool bounds it).
# TYPE burstpool_queryservice_executors gauge
burstpool_queryservice_executors{pool="analytics",pool_namespace="team-a",query_service="sales",query_service_namespace="team-a",type="pending"} 1
burstpool_queryservice_executors{pool="analytics",pool_namespace="team-a",query_service="sales",query_service_namespace="team-a",type="pool"} 5
burstpool_queryservice_executors{pool="analytics",pool_namespace="team-a",query_service="sales",query_service_namespace="team-a",type="regular"} 2
burstpool_queryservice_executors{pool="analytics",pool_namespace="team-a",query_service="sales",query_service_namespace="team-a",type="share"} 4
`,
		},
		"Unplaceable": {
			reason: "Record sets the count of executors that could run on no pool node, listed or not.",
			names:  []string{"burstpool_pool_unplaceable_executors"},
			want: `
# HELP burstpool_pool_unplaceable_executors Pending pool executors that ask for the pool's nodes but could run on none of them: they count for nothing.
# TYPE burstpool_pool_unplaceable_executors gauge
burstpool_pool_unplaceable_executors{pool="analytics",pool_namespace="team-a"} 3
`,
		},
		"Overdue": {
			reason: "Record sets the executors and nodes overdue.",
			names:  []string{"burstpool_pool_overdue_executors", "burstpool_pool_overdue_nodes"},
			want: `
# HELP burstpool_pool_overdue_executors Pool executors still at the executor gate more than its bound plus a slack after their creation (status.atProvider.overdue.executors): their release is failing.
# TYPE burstpool_pool_overdue_executors gauge
burstpool_pool_overdue_executors{pool="analytics",pool_namespace="team-a"} 2
# HELP burstpool_pool_overdue_nodes Ready pool nodes still carrying the startup taint more than startup.openAfter plus a slack after their creation (status.atProvider.overdue.nodes): their opening is failing.
# TYPE burstpool_pool_overdue_nodes gauge
burstpool_pool_overdue_nodes{pool="analytics",pool_namespace="team-a"} 1
`,
		},
		"NothingOverdue": {
			reason: "A pool with nothing overdue reports 0, not no series, so an alert can tell it from a pool not observed.",
			onTime: true,
			names:  []string{"burstpool_pool_overdue_executors", "burstpool_pool_overdue_nodes"},
			want: `
# HELP burstpool_pool_overdue_executors Pool executors still at the executor gate more than its bound plus a slack after their creation (status.atProvider.overdue.executors): their release is failing.
# TYPE burstpool_pool_overdue_executors gauge
burstpool_pool_overdue_executors{pool="analytics",pool_namespace="team-a"} 0
# HELP burstpool_pool_overdue_nodes Ready pool nodes still carrying the startup taint more than startup.openAfter plus a slack after their creation (status.atProvider.overdue.nodes): their opening is failing.
# TYPE burstpool_pool_overdue_nodes gauge
burstpool_pool_overdue_nodes{pool="analytics",pool_namespace="team-a"} 0
`,
		},
		"RePointed": {
			reason:  "A PoolCapacity that now reports another Pool drops the old Pool's series.",
			repoint: true,
			names:   []string{"burstpool_pool_max_executors"},
			want: `
# HELP burstpool_pool_max_executors The pool's maxExecutors.
# TYPE burstpool_pool_max_executors gauge
burstpool_pool_max_executors{pool="analytics-2",pool_namespace="team-a"} 10
`,
		},
		"Forgotten": {
			reason: "Forget drops every series of the pool.",
			forget: true,
			names: []string{"burstpool_pool_executors", "burstpool_queryservice_executors", "burstpool_pool_executor_failures", "burstpool_pool_unplaceable_executors",
				"burstpool_pool_overdue_executors", "burstpool_pool_overdue_nodes"},
			want: "",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := New(reg)
			r := res
			if tc.onTime {
				r.Observation.Overdue = nil
			}
			m.Record("analytics", spec, r, time.Unix(100, 0))
			if tc.forget {
				m.Forget("analytics")
			}
			if tc.repoint {
				other := spec
				other.Pool.Name = "analytics-2"
				m.Record("analytics", other, res, time.Unix(100, 0))
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tc.want), tc.names...); err != nil {
				t.Errorf("%s\n%v", tc.reason, err)
			}
		})
	}
}

// TestFailuresCountedOnce records the same 40 failures on every reconcile
// (the status lists 20 of them) and checks that the counter counts 40.
func TestFailuresCountedOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	spec := v1alpha1.PoolCapacityParameters{Pool: v1alpha1.PoolRef{Name: "analytics", Namespace: "team-a"}, MaxExecutors: 10}
	var failing []v1alpha1.Failure
	for i := range 40 {
		failing = append(failing, v1alpha1.Failure{Namespace: "team-a", Pod: fmt.Sprintf("e%02d", i), Reason: v1alpha1.FailureImagePullError})
	}
	for range 5 {
		m.Record("analytics", spec, capacity.Result{Failing: failing}, time.Unix(100, 0))
	}
	// One of them now crash-loops instead: a new failure.
	failing[0].Reason = v1alpha1.FailureCrashLoopBackOff
	m.Record("analytics", spec, capacity.Result{Failing: failing}, time.Unix(100, 0))
	const want = `
# HELP burstpool_pool_executor_failures_total Executor failures diagnosed, by reason: each failed pod once per reason.
# TYPE burstpool_pool_executor_failures_total counter
burstpool_pool_executor_failures_total{pool="analytics",pool_namespace="team-a",reason="CrashLoopBackOff"} 1
burstpool_pool_executor_failures_total{pool="analytics",pool_namespace="team-a",reason="ImagePullError"} 40
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "burstpool_pool_executor_failures_total"); err != nil {
		t.Error(err)
	}
}

func TestCostSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg)
	spec := v1alpha1.PoolCapacityParameters{Pool: v1alpha1.PoolRef{Name: "shared", Namespace: "platform"}, MaxExecutors: 1}
	m.Cost(spec, &v1alpha1.CostObservation{
		UnaccountedSeconds: 60,
		ByUse: []v1alpha1.UseCost{
			{Part: v1alpha1.CostQueryService, QueryService: "sales", Namespace: "team-a", CostFigures: v1alpha1.CostFigures{Nodes: "1.5", DollarsPerHour: "1.044981", NodeSeconds: "21600", Dollars: "4.179924"}},
			{Part: v1alpha1.CostWarm, CostFigures: v1alpha1.CostFigures{Nodes: "0.5", DollarsPerHour: "0.580545", NodeSeconds: "79200", Dollars: "25.54398"}},
		},
		ByNodeType: []v1alpha1.NodeTypeCost{{InstanceType: "r7gd.4xlarge", CapacityType: "spot", CostFigures: v1alpha1.CostFigures{NodeSeconds: "16200", Dollars: "2.089962"}}},
	})
	want := `
# HELP burstpool_pool_cost_dollars_total What the pool's nodes cost, in US dollars, by use: part queryservice (the share its executors requested), warm (kept idle on purpose) or waste (empty nodes).
# TYPE burstpool_pool_cost_dollars_total counter
burstpool_pool_cost_dollars_total{part="queryservice",pool="shared",pool_namespace="platform",query_service="sales",query_service_namespace="team-a"} 4.179924
burstpool_pool_cost_dollars_total{part="warm",pool="shared",pool_namespace="platform",query_service="",query_service_namespace=""} 25.54398
# HELP burstpool_pool_node_type_seconds_total The pool's node time, in node-seconds, by instance type and capacity type.
# TYPE burstpool_pool_node_type_seconds_total counter
burstpool_pool_node_type_seconds_total{capacity_type="spot",instance_type="r7gd.4xlarge",pool="shared",pool_namespace="platform"} 16200
# HELP burstpool_pool_cost_unaccounted_seconds_total Time the provider did not observe the pool for longer than it prices from its last observation: its node time is not counted.
# TYPE burstpool_pool_cost_unaccounted_seconds_total counter
burstpool_pool_cost_unaccounted_seconds_total{pool="shared",pool_namespace="platform"} 60
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "burstpool_pool_cost_dollars_total", "burstpool_pool_node_type_seconds_total", "burstpool_pool_cost_unaccounted_seconds_total"); err != nil {
		t.Errorf("cost series:\n%v", err)
	}
	// Prometheus' naming conventions, as promlint checks them: base units
	// in the name, _total on counters.
	problems, err := testutil.GatherAndLint(reg, "burstpool_pool_cost_dollars_total", "burstpool_pool_node_seconds_total", "burstpool_pool_cost_dollars_per_hour",
		"burstpool_pool_node_type_seconds_total", "burstpool_pool_node_type_cost_dollars_total", "burstpool_pool_cost_unaccounted_seconds_total")
	if err != nil || len(problems) > 0 {
		t.Errorf("cost series break Prometheus' conventions: %v %v", problems, err)
	}
	m.Record("pc", spec, capacity.Result{}, time.Unix(1, 0))
	m.Forget("pc")
	if n, err := testutil.GatherAndCount(reg, "burstpool_pool_cost_dollars_total"); err != nil || n != 0 {
		t.Errorf("after Forget, %d cost series (%v), want none", n, err)
	}
}

func TestWarm(t *testing.T) {
	spec := v1alpha1.PoolCapacityParameters{Pool: v1alpha1.PoolRef{Name: "shared", Namespace: "platform"}, MaxExecutors: 10}
	names := []string{"burstpool_pool_warm_recommended_executors", "burstpool_pool_demand_history_weeks"}
	const help = `
# HELP burstpool_pool_demand_history_weeks Weeks of the last 4 the pool was observed in, the current one included (status.atProvider.demand.weeks).
# TYPE burstpool_pool_demand_history_weeks gauge
burstpool_pool_demand_history_weeks{pool="shared",pool_namespace="platform"} %d
`
	const level = `# HELP burstpool_pool_warm_recommended_executors The learned warm level the provider publishes for the pool (status.atProvider.warmRecommendation.executors), while its spec asks for one.
# TYPE burstpool_pool_warm_recommended_executors gauge
burstpool_pool_warm_recommended_executors{pool="shared",pool_namespace="platform"} 6
`
	cases := map[string]struct {
		reason string
		d      *v1alpha1.DemandHistory
		r      *v1alpha1.WarmRecommendation
		record bool
		forget bool
		want   string
	}{
		"Recommended": {
			reason: "A pool with a learned warm level exports it beside its weeks of history.",
			d:      &v1alpha1.DemandHistory{Weeks: 3}, r: &v1alpha1.WarmRecommendation{Executors: 6},
			want: fmt.Sprintf(help, 3) + level,
		},
		"NotAsked": {
			reason: "A pool that asks for no learned level exports its history's weeks only.",
			d:      &v1alpha1.DemandHistory{Weeks: 1},
			want:   fmt.Sprintf(help, 1),
		},
		"NoHistoryYet": {
			reason: "A pool with no history in status yet has none: 0 weeks.",
			want:   fmt.Sprintf(help, 0),
		},
		"RecordedAgain": {
			reason: "The next reconcile's Record keeps the series Warm set: both live in one collector.",
			d:      &v1alpha1.DemandHistory{Weeks: 3}, r: &v1alpha1.WarmRecommendation{Executors: 6},
			record: true,
			want:   fmt.Sprintf(help, 3) + level,
		},
		"Forgotten": {
			reason: "Forget drops both series.",
			d:      &v1alpha1.DemandHistory{Weeks: 3}, r: &v1alpha1.WarmRecommendation{Executors: 6},
			forget: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := New(reg)
			m.Record("shared", spec, capacity.Result{}, time.Unix(100, 0))
			// A level exported before goes when the spec stops asking.
			m.Warm(spec, tc.d, &v1alpha1.WarmRecommendation{Executors: 1})
			m.Warm(spec, tc.d, tc.r)
			if tc.record {
				m.Record("shared", spec, capacity.Result{}, time.Unix(200, 0))
			}
			if tc.forget {
				m.Forget("shared")
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tc.want), names...); err != nil {
				t.Errorf("%s\n%v", tc.reason, err)
			}
		})
	}
}
