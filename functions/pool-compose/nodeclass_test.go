package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
)

// TestRuleModelAndNodeClassAgree: the kubelet settings the sizing model
// assumes are written into the NodeClass, so a node reserves what the
// model subtracts.
func TestRuleModelAndNodeClassAgree(t *testing.T) {
	cfg := &v1beta1.Input{ClusterName: "c", AWS: &v1beta1.AWS{Role: "r", AMIAlias: "al2023@latest"},
		GCP: &v1beta1.GCP{ImageFamily: "ContainerOptimizedOS", ImageChannel: "stable"}, Azure: &v1beta1.Azure{ImageFamily: "Ubuntu2204"}}
	cases := map[string]struct {
		reason string
		cloud  sizing.Cloud
		path   []string
		want   map[string]any
	}{
		"EC2NodeClass": {
			reason: "AWS: maxPods 110 makes memory kube-reserved 11 x 110 + 255 = 1465Mi on every size; eviction at 100Mi; CPU kube-reserved varies by size (110m at 16 vCPU, 230m at 64) and stays Karpenter's default.",
			cloud:  sizing.CloudAWS, path: []string{"spec", "kubelet"},
			want: map[string]any{"maxPods": int64(110), "kubeReserved": map[string]any{"memory": "1465Mi"}, "evictionHard": map[string]any{"memory.available": "100Mi"}},
		},
		"GCENodeClass": {
			reason: "GCP: maxPods 110 and eviction at 100Mi; GKE's memory brackets (25% of the first 4Gi ...) vary by size and stay the default.",
			cloud:  sizing.CloudGCP, path: []string{"spec", "kubeletConfiguration"},
			want: map[string]any{"maxPods": int64(110), "evictionHard": map[string]any{"memory.available": "100Mi"}},
		},
		"AKSNodeClass": {
			reason: "Azure: the AKSNodeClass has maxPods only (110, not Azure CNI's 30); AKS evicts at 750Mi as the model assumes.",
			cloud:  sizing.CloudAzure, path: []string{"spec", "maxPods"},
			want: map[string]any{"v": int64(110)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			nc, err := NodeClass(NodeClassArgs{Pool: "p", ClusterName: "c", Kind: nodeClassKinds[string(tc.cloud)], Config: cfg, Kubelet: sizing.KubeletFor(tc.cloud)})
			if err != nil {
				t.Fatal(err)
			}
			var got any = nc.Object
			for _, p := range tc.path {
				got = got.(map[string]any)[p]
			}
			if m, ok := got.(map[string]any); ok {
				got = m
			} else {
				got = map[string]any{"v": got}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nNodeClass kubelet: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestEC2NodeClassReservesWhatTheModelSubtracts recomputes the memory
// allocatable of every AWS catalog type from the figures of the
// EC2NodeClass a pool of that type gets (capacity less 64Mi CMA on arm64
// and the 7.5% VM overhead, as Karpenter's AWS provider's memory() does,
// then its kubeReserved.memory and evictionHard) and compares it with the
// sizing model's. Its maxPods must not exceed the pods the type's ENIs
// address (the VPC CNI gives no pod an address beyond them).
func TestEC2NodeClassReservesWhatTheModelSubtracts(t *testing.T) {
	cat, err := sizing.LoadCatalog(sizing.CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range cat.Types {
		spec := kubeletConfig(sizing.KubeletFor(sizing.CloudAWS, it), true)
		if pods := spec["maxPods"].(int64); pods > it.Pods {
			t.Errorf("%s: the EC2NodeClass sets maxPods %d, more than the %d pods its network addresses", it.Name, pods, it.Pods)
		}
		reserved := resource.MustParse(spec["kubeReserved"].(map[string]any)["memory"].(string))
		eviction := resource.MustParse(spec["evictionHard"].(map[string]any)["memory.available"].(string))
		mib := it.Memory.Value() >> 20
		if it.Arch == sizing.ArchARM64 {
			mib -= 64
		}
		capacity := (mib - (mib*75+999)/1000) << 20
		want := capacity - reserved.Value() - eviction.Value()
		alloc := sizing.NodeAllocatable(sizing.CloudAWS, it)
		if got := alloc.Memory.Value(); got != want {
			t.Errorf("%s: the model allows %d bytes, the EC2NodeClass's figures %d", it.Name, got, want)
		}
	}
}
