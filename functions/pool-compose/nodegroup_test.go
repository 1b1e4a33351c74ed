package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
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
			rsp := scenario{Input: nodeGroupInputYAML(), XR: xpool("burst", "pools", sp), QueryServices: allQS, CRDs: []string{decision.CRDEKSNodeGroup}, Observed: tc.observed}.run(t)
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
		"Chosen": {"With the CRD the group is composed, and the condition names the settings and the CRD.", []string{decision.CRDEKSNodeGroup},
			"aws node group burst-nodegroup holds 0 to 4 m-16x-amd64-linux/on-demand node(s), scaled by the Cluster Autoscaler (method node-group from settings nodeGroups.eks and CRD nodegroups.eks.aws.upbound.io, without Karpenter)"},
		"CRDMissing": {"Without the CRD the pool keeps the existing-nodes path's message, and says which CRD it waits for.", nil,
			"the cluster provisions nodes with static, which burstpool does not manage for this pool: set spec.nodeSelector to pick the pool's nodes (or spec.provisioning.manageNodePool to create them); no node provisioning CRD installed; settings nodeGroups.eks is set but CRD nodegroups.eks.aws.upbound.io is not installed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: nodeGroupInputYAML(), XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: tc.crds}.run(t)
			var got string
			for _, c := range rsp.GetConditions() {
				if c.GetType() == decision.CondProvisioned {
					got = c.GetMessage()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
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
	crds := []string{decision.CRDNodePool, decision.CRDEC2NodeClass, decision.CRDEKSNodeGroup}
	cases := map[string]struct {
		reason string
		input  string
		want   summary
	}{
		"NotGranted": {"testInput's tenancy grants every method but node-group: the claim is refused, naming the field.", settings,
			summary{Phase: "Failed", Conditions: map[string]string{decision.CondProvisioned: "FALSE/ClaimNotAllowed"}}},
		"Granted": {"With node-group granted, the pool gets its node group from the settings.", nodeGroupInputYAML(),
			summary{Objects: []string{"cloud-nodepool"}, Phase: "Creating", Conditions: map[string]string{decision.CondProvisioned: "TRUE/NodeGroup"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: tc.input, XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: crds}.run(t)
			s := summarize(rsp, tc.want)
			got := summary{Phase: s.Phase, Conditions: map[string]string{decision.CondProvisioned: s.Conditions[decision.CondProvisioned]}}
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

// eksGroup is an observed EKS NodeGroup of template (decision.AnnotationNodeTemplate)
// whose Ready condition is ready and that reports desired nodes.
func eksGroup(name, template string, ready bool, desired int) string {
	status := "False"
	if ready {
		status = "True"
	}
	return fmt.Sprintf("apiVersion: eks.aws.upbound.io/v1beta1\nkind: NodeGroup\nmetadata:\n  name: %s\n  annotations: {%s: %q}\nspec:\n  forProvider: {amiType: AL2023_x86_64_STANDARD}\nstatus:\n  conditions: [{type: Ready, status: %q}]\n  atProvider: {scalingConfig: [{desiredSize: %d}]}\n",
		name, decision.AnnotationNodeTemplate, template, status, desired)
}
