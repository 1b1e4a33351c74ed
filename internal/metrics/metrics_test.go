package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

func TestRecordAndForget(t *testing.T) {
	spec := v1alpha1.PoolCapacityParameters{Pool: v1alpha1.PoolRef{Name: "analytics", Namespace: "team-a"}, MaxExecutors: 10}
	res := capacity.Result{WarmImagesReady: 2, Observation: v1alpha1.PoolCapacityObservation{
		TotalExecutors: 8, AvailableExecutors: 3, OccupiedExecutors: 5, PendingExecutors: 1,
		Allocations: []v1alpha1.Allocation{{QueryService: "sales", Namespace: "team-a", PoolExecutors: 5, RegularExecutors: 2, PendingExecutors: 1, MaxPoolExecutors: 4}},
		Failures:    []v1alpha1.Failure{{Pod: "p", Namespace: "team-a", Reason: v1alpha1.FailureOOMKilled}},
	}}
	cases := map[string]struct {
		reason string
		forget bool
		names  []string
		want   string
	}{
		"Recorded": {
			reason: "Record sets the pool's executor and QueryService gauges, a QueryService's share and pending executors included.",
			names:  []string{"burstpool_pool_executors", "burstpool_queryservice_executors", "burstpool_pool_warm_images_ready"},
			want: `
# HELP burstpool_pool_executors Executor slots of a pool by state: total, available, occupied or pending.
# TYPE burstpool_pool_executors gauge
burstpool_pool_executors{namespace="team-a",pool="analytics",state="available"} 3
burstpool_pool_executors{namespace="team-a",pool="analytics",state="occupied"} 5
burstpool_pool_executors{namespace="team-a",pool="analytics",state="pending"} 1
burstpool_pool_executors{namespace="team-a",pool="analytics",state="total"} 8
# HELP burstpool_pool_warm_images_ready Images with at least one running warmup pod on the pool.
# TYPE burstpool_pool_warm_images_ready gauge
burstpool_pool_warm_images_ready{namespace="team-a",pool="analytics"} 2
# HELP burstpool_queryservice_executors Executors of an attached QueryService by type: pool, pending (pool executors waiting for a slot), regular, or share (its maxPoolExecutors, when the pool bounds it).
# TYPE burstpool_queryservice_executors gauge
burstpool_queryservice_executors{namespace="team-a",pool="analytics",query_service="sales",query_service_namespace="team-a",type="pending"} 1
burstpool_queryservice_executors{namespace="team-a",pool="analytics",query_service="sales",query_service_namespace="team-a",type="pool"} 5
burstpool_queryservice_executors{namespace="team-a",pool="analytics",query_service="sales",query_service_namespace="team-a",type="regular"} 2
burstpool_queryservice_executors{namespace="team-a",pool="analytics",query_service="sales",query_service_namespace="team-a",type="share"} 4
`,
		},
		"Forgotten": {
			reason: "Forget drops every series of the pool.",
			forget: true,
			names:  []string{"burstpool_pool_executors", "burstpool_queryservice_executors", "burstpool_pool_executor_failures"},
			want:   "",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := New(reg)
			m.Record(spec, res)
			if tc.forget {
				m.Forget(spec)
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tc.want), tc.names...); err != nil {
				t.Errorf("%s\n%v", tc.reason, err)
			}
		})
	}
}
