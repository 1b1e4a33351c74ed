package cloudpool

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/test/harness/golden"
)

// ngBase is a valid EKS node group input that cases change.
func ngBase() NodeGroupInput {
	return NodeGroupInput{
		Pool: "burst", Namespace: "e6-pools", Cloud: CloudAWS, Name: "burst-nodegroup",
		InstanceTypes: []string{"r7gd.4xlarge", "r6gd.4xlarge"}, Arch: "arm64",
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
			reason: "Spot, an EKS group takes the whole diversified set with capacityType SPOT.",
			in:     ngWith(func(in *NodeGroupInput) { in.Spot, in.Arch = true, "amd64" }),
			golden: "nodegroup-eks-spot.yaml",
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
