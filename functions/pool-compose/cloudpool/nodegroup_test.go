package cloudpool

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/test/harness/golden"
)

// awsArchs are the architectures of the AWS catalog's types, by type.
func awsArchs(t *testing.T) map[string]string {
	t.Helper()
	cat, err := sizing.LoadCatalog(sizing.CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(cat.Types))
	for _, it := range cat.Types {
		out[it.Name] = it.Arch
	}
	return out
}

// ngBase is a valid EKS node group input that cases change.
func ngBase() NodeGroupInput {
	archs := map[string]string{}
	if cat, err := sizing.LoadCatalog(sizing.CloudAWS); err == nil {
		for _, it := range cat.Types {
			archs[it.Name] = it.Arch
		}
	}
	return NodeGroupInput{
		Pool: "burst", Namespace: "e6-pools", Cloud: CloudAWS, Name: "burst-nodegroup",
		InstanceTypes: []string{"r7gd.4xlarge", "r6gd.4xlarge"}, Archs: archs,
		MinNodes: 1, MaxNodes: 5,
		Labels:      map[string]string{"team": "analytics"},
		Taints:      []corev1.Taint{{Key: "e6data.io/burst", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		ClusterName: "prod",
		Settings: v1beta1.NodeGroups{
			ProviderConfigName: "aws",
			EKS:                &v1beta1.EKSNodeGroups{Region: "us-east-1", SubnetIDs: []string{"subnet-1", "subnet-2"}, NodeRoleARN: "arn:aws:iam::123456789012:role/prod-node", Tags: map[string]string{"cost-center": "42"}},
			GKE:                &v1beta1.GKENodePools{Cluster: "prod-gke", Location: "us-central1", Project: "acme", NodeLocations: []string{"us-central1-a"}, ServiceAccount: "nodes@acme.iam.gserviceaccount.com"},
			AKS:                &v1beta1.AKSNodePools{KubernetesClusterID: "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod", VNetSubnetID: "/subscriptions/0000/x/subnets/pool", Zones: []string{"1", "2"}},
		},
	}
}

func ngWith(f func(*NodeGroupInput)) NodeGroupInput {
	in := ngBase()
	f(&in)
	return in
}

func TestBuildNodeGroup(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     NodeGroupInput
		golden string
	}{
		"EKSOnDemand": {
			reason: "On demand, an EKS group takes the sized type only, AL2023 of its architecture, min and max in forProvider and the desired size once in initProvider; the Cluster Autoscaler's node-template tags repeat its labels and taints.",
			in:     ngBase(),
			golden: "nodegroup-eks-on-demand.yaml",
		},
		"EKSSpot": {
			reason: "Spot, an EKS group takes the whole diversified set with capacityType SPOT, and the AMI type of the Graviton types' arm64.",
			in:     ngWith(func(in *NodeGroupInput) { in.Spot = true }),
			golden: "nodegroup-eks-spot.yaml",
		},
		"EKSSpotAMD64": {
			reason: "x86 types get the x86 AMI type.",
			in:     ngWith(func(in *NodeGroupInput) { in.Spot, in.InstanceTypes = true, []string{"r6i.4xlarge", "r7i.4xlarge"} }),
			golden: "nodegroup-eks-spot-amd64.yaml",
		},
		"EKSHeld": {
			reason: "A held group (suspended or draining) carries the hold taint, on the group and in the template tags.",
			in:     ngWith(func(in *NodeGroupInput) { in.Hold, in.MinNodes = true, 0 }),
			golden: "nodegroup-eks-held.yaml",
		},
		"GKE": {
			reason: "A GKE node pool bounds the autoscaler across its zones with totalMin/totalMaxNodeCount, and carries labels and taints in nodeConfig.",
			in: ngWith(func(in *NodeGroupInput) {
				in.Cloud, in.InstanceTypes, in.Spot = CloudGCP, []string{"n2d-highmem-16", "n2-highmem-16"}, true
			}),
			golden: "nodegroup-gke-spot.yaml",
		},
		"AKSSpot": {
			reason: "An AKS Spot pool deletes evicted nodes, pays up to on-demand, lists AKS's own spot taint once, and gets a 12-character name.",
			in: ngWith(func(in *NodeGroupInput) {
				in.Cloud, in.InstanceTypes, in.Spot, in.Settings.ProviderConfigName = CloudAzure, []string{"Standard_E16ps_v5"}, true, ""
				in.Taints = append(in.Taints, AKSSpotTaint)
			}),
			golden: "nodegroup-aks-spot.yaml",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := BuildNodeGroup(tc.in)
			if err != nil {
				t.Fatalf("\n%s\nBuildNodeGroup(...): unexpected error: %v", tc.reason, err)
			}
			got, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatalf("cannot marshal: %v", err)
			}
			golden.File(t, filepath.Join("testdata", tc.golden), got)
		})
	}
}

func TestBuildNodeGroupErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     NodeGroupInput
		want   []string
	}{
		"NoCloud":       {"Node groups exist on three clouds.", ngWith(func(in *NodeGroupInput) { in.Cloud = "linode" }), []string{"Cloud", "aws"}},
		"NoMax":         {"A group of at most zero nodes is not a group.", ngWith(func(in *NodeGroupInput) { in.MinNodes, in.MaxNodes = 0, 0 }), []string{"MaxNodes"}},
		"EKSNoRole":     {"EKS nodes need a role.", ngWith(func(in *NodeGroupInput) { in.Settings.EKS.NodeRoleARN = "" }), []string{"nodeGroups.eks.nodeRoleARN"}},
		"EKSNoCluster":  {"Without nodeGroups.eks.clusterName or clusterName there is no cluster.", ngWith(func(in *NodeGroupInput) { in.ClusterName = "" }), []string{"clusterName"}},
		"GKENoLocation": {"GKE needs the cluster's location.", ngWith(func(in *NodeGroupInput) { in.Cloud, in.Settings.GKE.Location = CloudGCP, "" }), []string{"nodeGroups.gke.location"}},
		"AKSNoCluster":  {"AKS needs the cluster's resource ID.", ngWith(func(in *NodeGroupInput) { in.Cloud, in.Settings.AKS = CloudAzure, nil }), []string{"nodeGroups.aks.kubernetesClusterID"}},
		"EKSMixedArchitectures": {
			"A spot set of Graviton and x86 types needs two AMI types, and one EKS node group has one: refused, naming the types and their architectures.",
			ngWith(func(in *NodeGroupInput) { in.Spot, in.InstanceTypes = true, []string{"r7gd.4xlarge", "r6i.4xlarge"} }),
			[]string{"r7gd.4xlarge (arm64)", "r6i.4xlarge (amd64)", "do not share one architecture"},
		},
		"EKSAMITypeOfAnotherArchitecture": {
			"The settings' AMI type for x86 with Graviton types is what EKS refuses: refused, naming the setting.",
			ngWith(func(in *NodeGroupInput) { in.Settings.EKS.AMIType = "AL2023_x86_64_STANDARD" }),
			[]string{"nodeGroups.eks.amiType AL2023_x86_64_STANDARD runs on amd64", "are arm64"},
		},
		"EKSArchitectureUnknown": {
			"A type whose architecture nothing says is refused rather than given a guessed AMI type.",
			ngWith(func(in *NodeGroupInput) { in.InstanceTypes = []string{"z9zz.large"} }),
			[]string{"architecture of instance type z9zz.large is not known", "catalogOverrides"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := BuildNodeGroup(tc.in)
			if err == nil {
				t.Fatalf("\n%s\nBuildNodeGroup(...): want error, got object %v", tc.reason, u.Object)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("\n%s\nBuildNodeGroup(...): error %q does not contain %q", tc.reason, err, w)
				}
			}
		})
	}
}

// TestNodeGroupGoldensAMITypeMatchesArchitecture walks every golden file
// that holds an EKS node group (this package's and the function's
// rendered pools) and checks that its amiType runs on the architecture of
// every one of its instance types, as EKS requires (EKS API
// CreateNodegroup: one AMI type per group; an arm64 AMI type for Graviton
// types).
func TestNodeGroupGoldensAMITypeMatchesArchitecture(t *testing.T) {
	archs := awsArchs(t)
	groups := 0
	for _, root := range []string{"testdata", filepath.Join("..", "testdata")} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, doc := range strings.Split(string(b), "\n---\n") {
				var v any
				if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
					t.Errorf("%s: %v", p, err)
					continue
				}
				for _, ng := range eksNodeGroups(v) {
					groups++
					fp, _ := ng["spec"].(map[string]any)["forProvider"].(map[string]any)
					ami, _ := fp["amiType"].(string)
					for _, it := range fp["instanceTypes"].([]any) {
						if a := archs[it.(string)]; a != AMITypeArch(ami) {
							t.Errorf("%s: node group with amiType %s runs instance type %s, which is %s", p, ami, it, a)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if groups == 0 {
		t.Fatal("found no EKS node group in the goldens")
	}
}

// eksNodeGroups are the EKS NodeGroup objects anywhere in v.
func eksNodeGroups(v any) []map[string]any {
	var out []map[string]any
	switch x := v.(type) {
	case map[string]any:
		if x["apiVersion"] == APIVersionEKSNodeGroup && x["kind"] == KindEKSNodeGroup {
			return []map[string]any{x}
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, eksNodeGroups(x[k])...)
		}
	case []any:
		for _, e := range x {
			out = append(out, eksNodeGroups(e)...)
		}
	}
	return out
}

func TestCloudName(t *testing.T) {
	long := strings.Repeat("a", 50) + "-nodegroup"
	cases := map[string]struct {
		reason string
		name   string
		max    int
		alnum  bool
		want   string
	}{
		"Fits":     {"A name within the limit is the cloud's name.", "burst-nodegroup", 40, false, "burst-nodegroup"},
		"TooLong":  {"GKE node pool names hold 40 characters (GKE API NodePool.name): head and hash.", long, 40, false, strings.Repeat("a", 31) + "-" + cloudName(long, 40, false)[32:]},
		"AKSAlnum": {"AKS Linux pool names are at most 12 lower-case letters and digits starting with a letter.", "burst-nodegroup", 12, true, cloudName("burst-nodegroup", 12, true)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := cloudName(tc.name, tc.max, tc.alnum)
			if diff := cmp.Diff(tc.want, got); diff != "" || len(got) > tc.max {
				t.Errorf("%s\ncloudName(...): -want, +got:\n%s (length %d, at most %d)", tc.reason, diff, len(got), tc.max)
			}
			if tc.alnum && (got[0] < 'a' || got[0] > 'z' || strings.IndexFunc(got, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') }) >= 0) {
				t.Errorf("%s\ncloudName(...) = %q: not lower-case letters and digits starting with a letter", tc.reason, got)
			}
		})
	}
}
