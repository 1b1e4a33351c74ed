package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
)

// disruptionEnvironment is the burstpool EnvironmentConfig of these
// tests: the cluster's settings (indented two spaces), with pools of every
// namespace allowed to attach QueryServices of every namespace.
func disruptionEnvironment(settings string) []string {
	return []string{environmentConfig(decision.DefaultEnvironmentConfig, settings+"  "+attachAnywhere)}
}

// nodePoolDisruption is what of a NodePool decides when Karpenter takes
// its nodes.
type nodePoolDisruption struct {
	Budgets                  []any
	ExpireAfter, GracePeriod string
}

func disruptionOf(np *unstructured.Unstructured) nodePoolDisruption {
	b, _, _ := unstructured.NestedSlice(np.Object, "spec", "disruption", "budgets")
	e, _, _ := unstructured.NestedString(np.Object, "spec", "template", "spec", "expireAfter")
	g, _, _ := unstructured.NestedString(np.Object, "spec", "template", "spec", "terminationGracePeriod")
	return nodePoolDisruption{Budgets: b, ExpireAfter: e, GracePeriod: g}
}

// TestNoDisruptionUnderExecutors replays what used to take a node from
// under running executors: a drift (a new AMI, instance type or node role)
// drained every drifted node at the one 10% budget, and expiry drained
// nodes with no terminationGracePeriod. Karpenter v1.14.1 budgets apply per
// reason (NodePool CRD spec.disruption.budgets[].reasons: Underutilized,
// Empty, Drifted); with a terminationGracePeriod set, drift drains a node
// even when its pods carry karpenter.sh/do-not-disrupt and deletes them
// when the period ends (pkg/controllers/disruption/types.go, drift is the
// "eventual" class), so only a zero Drifted budget keeps drift off nodes
// that run executors. Expiry ignores budgets; terminationGracePeriod is
// how long running executors get.
func TestNoDisruptionUnderExecutors(t *testing.T) {
	budgets := []any{
		map[string]any{"nodes": "100%", "reasons": []any{"Empty"}},
		map[string]any{"nodes": "0", "reasons": []any{"Drifted", "Underutilized"}},
	}
	cases := map[string]struct {
		reason   string
		crds     []string
		settings string
		want     nodePoolDisruption
	}{
		"Defaults": {
			reason: "Empty nodes go, drift and consolidation never start on a node, and expiry gives running executors a day.",
			crds:   awsCRDs,
			want:   nodePoolDisruption{Budgets: budgets, ExpireAfter: "720h", GracePeriod: "24h"},
		},
		"GraceFromSettings": {
			reason:   "karpenter.terminationGracePeriod says how long a query may need.",
			crds:     awsCRDs,
			settings: "  karpenter: {terminationGracePeriod: 6h}\n",
			want:     nodePoolDisruption{Budgets: budgets, ExpireAfter: "720h", GracePeriod: "6h"},
		},
		"GraceNever": {
			reason:   "Never leaves terminationGracePeriod unset: Karpenter waits for do-not-disrupt executors without limit.",
			crds:     awsCRDs,
			settings: "  karpenter: {terminationGracePeriod: Never}\n",
			want:     nodePoolDisruption{Budgets: budgets, ExpireAfter: "720h"},
		},
		"AutoModeFitsLifetime": {
			reason:   "On EKS Auto Mode a 48h grace period shortens expireAfter to 456h, so both fit its 21 days.",
			crds:     autoModeCRDs,
			settings: "  karpenter: {terminationGracePeriod: 48h}\n",
			want:     nodePoolDisruption{Budgets: budgets, ExpireAfter: "456h", GracePeriod: "48h"},
		},
		"AutoModeNever": {
			reason:   "Auto Mode needs a bound: Never there means its own 24h default.",
			crds:     autoModeCRDs,
			settings: "  karpenter: {terminationGracePeriod: Never}\n",
			want:     nodePoolDisruption{Budgets: budgets, ExpireAfter: "480h", GracePeriod: "24h"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: shippedInput(t), Environment: disruptionEnvironment(clusterSettings + tc.settings),
				XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: tc.crds}.run(t)
			np := desired(rsp, "nodepool")
			if np == nil {
				t.Fatalf("%s\nno NodePool: %v", tc.reason, results(rsp))
			}
			if diff := cmp.Diff(tc.want, disruptionOf(np)); diff != "" {
				t.Errorf("%s\nNodePool disruption: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestExecutorsCarryWhatKeepsTheirNode replays an executor's node taken
// while it runs: Karpenter disrupts nodes whose pods lack
// karpenter.sh/do-not-disrupt (docs concepts/disruption, "Pod-Level
// Controls"), and the Cluster Autoscaler that scales LKE, DOKS and
// CoreWeave node pools removes under-used nodes unless a pod on them is
// annotated cluster-autoscaler.kubernetes.io/safe-to-evict: "false"
// (cluster-autoscaler FAQ, "What types of pods can prevent CA from removing
// a node?"). status.executorScheduling tells the QueryService operator
// what executors carry; the pool's placeholders carry neither, so executors
// preempt them and a node that holds only placeholders stays free to go.
func TestExecutorsCarryWhatKeepsTheirNode(t *testing.T) {
	cases := map[string]struct {
		reason string
		env    string
		want   map[string]any
	}{
		"Karpenter":   {"Karpenter honours do-not-disrupt.", "aws", map[string]any{decision.AnnotationDoNotDisrupt: "true"}},
		"EKSAutoMode": {"Auto Mode is Karpenter.", "eks-auto", map[string]any{decision.AnnotationDoNotDisrupt: "true"}},
		"LKE":         {"LKE's autoscaler is the Cluster Autoscaler.", "lke", map[string]any{decision.AnnotationSafeToEvict: "false"}},
		"DOKS":        {"DOKS's autoscaler is the Cluster Autoscaler.", "doks", map[string]any{decision.AnnotationSafeToEvict: "false"}},
		"CoreWeave":   {"CKS runs the Cluster Autoscaler.", "coreweave", map[string]any{decision.AnnotationSafeToEvict: "false"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := environments[tc.env]
			settings := clusterSettings
			if env.settings != "" {
				settings = env.settings
			}
			spec := basicSpec
			if tc.env == "coreweave" {
				spec += "  instanceConfig: {instanceType: cd-gp-i64-erapids}\n"
			}
			rsp := scenario{Input: shippedInput(t), Environment: disruptionEnvironment(settings),
				XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: env.crds}.run(t)
			got, _, _ := unstructured.NestedMap(status(rsp), "executorScheduling", "annotations")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nstatus.executorScheduling.annotations: -want, +got:\n%s", tc.reason, diff)
			}
			ph := desired(rsp, "placeholder")
			if ph == nil {
				t.Fatalf("%s\nno placeholder Deployment: %v", tc.reason, results(rsp))
			}
			a, _, _ := unstructured.NestedStringMap(ph.Object, "spec", "template", "metadata", "annotations")
			for k := range tc.want {
				if _, ok := a[k]; ok {
					t.Errorf("%s\nplaceholders carry %s; they must stay preemptible and their nodes free to go", tc.reason, k)
				}
			}
		})
	}
}

// TestNodeImagePinned replays a node image release draining every pool
// node: an EC2NodeClass alias of @latest drifts its nodes whenever AWS
// publishes an AMI (Karpenter docs, concepts/nodeclasses, amiSelectorTerms:
// "heavily recommend" against @latest outside pre-production). The default
// names a release; a platform rolls a new one by changing aws.amiAlias.
func TestNodeImagePinned(t *testing.T) {
	cases := map[string]struct {
		reason   string
		settings string
		want     string
	}{
		"DefaultPinned": {reason: "The default alias names an AMI release (awslabs/amazon-eks-ami v20260724).", want: "al2023@v20260724"},
		"SettingRolls":  {reason: "A platform rolls a new AMI by naming it.", settings: "  aws: {role: r, amiAlias: al2023@v20260709}\n", want: "al2023@v20260709"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: shippedInput(t), Environment: disruptionEnvironment(clusterSettings + tc.settings),
				XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs}.run(t)
			nc := desired(rsp, "nodeclass")
			if nc == nil {
				t.Fatalf("%s\nno NodeClass: %v", tc.reason, results(rsp))
			}
			terms, _, _ := unstructured.NestedSlice(nc.Object, "spec", "amiSelectorTerms")
			got := []any{}
			for _, term := range terms {
				got = append(got, term.(map[string]any)["alias"])
			}
			if diff := cmp.Diff([]any{tc.want}, got); diff != "" {
				t.Errorf("%s\namiSelectorTerms aliases: -want, +got:\n%s", tc.reason, diff)
			}
			for _, a := range got {
				if s, _ := a.(string); strings.HasSuffix(s, "@latest") {
					t.Errorf("%s\nthe alias %s drifts every node at each release", tc.reason, s)
				}
			}
		})
	}
}

// nodePoolTypes are the instance types of a NodePool's requirement and its
// minValues (0 when unset).
func nodePoolTypes(np *unstructured.Unstructured) ([]string, int64) {
	reqs, _, _ := unstructured.NestedSlice(np.Object, "spec", "template", "spec", "requirements")
	for _, r := range reqs {
		m := r.(map[string]any)
		if m["key"] != objects.LabelInstanceType {
			continue
		}
		var out []string
		for _, v := range m["values"].([]any) {
			out = append(out, v.(string))
		}
		// Desired objects come back through protobuf's Struct, whose
		// numbers are float64.
		mv, _ := m["minValues"].(float64)
		return out, int64(mv)
	}
	return nil, 0
}

// TestSpotSurvivesADryMarket replays one spot market running dry under a
// pool: a spot pool offered one instance type (a family kept to its own
// sizes), so Karpenter had nothing
// else to launch and the burst stopped. Karpenter's guidance is to "allow
// Karpenter to provision as many distinct instance types as possible"
// (docs concepts/nodepools, spot); every type offered holds the pool's
// executorsPerNode executors, so the NodePool's limits, counted in nodes
// of the largest type, keep that number. Warm slots hold on on-demand
// nodes, and a spot pool on AWS Karpenter warns without an interruption
// queue (karpenter-provider-aws docs, concepts/disruption, "Interruption").
func TestSpotSurvivesADryMarket(t *testing.T) {
	type want struct {
		Types      []string
		MinValues  int64
		WarmOn     string
		QueueAlarm bool
	}
	cases := map[string]struct {
		reason   string
		spec     string
		settings string
		want     want
	}{
		"PinnedTypeGetsItsEqualsWhereAllowed": {
			reason:   "The reference's 4.2 pins r7gd.16xlarge on spot; where the settings allow stand-ins, r6gd.16xlarge has the same 64 vCPU / 512Gi and local NVMe, and holds the same executor; the catalog has no third (metal is not offered).",
			spec:     "  maxExecutors: 50\n  executorsPerNode: 1\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceType: r7gd.16xlarge, spotEnabled: true}\n",
			settings: "  karpenter: {pinnedTypeStandIns: true}\n",
			want:     want{Types: []string{"r7gd.16xlarge", "r6gd.16xlarge"}, WarmOn: objects.CapacityOnDemand, QueueAlarm: true},
		},
		"PinnedTypeAlone": {
			reason: "By default a pinned type is exact: r7gd.16xlarge alone, spot or not.",
			spec:   "  maxExecutors: 50\n  executorsPerNode: 1\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceType: r7gd.16xlarge, spotEnabled: true}\n",
			want:   want{Types: []string{"r7gd.16xlarge"}, WarmOn: objects.CapacityOnDemand, QueueAlarm: true},
		},
		"FamilyWidensToGenerations": {
			reason: "An r7gd pool: of r7gd only the 4xlarge holds exactly one 8 CPU / 60Gi executor (the 8xlarge holds two), so r6gd.4xlarge joins; no other family, since the pool names r7gd.",
			spec:   "  minExecutors: 2\n  maxExecutors: 8\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceFamily: r7gd, spotEnabled: true}\n",
			want:   want{Types: []string{"r7gd.4xlarge", "r6gd.4xlarge"}, WarmOn: objects.CapacityOnDemand, QueueAlarm: true},
		},
		"CatalogOffersThree": {
			reason: "A pool sized from the catalog offers at least three types that each hold its executors, and asks Karpenter for two of them in every launch.",
			spec:   "  minExecutors: 2\n  maxExecutors: 8\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {spotEnabled: true}\n",
			want:   want{MinValues: objects.SpotMinValues, WarmOn: objects.CapacityOnDemand, QueueAlarm: true},
		},
		"QueueNamed": {
			reason:   "A named interruption queue silences the warning.",
			spec:     "  maxExecutors: 50\n  executorsPerNode: 1\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceType: r7gd.16xlarge, spotEnabled: true}\n",
			settings: "  karpenter: {interruptionQueue: Karpenter-test-cluster}\n",
			want:     want{Types: []string{"r7gd.16xlarge"}, WarmOn: objects.CapacityOnDemand},
		},
		"OnDemandPoolUnchanged": {
			reason: "An on-demand pool offers its type alone, and its warm slots need no capacity type.",
			spec:   "  minExecutors: 2\n  maxExecutors: 8\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceType: r7gd.16xlarge}\n",
			want:   want{Types: []string{"r7gd.16xlarge"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: shippedInput(t), Environment: disruptionEnvironment(clusterSettings + tc.settings),
				XR: xpool("burst", "pools", tc.spec), QueryServices: allQS, CRDs: awsCRDs, Catalog: true}.run(t)
			np := desired(rsp, "nodepool")
			if np == nil {
				t.Fatalf("%s\nno NodePool: %v", tc.reason, results(rsp))
			}
			types, mv := nodePoolTypes(np)
			got := want{Types: types, MinValues: mv}
			if tc.want.Types == nil {
				if len(types) < sizing.SpotMinTypes {
					t.Errorf("%s\nthe NodePool offers %v, fewer than %d types", tc.reason, types, sizing.SpotMinTypes)
				}
				got.Types = nil
			}
			if ph := desired(rsp, "placeholder"); ph != nil {
				got.WarmOn, _, _ = unstructured.NestedString(ph.Object, "spec", "template", "spec", "nodeSelector", objects.LabelCapacityType)
			}
			for _, r := range results(rsp) {
				got.QueueAlarm = got.QueueAlarm || strings.Contains(r, "NoInterruptionQueue")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// cloudPoolScaling is what of a cloud node pool decides who sets its node
// count.
type cloudPoolScaling struct {
	ManagementPolicies []any
	NodeCount          any
	Autoscaling        any
	TargetNodes        any
	MinNodes, MaxNodes any
	ScaleDown          any
}

func cloudPoolScalingOf(u *unstructured.Unstructured) cloudPoolScaling {
	get := func(path ...string) any {
		v, _, _ := unstructured.NestedFieldCopy(u.Object, path...)
		if f, ok := v.(float64); ok { // numbers come back through protobuf's Struct
			return int64(f)
		}
		return v
	}
	mp, _ := get("spec", "managementPolicies").([]any)
	return cloudPoolScaling{
		ManagementPolicies: mp, NodeCount: get("spec", "forProvider", "nodeCount"),
		Autoscaling: get("spec", "autoscaling"), TargetNodes: get("spec", "targetNodes"),
		MinNodes: get("spec", "minNodes"), MaxNodes: get("spec", "maxNodes"),
		ScaleDown: get("spec", "lifecycle", "scaleDownStrategy"),
	}
}

// TestCloudPoolsLeaveTheCountToTheirAutoscaler replays a cloud node pool
// fighting its autoscaler. upjet late-initialises an autoscaled LKE or
// DOKS pool's nodeCount from the cloud and then sets the cloud back to it
// (provider-upjet-gcp #340 reports it for GKE); it late-initialises only
// under the LateInitialize or * management policy (crossplane/upjet
// pkg/controller/external.go), which provider-linode and
// provider-upjet-digitalocean honour by default (cmd/provider/main.go,
// --enable-management-policies). CKS runs a Cluster Autoscaler from
// Kubernetes 1.32 that moves targetNodes between minNodes and maxNodes,
// and scales down IdleOnly or PreferIdle (CoreWeave, "Autoscale Node
// Pools", lifecycle.scaleDownStrategy): burstpool must neither set
// targetNodes against it nor leave the strategy implicit.
func TestCloudPoolsLeaveTheCountToTheirAutoscaler(t *testing.T) {
	noLateInit := []any{"Observe", "Create", "Update", "Delete"}
	cwSpec := "  minExecutors: 2\n  maxExecutors: 20\n  executorsPerNode: 2\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n  instanceConfig: {instanceType: cd-gp-i64-erapids}\n  provisioning: {manageNodePool: true}\n"
	cases := map[string]struct {
		reason   string
		env      string
		settings string
		observed map[string]string
		want     cloudPoolScaling
	}{
		"LKEAutoscaled": {
			reason: "LKE's autoscaler owns the count: no nodeCount, and upjet does not late-initialise one.",
			env:    "lke",
			want:   cloudPoolScaling{ManagementPolicies: noLateInit},
		},
		"DOKSAutoscaled": {
			reason: "DOKS's autoscaler owns the count: no nodeCount, and upjet does not late-initialise one.",
			env:    "doks",
			want:   cloudPoolScaling{ManagementPolicies: noLateInit},
		},
		"CoreWeaveWithoutAutoscaler": {
			reason: "Without the cluster's autoscaler burstpool sets targetNodes (2 warm slots, 2 per node: 1 node), and scale-down is IdleOnly.",
			env:    "coreweave",
			want:   cloudPoolScaling{Autoscaling: false, TargetNodes: int64(1), ScaleDown: "IdleOnly"},
		},
		"CoreWeaveAutoscalerNew": {
			reason:   "With the autoscaler, a new pool starts at minNodes (the warm slots' 1 node), up to maxNodes (20 executors, 2 per node: 10).",
			env:      "coreweave",
			settings: "    coreWeaveAutoscaling: true\n",
			want:     cloudPoolScaling{Autoscaling: true, TargetNodes: int64(1), MinNodes: int64(1), MaxNodes: int64(10), ScaleDown: "IdleOnly"},
		},
		"CoreWeaveAutoscalerKeepsItsCount": {
			reason:   "The autoscaler moved targetNodes to 6 while 3 executors run: burstpool repeats 6 instead of setting 2.",
			env:      "coreweave",
			settings: "    coreWeaveAutoscaling: true\n",
			observed: map[string]string{"capacity": capacityAt(3, 0), "cloud-nodepool": coreweavePool("burst-nodepool", "cd-gp-i64-erapids", 6, 6, cwAllocated)},
			want:     cloudPoolScaling{Autoscaling: true, TargetNodes: int64(6), MinNodes: int64(1), MaxNodes: int64(10), ScaleDown: "IdleOnly"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := environments[tc.env]
			spec := basicSpec
			if tc.env == "coreweave" {
				spec = cwSpec
			}
			rsp := scenario{Input: shippedInput(t), Environment: disruptionEnvironment(env.settings + tc.settings),
				XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: env.crds, Observed: tc.observed}.run(t)
			cp := desired(rsp, "cloud-nodepool")
			if cp == nil {
				t.Fatalf("%s\nno cloud node pool: %v", tc.reason, results(rsp))
			}
			if diff := cmp.Diff(tc.want, cloudPoolScalingOf(cp)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
