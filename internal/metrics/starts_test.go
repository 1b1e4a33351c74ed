package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

func TestStarts(t *testing.T) {
	spec := v1alpha1.PoolCapacityParameters{Pool: v1alpha1.PoolRef{Name: "analytics", Namespace: "team-a"}}
	o := &v1alpha1.ExecutorStarts{ByPlacement: []v1alpha1.PlacementStarts{
		{Placement: v1alpha1.PlacementExistingNode, Count: 2, SumSeconds: "1", Buckets: []v1alpha1.StartBucket{{UpToSeconds: "1", Count: 2}, {UpToSeconds: "60", Count: 2}}},
		{Placement: v1alpha1.PlacementNewNode, Count: 3, SumSeconds: "213.5", Buckets: []v1alpha1.StartBucket{{UpToSeconds: "1", Count: 0}, {UpToSeconds: "60", Count: 0}}},
	}}
	cases := map[string]struct {
		reason string
		forget bool
		want   string
	}{
		"Exported": {
			reason: "Each placement's histogram is the status's, its buckets cumulative and +Inf the count (Prometheus histogram conventions, https://prometheus.io/docs/concepts/metric_types/#histogram).",
			want: `
# HELP burstpool_executor_start_seconds Time from a pool executor's creation to its containers running, in seconds, by placement: existing_node (a node created before it: a warm slot or room on a used node) or new_node (a node launched for it).
# TYPE burstpool_executor_start_seconds histogram
burstpool_executor_start_seconds_bucket{placement="existing_node",pool="analytics",pool_namespace="team-a",le="1"} 2
burstpool_executor_start_seconds_bucket{placement="existing_node",pool="analytics",pool_namespace="team-a",le="60"} 2
burstpool_executor_start_seconds_bucket{placement="existing_node",pool="analytics",pool_namespace="team-a",le="+Inf"} 2
burstpool_executor_start_seconds_sum{placement="existing_node",pool="analytics",pool_namespace="team-a"} 1
burstpool_executor_start_seconds_count{placement="existing_node",pool="analytics",pool_namespace="team-a"} 2
burstpool_executor_start_seconds_bucket{placement="new_node",pool="analytics",pool_namespace="team-a",le="1"} 0
burstpool_executor_start_seconds_bucket{placement="new_node",pool="analytics",pool_namespace="team-a",le="60"} 0
burstpool_executor_start_seconds_bucket{placement="new_node",pool="analytics",pool_namespace="team-a",le="+Inf"} 3
burstpool_executor_start_seconds_sum{placement="new_node",pool="analytics",pool_namespace="team-a"} 213.5
burstpool_executor_start_seconds_count{placement="new_node",pool="analytics",pool_namespace="team-a"} 3
`,
		},
		"Forgotten": {
			reason: "Forget drops the pool's histograms with its other series.",
			forget: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := New(reg)
			m.Record("analytics", spec, capacity.Result{}, time.Time{})
			m.Starts(spec, o)
			if tc.forget {
				m.Forget("analytics")
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tc.want), "burstpool_executor_start_seconds"); err != nil {
				t.Errorf("%s\n%v", tc.reason, err)
			}
		})
	}
}
