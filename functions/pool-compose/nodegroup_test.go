package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
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

// eksGroup is an observed EKS NodeGroup of template (annotationNodeTemplate)
// whose Ready condition is ready and that reports desired nodes.
func eksGroup(name, template string, ready bool, desired int) string {
	status := "False"
	if ready {
		status = "True"
	}
	return fmt.Sprintf("apiVersion: eks.aws.upbound.io/v1beta1\nkind: NodeGroup\nmetadata:\n  name: %s\n  annotations: {%s: %q}\nspec:\n  forProvider: {amiType: AL2023_x86_64_STANDARD}\nstatus:\n  conditions: [{type: Ready, status: %q}]\n  atProvider: {scalingConfig: [{desiredSize: %d}]}\n",
		name, annotationNodeTemplate, template, status, desired)
}

// nodeGroupInputYAML is testInput with node group settings for every cloud
// and node-group among the methods pools may name.
func nodeGroupInputYAML() string {
	in := strings.Replace(testInput, "methods: [karpenter,", "methods: [node-group, karpenter,", 1)
	return in + nodeGroupInputBlock()
}

// nodeGroupInputBlock is nodeGroupSettingsYAML as a top-level field of the
// function input.
func nodeGroupInputBlock() string {
	return strings.ReplaceAll(nodeGroupSettingsYAML, "\n  ", "\n")[2:]
}

// TestRuleNodeGroup: a pool's node group is sized from minExecutors and
// maxExecutors; a new template (types, capacity) gets a new group and
// holds the old one until it is empty and the new one Ready; Suspend holds
// the group without deleting it, and Resume lifts the hold.
func TestRuleNodeGroup(t *testing.T) {
	spec := "  minExecutors: 2\n  maxExecutors: 20\n  executorsPerNode: 2\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n  instanceConfig: {instanceType: m-16x-amd64-linux}\n"
	type group struct {
		Name     string
		Min, Max int64
		Types    []any
		Hold     bool
	}
	type want struct {
		Group    group
		Ready    bool
		Draining *group
	}
	hold := func(u *unstructured.Unstructured) bool {
		ts, _, _ := unstructured.NestedSlice(u.Object, "spec", "forProvider", "taint")
		for _, t := range ts {
			if t.(map[string]any)["key"] == cloudpool.TaintHold {
				return true
			}
		}
		return false
	}
	read := func(u *unstructured.Unstructured) group {
		sc, _, _ := unstructured.NestedSlice(u.Object, "spec", "forProvider", "scalingConfig")
		types, _, _ := unstructured.NestedSlice(u.Object, "spec", "forProvider", "instanceTypes")
		return group{Name: u.GetName(), Min: nestedNumber(sc[0].(map[string]any), "minSize"), Max: nestedNumber(sc[0].(map[string]any), "maxSize"), Types: types, Hold: hold(u)}
	}
	onDemand := []any{"m-16x-amd64-linux"}
	cases := map[string]struct {
		reason   string
		spec     string
		observed map[string]string
		want     want
	}{
		"New": {
			reason: "minExecutors 2 and maxExecutors 20 at 2 per node: 1 to 10 nodes; nothing observed yet, so not ready.",
			want:   want{Group: group{Name: "burst-nodegroup", Min: 1, Max: 10, Types: onDemand}},
		},
		"Ready": {
			reason:   "The provider's Ready condition makes the group ready.",
			observed: map[string]string{"cloud-nodepool": eksGroup("burst-nodegroup", "m-16x-amd64-linux/on-demand", true, 1)},
			want:     want{Group: group{Name: "burst-nodegroup", Min: 1, Max: 10, Types: onDemand}, Ready: true},
		},
		"SpotIsANewTemplate": {
			reason:   "Spot on EKS is a new template (capacityType is immutable), so a new group; the on-demand one is held. The test sizer's second spot type is in no catalog, so it is left out (sameShape).",
			spec:     strings.Replace(spec, "instanceType: m-16x-amd64-linux", "instanceType: m-16x-amd64-linux, spotEnabled: true", 1),
			observed: map[string]string{"cloud-nodepool": eksGroup("burst-nodegroup", "m-16x-amd64-linux/on-demand", true, 1)},
			want: want{Group: group{Name: "burst-m-16x-amd64-linux-spot-nodegroup", Min: 1, Max: 10, Types: onDemand},
				Draining: &group{Name: "burst-nodegroup", Min: 0, Max: 10, Types: onDemand, Hold: true}},
		},
		"TypeChangeHoldsTheOldGroup": {
			reason:   "instanceTypes is immutable on EKS: the new type gets its own group, and the old one takes no new node (hold) and keeps none it need not (min 0).",
			observed: map[string]string{"cloud-nodepool": eksGroup("burst-nodegroup", "m-8x-amd64-linux/on-demand", true, 3)},
			want: want{Group: group{Name: "burst-m-16x-amd64-linux-on-demand-nodegroup", Min: 1, Max: 10, Types: onDemand},
				Draining: &group{Name: "burst-nodegroup", Min: 0, Max: 10, Types: []any{"m-8x-amd64-linux"}, Hold: true}},
		},
		"OldGroupStaysWhileItHasNodes": {
			reason: "The new group is Ready but the old one still reports 2 nodes (executors run there): it stays held.",
			observed: map[string]string{
				"cloud-nodepool":          eksGroup("burst-m-16x-amd64-linux-on-demand-nodegroup", "m-16x-amd64-linux/on-demand", true, 1),
				"cloud-nodepool-draining": eksGroup("burst-nodegroup", "m-8x-amd64-linux/on-demand", true, 2)},
			want: want{Group: group{Name: "burst-m-16x-amd64-linux-on-demand-nodegroup", Min: 1, Max: 10, Types: onDemand}, Ready: true,
				Draining: &group{Name: "burst-nodegroup", Min: 0, Max: 10, Types: []any{"m-8x-amd64-linux"}, Hold: true}},
		},
		"EmptyOldGroupIsDeleted": {
			reason: "The old group reports no nodes and the new one is Ready: it is no longer desired, so Crossplane deletes it.",
			observed: map[string]string{
				"cloud-nodepool":          eksGroup("burst-m-16x-amd64-linux-on-demand-nodegroup", "m-16x-amd64-linux/on-demand", true, 1),
				"cloud-nodepool-draining": eksGroup("burst-nodegroup", "m-8x-amd64-linux/on-demand", true, 0)},
			want: want{Group: group{Name: "burst-m-16x-amd64-linux-on-demand-nodegroup", Min: 1, Max: 10, Types: onDemand}, Ready: true},
		},
		"EmptyOldGroupWaitsForTheNew": {
			reason: "The old group is empty but the new one is not Ready yet: the old one stays.",
			observed: map[string]string{
				"cloud-nodepool":          eksGroup("burst-m-16x-amd64-linux-on-demand-nodegroup", "m-16x-amd64-linux/on-demand", false, 0),
				"cloud-nodepool-draining": eksGroup("burst-nodegroup", "m-8x-amd64-linux/on-demand", true, 0)},
			want: want{Group: group{Name: "burst-m-16x-amd64-linux-on-demand-nodegroup", Min: 1, Max: 10, Types: onDemand},
				Draining: &group{Name: "burst-nodegroup", Min: 0, Max: 10, Types: []any{"m-8x-amd64-linux"}, Hold: true}},
		},
		"BackToTheDrainingTemplate": {
			reason: "Going back to the draining group's type: it serves again (its own name) and the newer group is held, so nothing is deleted under running executors.",
			observed: map[string]string{
				"cloud-nodepool":          eksGroup("burst-m-8x-amd64-linux-on-demand-nodegroup", "m-8x-amd64-linux/on-demand", true, 1),
				"cloud-nodepool-draining": eksGroup("burst-nodegroup", "m-16x-amd64-linux/on-demand", true, 2)},
			want: want{Group: group{Name: "burst-nodegroup", Min: 1, Max: 10, Types: onDemand}, Ready: true,
				Draining: &group{Name: "burst-m-8x-amd64-linux-on-demand-nodegroup", Min: 0, Max: 10, Types: []any{"m-8x-amd64-linux"}, Hold: true}},
		},
		"ThirdTemplateWaits": {
			reason: "A third type while a group still drains: the serving group keeps its type, and the draining one stays held, until the draining one is gone.",
			observed: map[string]string{
				"cloud-nodepool":          eksGroup("burst-m-8x-amd64-linux-on-demand-nodegroup", "m-8x-amd64-linux/on-demand", true, 1),
				"cloud-nodepool-draining": eksGroup("burst-nodegroup", "m-4x-amd64-linux/on-demand", true, 2)},
			want: want{Group: group{Name: "burst-m-8x-amd64-linux-on-demand-nodegroup", Min: 1, Max: 10, Types: []any{"m-8x-amd64-linux"}}, Ready: true,
				Draining: &group{Name: "burst-nodegroup", Min: 0, Max: 10, Types: []any{"m-4x-amd64-linux"}, Hold: true}},
		},
		"Suspended": {
			reason:   "Suspend keeps the group: minimum 0 and the hold taint, so the autoscaler adds no node and removes each once its executors end.",
			spec:     spec + "  suspend: true\n",
			observed: map[string]string{"cloud-nodepool": eksGroup("burst-nodegroup", "m-16x-amd64-linux/on-demand", true, 2)},
			want:     want{Group: group{Name: "burst-nodegroup", Min: 0, Max: 10, Types: onDemand, Hold: true}, Ready: true},
		},
		"Resumed": {
			reason:   "Resume lifts the hold and restores the minimum on the same group.",
			observed: map[string]string{"cloud-nodepool": eksGroup("burst-nodegroup", "m-16x-amd64-linux/on-demand", true, 0)},
			want:     want{Group: group{Name: "burst-nodegroup", Min: 1, Max: 10, Types: onDemand}, Ready: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sp := tc.spec
			if sp == "" {
				sp = spec
			}
			rsp := scenario{Input: nodeGroupInputYAML(), XR: xpool("burst", "pools", sp), QueryServices: allQS, CRDs: []string{crdEKSNodeGroup}, Observed: tc.observed}.run(t)
			u := desired(rsp, "cloud-nodepool")
			if u == nil {
				t.Fatalf("%s\nno node group desired: %v", tc.reason, results(rsp))
			}
			got := want{Group: read(u), Ready: rsp.GetDesired().GetResources()["cloud-nodepool"].GetReady().String() == "READY_TRUE"}
			if d := desired(rsp, "cloud-nodepool-draining"); d != nil {
				g := read(d)
				got.Draining = &g
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRuleNodeGroupSaysWhy: the claim's NodesProvisioned condition says
// which method the pool got and what chose it, and a cluster whose node
// group settings wait for the provider's CRD keeps the existing-nodes path
// and says what is missing.
func TestRuleNodeGroupSaysWhy(t *testing.T) {
	spec := "  maxExecutors: 4\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n  instanceConfig: {instanceType: m-16x-amd64-linux}\n"
	cases := map[string]struct {
		reason string
		crds   []string
		want   string
	}{
		"Chosen": {"With the CRD the group is composed, and the condition names the settings and the CRD.", []string{crdEKSNodeGroup},
			"aws node group burst-nodegroup holds 0 to 4 m-16x-amd64-linux/on-demand node(s), scaled by the Cluster Autoscaler (method node-group from settings nodeGroups.eks and CRD nodegroups.eks.aws.upbound.io, without Karpenter)"},
		"CRDMissing": {"Without the CRD the pool keeps the existing-nodes path's message, and says which CRD it waits for.", nil,
			"the cluster provisions nodes with static, which burstpool does not manage for this pool: set spec.nodeSelector to pick the pool's nodes (or spec.provisioning.manageNodePool to create them); no node provisioning CRD installed; settings nodeGroups.eks is set but CRD nodegroups.eks.aws.upbound.io is not installed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: nodeGroupInputYAML(), XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: tc.crds}.run(t)
			var got string
			for _, c := range rsp.GetConditions() {
				if c.GetType() == CondProvisioned {
					got = c.GetMessage()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
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

// TestRuleNodeGroupIsTheTenancys: on a cluster with Karpenter, a claim
// that asks for node groups needs the method granted to its namespace
// (tenancy.namespaces[].methods); the cluster, network and role of the
// group come from the settings only, since no Pool field names them.
func TestRuleNodeGroupIsTheTenancys(t *testing.T) {
	spec := "  maxExecutors: 4\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n  instanceConfig: {instanceType: m-16x-amd64-linux}\n  provisioning: {method: node-group}\n"
	settings := testInput + nodeGroupInputBlock()
	crds := []string{crdNodePool, crdEC2NodeClass, crdEKSNodeGroup}
	cases := map[string]struct {
		reason string
		input  string
		want   summary
	}{
		"NotGranted": {"testInput's tenancy grants every method but node-group: the claim is refused, naming the field.", settings,
			summary{Phase: "Failed", Conditions: map[string]string{CondProvisioned: "FALSE/ClaimNotAllowed"}}},
		"Granted": {"With node-group granted, the pool gets its node group from the settings.", nodeGroupInputYAML(),
			summary{Objects: []string{"cloud-nodepool"}, Phase: "Creating", Conditions: map[string]string{CondProvisioned: "TRUE/NodeGroup"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: tc.input, XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: crds}.run(t)
			s := summarize(rsp, tc.want)
			got := summary{Phase: s.Phase, Conditions: map[string]string{CondProvisioned: s.Conditions[CondProvisioned]}}
			for _, o := range s.Objects {
				if o == "cloud-nodepool" {
					got.Objects = append(got.Objects, o)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\nresults: %v", tc.reason, diff, s.Results)
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
