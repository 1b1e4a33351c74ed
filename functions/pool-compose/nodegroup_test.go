package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// nodeGroupSettingsYAML are the settings of a cluster whose pools may get
// node groups on each of the three clouds; which one a pool gets depends
// on the provider CRD the cluster serves.
const nodeGroupSettingsYAML = `  nodeGroups:
    providerConfigName: default
    eks:
      region: us-east-1
      subnetIDs: [subnet-0a1b2c3d, subnet-4e5f6a7b]
      nodeRoleARN: arn:aws:iam::123456789012:role/test-cluster-node
    gke:
      location: us-central1
      project: test-project
      nodeLocations: [us-central1-a, us-central1-b]
    aks:
      kubernetesClusterID: /subscriptions/0000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/test-cluster
`

// nodeGroupConfig is settings with complete node group blocks for every
// cloud.
func nodeGroupConfig() *v1beta1.Input {
	return &v1beta1.Input{ClusterName: "test-cluster", NodeGroups: &v1beta1.NodeGroups{
		EKS: &v1beta1.EKSNodeGroups{Region: "us-east-1", SubnetIDs: []string{"subnet-1"}, NodeRoleARN: "arn:aws:iam::1:role/n"},
		GKE: &v1beta1.GKENodePools{Location: "us-central1"},
		AKS: &v1beta1.AKSNodePools{KubernetesClusterID: "/subscriptions/0/x"},
	}}
}

func TestDetectNodeGroup(t *testing.T) {
	set := crdSet
	type want struct {
		Cloud, Method, Source string
		Problem               bool
	}
	eksOnly := &v1beta1.Input{ClusterName: "c", NodeGroups: &v1beta1.NodeGroups{EKS: nodeGroupConfig().NodeGroups.EKS}}
	incomplete := &v1beta1.Input{NodeGroups: &v1beta1.NodeGroups{EKS: &v1beta1.EKSNodeGroups{Region: "us-east-1"}}}
	cases := map[string]struct {
		reason string
		spec   *poolv1alpha1.Provisioning
		cfg    *v1beta1.Input
		crds   map[string]bool
		want   want
	}{
		"EKSWithoutKarpenter": {"Complete nodeGroups.eks settings and provider-aws-eks's NodeGroup CRD, without Karpenter, mean EKS node groups.",
			nil, eksOnly, set(crdEKSNodeGroup), want{cloudAWS, methodNodeGroup, "settings nodeGroups.eks and CRD " + crdEKSNodeGroup + ", without Karpenter", false}},
		"GKEChosenByCRD": {"With every cloud's block set, the installed provider CRD picks the cloud.",
			nil, nodeGroupConfig(), set(crdGKENodePool), want{cloudGCP, methodNodeGroup, "settings nodeGroups.gke and CRD " + crdGKENodePool + ", without Karpenter", false}},
		"AKSChosenByCRD": {"Only the AKS node pool CRD is installed: AKS.",
			nil, nodeGroupConfig(), set(crdAKSNodePool), want{cloudAzure, methodNodeGroup, "settings nodeGroups.aks and CRD " + crdAKSNodePool + ", without Karpenter", false}},
		"KarpenterWins": {"Karpenter, where installed, is preferred to node groups.",
			nil, eksOnly, set(crdNodePool, crdEC2NodeClass, crdEKSNodeGroup), want{cloudAWS, methodKarpenter, "CRD " + crdEC2NodeClass, false}},
		"CRDMissing": {"Settings without the provider CRD keep the existing-nodes path, and say what is missing.",
			nil, eksOnly, set(), want{cloudOnPrem, methodStatic, "no node provisioning CRD installed; settings nodeGroups.eks is set but CRD " + crdEKSNodeGroup + " is not installed", false}},
		"SettingsIncomplete": {"An incomplete block is not usable: the CRD alone does not choose node groups.",
			nil, incomplete, set(crdEKSNodeGroup), want{cloudOnPrem, methodStatic, "no node provisioning CRD installed", false}},
		"NoSettings": {"The provider CRD alone (provider-aws is installed for node IAM) does not choose node groups.",
			nil, &v1beta1.Input{}, set(crdEKSNodeGroup), want{cloudOnPrem, methodStatic, "no node provisioning CRD installed", false}},
		"SpecMethodTakesCloudFromSettings": {"spec.provisioning.method node-group without a cloud takes the cloud of the settings' block.",
			&poolv1alpha1.Provisioning{Method: methodNodeGroup}, eksOnly, set(crdEKSNodeGroup), want{cloudAWS, methodNodeGroup, "spec.provisioning", false}},
		"SpecMethodWithoutCRD": {"Asking for node groups without the provider's CRD is a problem to report.",
			&poolv1alpha1.Provisioning{Method: methodNodeGroup, Cloud: cloudGCP}, nodeGroupConfig(), set(), want{cloudGCP, methodNodeGroup, "spec.provisioning", true}},
		"SpecMethodOnLinode": {"Node groups exist on AWS, GCP and Azure only.",
			&poolv1alpha1.Provisioning{Method: methodNodeGroup, Cloud: cloudLinode}, nodeGroupConfig(), set(crdLKE), want{cloudLinode, methodNodeGroup, "spec.provisioning", true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Detect(tc.spec, tc.cfg, tc.crds)
			got := want{d.Cloud, d.Method, d.Source, d.Problem != ""}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDetect(...): -want, +got:\n%s\nproblem: %s", tc.reason, diff, d.Problem)
			}
		})
	}
}

func TestNodeGroupSettings(t *testing.T) {
	cases := map[string]struct {
		reason string
		cloud  string
		cfg    *v1beta1.Input
		want   []SettingError
	}{
		"EKSComplete": {"clusterName stands in for nodeGroups.eks.clusterName.", cloudAWS, nodeGroupConfig(), nil},
		"EKSEmpty": {"Every EKS setting is named.", cloudAWS, &v1beta1.Input{NodeGroups: &v1beta1.NodeGroups{EKS: &v1beta1.EKSNodeGroups{}}}, []SettingError{
			{Path: "nodeGroups.eks.clusterName", Message: "is required (or clusterName): the EKS cluster pool node groups join"},
			{Path: "nodeGroups.eks.region", Message: "is required: the EKS cluster's region"},
			{Path: "nodeGroups.eks.subnetIDs", Message: "is required: the subnets pool nodes run in"},
			{Path: "nodeGroups.eks.nodeRoleARN", Message: "is required: the IAM role ARN pool nodes run with"},
		}},
		"GKEBlockMissing": {"A cloud without its block names the block.", cloudGCP, &v1beta1.Input{}, []SettingError{
			{Path: "nodeGroups.gke", Message: "is required for method node-group on gcp: the cluster, network and node identity of the pool's node groups"},
		}},
		"AKSEmpty": {"AKS needs the cluster's resource ID.", cloudAzure, &v1beta1.Input{NodeGroups: &v1beta1.NodeGroups{AKS: &v1beta1.AKSNodePools{}}}, []SettingError{
			{Path: "nodeGroups.aks.kubernetesClusterID", Message: "is required: the AKS cluster's Azure resource ID"},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, nodeGroupSettings(tc.cloud, tc.cfg)); diff != "" {
				t.Errorf("%s\nnodeGroupSettings(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestNodeGroupNodes(t *testing.T) {
	obj := func(atProvider map[string]any) *structpb.Struct {
		s, err := structpb.NewStruct(map[string]any{"status": map[string]any{"atProvider": atProvider}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type want struct {
		N     int64
		Known bool
	}
	cases := map[string]struct {
		reason string
		obj    *structpb.Struct
		want   want
	}{
		"EKS":     {"EKS reports its size in scalingConfig[0].desiredSize (provider-aws NodeGroup atProvider).", obj(map[string]any{"scalingConfig": []any{map[string]any{"desiredSize": 2.0, "minSize": 0.0}}}), want{2, true}},
		"EKSZero": {"An EKS group the autoscaler emptied reports 0.", obj(map[string]any{"scalingConfig": []any{map[string]any{"desiredSize": 0.0}}}), want{0, true}},
		"AKS":     {"AKS and GKE report nodeCount.", obj(map[string]any{"nodeCount": 3.0}), want{3, true}},
		"Unknown": {"A group that reports nothing yet is not known to be empty.", obj(map[string]any{}), want{0, false}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n, ok := nodeGroupNodes(tc.obj)
			if diff := cmp.Diff(tc.want, want{n, ok}); diff != "" {
				t.Errorf("%s\nnodeGroupNodes(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
