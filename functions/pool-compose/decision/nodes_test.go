package decision

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/internal/sizing"
)

// TestNodeLimit follows spec.maxExecutors to the pool's nodes: the most
// nodes it may have, the fewest it keeps, and the CPU and memory limits of
// a Karpenter NodePool.
func TestNodeLimit(t *testing.T) {
	node := sizing.Resources{CPU: resource.MustParse("16"), Memory: resource.MustParse("64Gi")}
	type args struct {
		minExecutors, maxExecutors, perNode int32
		suspend                             bool
		capacity                            sizing.Resources
	}
	type want struct {
		MinNodes, MaxNodes int64
		Limits             map[string]string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"TwentyOneAtFourPerNode": {
			reason: "21 executors at 4 a node need 6 nodes (5 hold 20): 6 nodes of 16 CPU and 64Gi limit the pool to 96 CPU and 384Gi.",
			args:   args{maxExecutors: 21, perNode: 4, capacity: node},
			want:   want{MaxNodes: 6, Limits: map[string]string{"nodes": "6", "cpu": "96", "memory": "384Gi"}},
		},
		"ExactlyFull": {
			reason: "20 executors at 4 a node fill 5 nodes exactly.",
			args:   args{maxExecutors: 20, perNode: 4, capacity: node},
			want:   want{MaxNodes: 5, Limits: map[string]string{"nodes": "5", "cpu": "80", "memory": "320Gi"}},
		},
		"Suspended": {
			reason: "A suspended pool keeps no nodes and its NodePool's limits are all zero, so Karpenter launches nothing; a cloud pool keeps its maximum.",
			args:   args{minExecutors: 8, maxExecutors: 21, perNode: 4, suspend: true, capacity: node},
			want:   want{MaxNodes: 6, Limits: map[string]string{"nodes": "0", "cpu": "0", "memory": "0"}},
		},
		"LKEMinMax": {
			reason: "An LKE pool of 5 to 21 executors at 4 a node scales between 2 and 6 nodes.",
			args:   args{minExecutors: 5, maxExecutors: 21, perNode: 4, capacity: node},
			want:   want{MinNodes: 2, MaxNodes: 6, Limits: map[string]string{"nodes": "6", "cpu": "96", "memory": "384Gi"}},
		},
		"CapacityUnknown": {
			reason: "Without a node size only the node count limits the pool.",
			args:   args{maxExecutors: 3, perNode: 1},
			want:   want{MaxNodes: 3, Limits: map[string]string{"nodes": "3"}},
		},
		"BeyondInt64": {
			reason: "maxExecutors at the int32 limit, one a node, of a huge type: CPU and memory do not fit an int64, so the node count alone limits the pool.",
			args:   args{maxExecutors: math.MaxInt32, perNode: 1, capacity: sizing.Resources{CPU: resource.MustParse("100M"), Memory: resource.MustParse("64Ei")}},
			want:   want{MaxNodes: math.MaxInt32, Limits: map[string]string{"nodes": "2147483647"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			got.MinNodes, got.MaxNodes = nodeRange(tc.args.minExecutors, tc.args.maxExecutors, tc.args.perNode, tc.args.suspend)
			got.Limits = nodePoolLimits(got.MaxNodes, tc.args.capacity, tc.args.suspend)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nnodeRange and nodePoolLimits (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
