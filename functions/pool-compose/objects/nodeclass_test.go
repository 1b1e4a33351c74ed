package objects

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// TestRuleModelAndNodeClassAgree: the kubelet settings the sizing model
// assumes are written into the NodeClass, so a node reserves what the
// model subtracts.
func TestRuleModelAndNodeClassAgree(t *testing.T) {
	cfg := &v1beta1.Input{ClusterName: "c", AWS: &v1beta1.AWS{Role: "r", AMIAlias: "al2023@latest"},
		GCP: &v1beta1.GCP{ImageFamily: "ContainerOptimizedOS", ImageChannel: "stable"}, Azure: &v1beta1.Azure{ImageFamily: "Ubuntu2204"}}
	// The NodeClass of each cloud whose kubelet the model assumes.
	kinds := map[sizing.Cloud]NodeClassKind{sizing.CloudAWS: EC2NodeClass, sizing.CloudGCP: GCENodeClass, sizing.CloudAzure: AKSNodeClass}
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
			reason: "Azure: AKS reserves by size and evicts at 750Mi as the model assumes; maxPods is left to the cluster's network plugin (Azure CNI node subnet: 30, Azure/karpenter-provider-azure pkg/utils/utils.go GetMaxPods), never a blanket 110.",
			cloud:  sizing.CloudAzure, path: []string{"spec", "maxPods"},
			want: map[string]any{"v": nil},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			nc, err := NodeClass(NodeClassArgs{Pool: "p", ClusterName: "c", Kind: kinds[tc.cloud], Config: cfg, Kubelet: sizing.KubeletFor(tc.cloud)})
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

// TestEC2NodeClassImageVolume replays warm images filling the default 20Gi
// volume of a node without local NVMe (DiskPressure evicts the pods
// warmup pulls them for): the volume that holds images is sized from the
// warm set. It is the AMI family's ephemeral block device as Karpenter's
// AWS provider names it (aws/karpenter-provider-aws pkg/providers/
// amifamily, EphemeralBlockDevice: /dev/xvda on AL2023, /dev/xvdb on
// Bottlerocket), and the EC2NodeClass schema allows one rootVolume.
func TestEC2NodeClassImageVolume(t *testing.T) {
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatal(err)
	}
	vol := func(device, size string, root bool) any {
		m := map[string]any{"deviceName": device, "ebs": map[string]any{"volumeSize": size, "volumeType": "gp3", "encrypted": true, "deleteOnTermination": true}}
		if root {
			m["rootVolume"] = true
		}
		return []any{m}
	}
	cases := map[string]struct {
		reason    string
		alias     string
		perImage  string
		images    int
		localNVMe bool
		want      any
	}{
		"TwoImagesOnAL2023": {
			reason: "20Gi and 20Gi for each of two images: a 60Gi root volume.",
			alias:  "al2023@latest", perImage: "20Gi", images: 2, want: vol("/dev/xvda", "60Gi", true),
		},
		"Bottlerocket": {
			reason: "Bottlerocket keeps images on its data volume, /dev/xvdb, not on its root.",
			alias:  "bottlerocket@latest", perImage: "20Gi", images: 1, want: vol("/dev/xvdb", "40Gi", false),
		},
		"LargerImages": {
			reason: "aws.rootVolumePerImage sets the room for each image.",
			alias:  "al2023@latest", perImage: "50Gi", images: 3, want: vol("/dev/xvda", "170Gi", true),
		},
		"LocalNVMeKeepsImagesOnInstanceStore": {
			reason: "A type with NVMe keeps images on its RAID0 instance store; the root volume stays the default.",
			alias:  "al2023@latest", perImage: "20Gi", images: 2, localNVMe: true,
		},
		"NoImages": {
			reason: "Nothing to warm: Karpenter's default volume.",
			alias:  "al2023@latest", perImage: "20Gi",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := &v1beta1.Input{AWS: &v1beta1.AWS{Role: "r", AMIAlias: tc.alias, RootVolumePerImage: tc.perImage}}
			nc, err := NodeClass(NodeClassArgs{Pool: "p", ClusterName: "c", Kind: EC2NodeClass, Config: cfg, LocalNVMe: tc.localNVMe, Images: tc.images, Kubelet: sizing.KubeletFor(sizing.CloudAWS)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, nc.Object["spec"].(map[string]any)["blockDeviceMappings"]); diff != "" {
				t.Errorf("%s\nblockDeviceMappings: -want, +got:\n%s", tc.reason, diff)
			}
			if err := reg.Validate(nc); err != nil {
				t.Errorf("%s\nthe EC2NodeClass is invalid: %v", tc.reason, err)
			}
		})
	}
}
