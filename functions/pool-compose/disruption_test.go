package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// disruptionEnvironment is the burstpool EnvironmentConfig of these
// tests: the cluster's settings (indented two spaces), with pools of every
// namespace allowed to attach QueryServices of every namespace.
func disruptionEnvironment(settings string) []string {
	return []string{environmentConfig(DefaultEnvironmentConfig, settings+"  "+attachAnywhere)}
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
		"Karpenter":   {"Karpenter honours do-not-disrupt.", "aws", map[string]any{annotationDoNotDisrupt: "true"}},
		"EKSAutoMode": {"Auto Mode is Karpenter.", "eks-auto", map[string]any{annotationDoNotDisrupt: "true"}},
		"LKE":         {"LKE's autoscaler is the Cluster Autoscaler.", "lke", map[string]any{annotationSafeToEvict: "false"}},
		"DOKS":        {"DOKS's autoscaler is the Cluster Autoscaler.", "doks", map[string]any{annotationSafeToEvict: "false"}},
		"CoreWeave":   {"CKS runs the Cluster Autoscaler.", "coreweave", map[string]any{annotationSafeToEvict: "false"}},
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
