package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
)

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
			nil, eksOnly, set(CRDEKSNodeGroup), want{cloudAWS, methodNodeGroup, "settings nodeGroups.eks and CRD " + CRDEKSNodeGroup + ", without Karpenter", false}},
		"GKEChosenByCRD": {"With every cloud's block set, the installed provider CRD picks the cloud.",
			nil, nodeGroupConfig(), set(CRDGKENodePool), want{cloudGCP, methodNodeGroup, "settings nodeGroups.gke and CRD " + CRDGKENodePool + ", without Karpenter", false}},
		"AKSChosenByCRD": {"Only the AKS node pool CRD is installed: AKS.",
			nil, nodeGroupConfig(), set(CRDAKSNodePool), want{cloudAzure, methodNodeGroup, "settings nodeGroups.aks and CRD " + CRDAKSNodePool + ", without Karpenter", false}},
		"KarpenterWins": {"Karpenter, where installed, is preferred to node groups.",
			nil, eksOnly, set(CRDNodePool, CRDEC2NodeClass, CRDEKSNodeGroup), want{cloudAWS, methodKarpenter, "CRD " + CRDEC2NodeClass, false}},
		"CRDMissing": {"Settings without the provider CRD keep the existing-nodes path, and say what is missing.",
			nil, eksOnly, set(), want{cloudOnPrem, methodStatic, "no node provisioning CRD installed; settings nodeGroups.eks is set but CRD " + CRDEKSNodeGroup + " is not installed", false}},
		"SettingsIncomplete": {"An incomplete block is not usable: the CRD alone does not choose node groups.",
			nil, incomplete, set(CRDEKSNodeGroup), want{cloudOnPrem, methodStatic, "no node provisioning CRD installed", false}},
		"NoSettings": {"The provider CRD alone (provider-aws is installed for node IAM) does not choose node groups.",
			nil, &v1beta1.Input{}, set(CRDEKSNodeGroup), want{cloudOnPrem, methodStatic, "no node provisioning CRD installed", false}},
		"SpecMethodTakesCloudFromSettings": {"spec.provisioning.method node-group without a cloud takes the cloud of the settings' block.",
			&poolv1alpha1.Provisioning{Method: methodNodeGroup}, eksOnly, set(CRDEKSNodeGroup), want{cloudAWS, methodNodeGroup, "spec.provisioning", false}},
		"SpecMethodWithoutCRD": {"Asking for node groups without the provider's CRD is a problem to report.",
			&poolv1alpha1.Provisioning{Method: methodNodeGroup, Cloud: cloudGCP}, nodeGroupConfig(), set(), want{cloudGCP, methodNodeGroup, "spec.provisioning", true}},
		"SpecMethodOnLinode": {"Node groups exist on AWS, GCP and Azure only.",
			&poolv1alpha1.Provisioning{Method: methodNodeGroup, Cloud: cloudLinode}, nodeGroupConfig(), set(CRDLKE), want{cloudLinode, methodNodeGroup, "spec.provisioning", true}},
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

func TestSameShape(t *testing.T) {
	cases := map[string]struct {
		reason string
		types  []string
		want   []string
	}{
		"SameSize": {"r6gd.4xlarge and r7gd.4xlarge both have 16 vCPUs and 128 GiB (AWS catalog): one group may mix them.",
			[]string{"r7gd.4xlarge", "r6gd.4xlarge"}, []string{"r7gd.4xlarge", "r6gd.4xlarge"}},
		"LargerLeftOut": {"c6i.8xlarge (32 vCPUs, 64 GiB) is not the size of m6i.4xlarge (16 vCPUs, 64 GiB): the autoscaler would size its nodes wrong.",
			[]string{"m6i.4xlarge", "m7i.4xlarge", "c6i.8xlarge"}, []string{"m6i.4xlarge", "m7i.4xlarge"}},
		"UnknownFirst": {"A first type the catalog lacks stands alone.", []string{"x-unknown", "m6i.4xlarge"}, []string{"x-unknown"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, sameShape(tc.types, awsCatalogLookup)); diff != "" {
				t.Errorf("%s\nsameShape(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestNodeGroupSize(t *testing.T) {
	res := sizing.Result{InstanceType: "m6i.4xlarge", SpotTypes: []string{"m6i.4xlarge", "m7i.4xlarge", "c6i.8xlarge"},
		Offered: []sizing.Offered{{Name: "m6i.4xlarge", PerNode: 2}, {Name: "m7i.4xlarge", PerNode: 2}, {Name: "c6i.8xlarge", PerNode: 2}}}
	type want struct {
		SpotTypes []string
		Offered   []string
	}
	cases := map[string]struct {
		reason string
		cloud  string
		spot   bool
		want   want
	}{
		"EKSSpot":     {"An EKS spot group takes the types of the sized type's shape; status lists only those.", cloudAWS, true, want{[]string{"m6i.4xlarge", "m7i.4xlarge"}, []string{"m6i.4xlarge", "m7i.4xlarge"}}},
		"EKSOnDemand": {"On demand, one type.", cloudAWS, false, want{nil, []string{"m6i.4xlarge"}}},
		"GKESpot":     {"A GKE node pool has one machine type, spot or not.", cloudGCP, true, want{[]string{"m6i.4xlarge"}, []string{"m6i.4xlarge"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := nodeGroupSize(tc.cloud, res, tc.spot)
			w := want{SpotTypes: got.SpotTypes}
			for _, o := range got.Offered {
				w.Offered = append(w.Offered, o.Name)
			}
			if diff := cmp.Diff(tc.want, w); diff != "" {
				t.Errorf("%s\nnodeGroupSize(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestNodeGroupDaemonSets(t *testing.T) {
	cases := map[string]struct {
		reason string
		d      Detection
		want   []v1beta1.NodeDaemonSet
	}{
		"EKS": {"An EKS managed node group's nodes run the kube-proxy and aws-node add-ons, as Karpenter's on EKS do.", Detection{Cloud: cloudAWS, Method: methodNodeGroup}, eksAddOnDaemonSets},
		"GKE": {"On GKE and AKS, as with Karpenter there, no add-on DaemonSets are counted unless sizing.nodeDaemonSets names them.", Detection{Cloud: cloudGCP, Method: methodNodeGroup}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, clusterDaemonSets(&v1beta1.Input{}, tc.d, "")); diff != "" {
				t.Errorf("%s\nclusterDaemonSets(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
