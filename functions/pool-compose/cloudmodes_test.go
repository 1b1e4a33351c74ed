package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

var coreweaveCRDs = []string{decision.CRDCoreWeave}

// capacityAt is an observed PoolCapacity with running and pending
// executors.
func capacityAt(occupied, pending int) string {
	return fmt.Sprintf("apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: burst-capacity}\nstatus:\n  conditions: [{type: Ready, status: \"True\"}]\n  atProvider: {occupiedExecutors: %d, pendingExecutors: %d, nodes: {ready: 1}}\n", occupied, pending)
}

// coreweavePool is an observed CoreWeave NodePool.
func coreweavePool(name, itype string, target, current int, conds string) string {
	return fmt.Sprintf("apiVersion: compute.coreweave.com/v1alpha1\nkind: NodePool\nmetadata: {name: %s}\nspec: {instanceType: %s, targetNodes: %d, autoscaling: false}\nstatus:\n  currentNodes: %d\n  conditions: %s\n", name, itype, target, current, conds)
}

const (
	cwAllocated = `[{type: Accepted, status: "True", reason: Accepted}, {type: Allocated, status: "True", reason: Complete}]`
	cwUnder     = `[{type: Accepted, status: "True", reason: Accepted}, {type: Allocated, status: "False", reason: UnderTarget}]`
	cwReadyOnly = `[{type: Ready, status: "True"}]`
)

// TestRuleCoreWeave: a CoreWeave pool is ready when CoreWeave accepted it
// and allocated its nodes; burstpool sets targetNodes from warm slots,
// running and pending executors; a new instance type gets a new NodePool
// and the old one drains.
func TestRuleCoreWeave(t *testing.T) {
	spec := "  minExecutors: 2\n  maxExecutors: 20\n  executorsPerNode: 2\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n  instanceConfig: {instanceType: cd-gp-i64-erapids}\n  provisioning: {manageNodePool: true}\n"
	type want struct {
		Target   int64
		Ready    bool
		Name     string
		Draining map[string]any // name and targetNodes, nil when absent
	}
	cases := map[string]struct {
		reason   string
		spec     string
		observed map[string]string
		want     want
	}{
		"WarmSlotsOnly": {
			reason: "minExecutors 2 at 2 per node needs 1 node; nothing observed yet, so not ready.",
			want:   want{Target: 1, Name: "burst-nodepool"},
		},
		"RunningAndPending": {
			reason: "3 running (more than the 2 warm slots) and 2 pending executors at 2 per node need 3 nodes; Accepted and Allocated (Complete) make it ready.",
			observed: map[string]string{"capacity": capacityAt(3, 2),
				"cloud-nodepool": coreweavePool("burst-nodepool", "cd-gp-i64-erapids", 1, 1, cwAllocated)},
			want: want{Target: 3, Ready: true, Name: "burst-nodepool"},
		},
		"UnderTargetIsNotReady": {
			reason: "Allocated False (UnderTarget): the requested nodes are not all there.",
			observed: map[string]string{"capacity": capacityAt(0, 0),
				"cloud-nodepool": coreweavePool("burst-nodepool", "cd-gp-i64-erapids", 1, 0, cwUnder)},
			want: want{Target: 1, Name: "burst-nodepool"},
		},
		"ReadyConditionIsNotCoreWeaves": {
			reason:   "CoreWeave sets no Ready condition; one alone does not make the pool ready.",
			observed: map[string]string{"cloud-nodepool": coreweavePool("burst-nodepool", "cd-gp-i64-erapids", 1, 1, cwReadyOnly)},
			want:     want{Target: 1, Name: "burst-nodepool"},
		},
		"SuspendedKeepsRunningExecutorsNodes": {
			reason: "Suspended with 3 executors running at 2 per node: 2 nodes stay, no warm slots.",
			spec:   spec + "  suspend: true\n",
			observed: map[string]string{"capacity": capacityAt(3, 4),
				"cloud-nodepool": coreweavePool("burst-nodepool", "cd-gp-i64-erapids", 3, 3, cwAllocated)},
			want: want{Target: 2, Ready: true, Name: "burst-nodepool"},
		},
		"TypeChangeCreatesANewPool": {
			reason: "instanceType is immutable: the new type gets burst-cd-gp-i64-erapids-nodepool, and the old pool keeps its 2 nodes until the new one is ready.",
			observed: map[string]string{"capacity": capacityAt(0, 0),
				"cloud-nodepool": coreweavePool("burst-nodepool", "cd-gp-a192-genoa", 2, 2, cwAllocated)},
			want: want{Target: 1, Name: "burst-cd-gp-i64-erapids-nodepool", Draining: map[string]any{"name": "burst-nodepool", "targetNodes": int64(2)}},
		},
		"OldPoolDrainsOnceTheNewIsReady": {
			reason: "The new pool is Accepted and Allocated: the old one is asked for 0 nodes.",
			observed: map[string]string{"capacity": capacityAt(0, 0),
				"cloud-nodepool":          coreweavePool("burst-cd-gp-i64-erapids-nodepool", "cd-gp-i64-erapids", 1, 1, cwAllocated),
				"cloud-nodepool-draining": coreweavePool("burst-nodepool", "cd-gp-a192-genoa", 2, 2, cwAllocated)},
			want: want{Target: 1, Ready: true, Name: "burst-cd-gp-i64-erapids-nodepool", Draining: map[string]any{"name": "burst-nodepool", "targetNodes": int64(0)}},
		},
		"DrainedPoolIsDeleted": {
			reason: "The old pool has no nodes left: it is no longer desired, so Crossplane deletes it.",
			observed: map[string]string{"capacity": capacityAt(0, 0),
				"cloud-nodepool":          coreweavePool("burst-cd-gp-i64-erapids-nodepool", "cd-gp-i64-erapids", 1, 1, cwAllocated),
				"cloud-nodepool-draining": coreweavePool("burst-nodepool", "cd-gp-a192-genoa", 0, 0, cwAllocated)},
			want: want{Target: 1, Ready: true, Name: "burst-cd-gp-i64-erapids-nodepool"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sp := tc.spec
			if sp == "" {
				sp = spec
			}
			rsp := scenario{XR: xpool("burst", "pools", sp), QueryServices: allQS, CRDs: coreweaveCRDs, Observed: tc.observed}.run(t)
			cp := desired(rsp, "cloud-nodepool")
			if cp == nil {
				t.Fatalf("%s\nno CoreWeave NodePool desired: %v", tc.reason, results(rsp))
			}
			target := nestedNumber(cp.Object, "spec", "targetNodes")
			got := want{Target: target, Ready: rsp.GetDesired().GetResources()["cloud-nodepool"].GetReady().String() == "READY_TRUE", Name: cp.GetName()}
			if d := desired(rsp, "cloud-nodepool-draining"); d != nil {
				got.Draining = map[string]any{"name": d.GetName(), "targetNodes": nestedNumber(d.Object, "spec", "targetNodes")}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRuleSuspendedWithoutNodeRemoval: pools whose nodes burstpool does
// not remove (existing nodes, LKE) are Suspended once no executor or
// placeholder is left, not when their nodes are gone.
func TestRuleSuspendedWithoutNodeRemoval(t *testing.T) {
	static := basicSpec + "  nodeSelector: {pool: a}\n  provisioning: {method: static}\n  suspend: true\n"
	lke := basicSpec + "  provisioning: {method: lke, clusterId: \"123\", manageNodePool: true}\n  suspend: true\n"
	placeholders := func(n int) string {
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: burst-placeholder, namespace: pools}\nstatus: {replicas: %d}\n", n)
	}
	cases := map[string]struct {
		reason   string
		spec     string
		crds     []string
		observed map[string]string
		want     string
	}{
		"StaticWithExecutors": {
			reason: "One executor still runs on the existing nodes.",
			spec:   static, crds: kwokCRDs, observed: map[string]string{"capacity": capacityAt(1, 0)},
			want: "Suspending",
		},
		"StaticNotObservedYet": {
			reason: "The PoolCapacity has not reported yet, so no one knows whether executors still run.",
			spec:   static, crds: kwokCRDs,
			want: "Suspending",
		},
		"StaticDrained": {
			reason: "No executor and no placeholder: the existing nodes stay, but the pool is Suspended.",
			spec:   static, crds: kwokCRDs, observed: map[string]string{"capacity": capacityAt(0, 0), "placeholder": placeholders(0)},
			want: "Suspended",
		},
		"LKEPlaceholderLeft": {
			reason: "A placeholder pod is still there.",
			spec:   lke, crds: linodeCRDs, observed: map[string]string{"capacity": capacityAt(0, 0), "placeholder": placeholders(1)},
			want: "Suspending",
		},
		"LKEDrained": {
			reason: "An LKE pool at its minimum keeps its node; with no executor or placeholder it is Suspended.",
			spec:   lke, crds: linodeCRDs, observed: map[string]string{"capacity": capacityAt(0, 0), "placeholder": placeholders(0)},
			want: "Suspended",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{XR: xpool("burst", "pools", tc.spec), QueryServices: allQS, CRDs: tc.crds, Observed: tc.observed}.run(t)
			if got := status(rsp)["phase"]; got != tc.want {
				t.Errorf("%s\nphase %v, want %s (%v)", tc.reason, got, tc.want, status(rsp)["message"])
			}
		})
	}
}

// TestRuleAzureFamilyCheckEqualsTheAPI evaluates the Pool CRD's own CEL
// rule on pairs of type and family and requires Validate to agree.
func TestRuleAzureFamilyCheckEqualsTheAPI(t *testing.T) {
	reg, err := schemacheck.Load("../../apis/crds/e6data.io_pools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2]string{
		{"r7gd.8xlarge", "r7gd"}, {"r6gd.8xlarge", "r7gd"},
		{"Standard_E16ds_v5", "Edsv5"}, {"Standard_E16pds_v5", "Edsv5"}, {"Standard_E16ds_v4", "Edsv5"},
		{"Standard_D8s_v5", "Edsv5"}, {"Standard_E16ds_v5", "Ev"}, {"Standard_E16ds_v5", "E_v5"},
		{"Standard_L8s_v3", "Lsv3"}, {"n2-highmem-8", "n2-highmem"}, {"g6-dedicated-8", "g6-dedicated"},
	}
	for _, p := range pairs {
		spec := "  maxExecutors: 4\n  allowedQueryServices: [{name: a}]\n  instanceConfig: {instanceType: " + p[0] + ", instanceFamily: " + p[1] + "}\n"
		u := &unstructured.Unstructured{Object: map[string]any{}}
		y := "apiVersion: e6data.io/v1alpha1\nkind: Pool\nmetadata: {name: p, namespace: pools}\nspec:\n" + spec
		if err := yamlInto(y, &u.Object); err != nil {
			t.Fatal(err)
		}
		apiErr := reg.Validate(u)
		if apiErr != nil && !strings.Contains(apiErr.Error(), "must belong to instanceConfig.instanceFamily") {
			t.Fatalf("type %s, family %s: the API refuses the pool for another reason: %v", p[0], p[1], apiErr)
		}
		apiOK := apiErr == nil
		fnErr := decision.Validate("p", decodeSpec(t, spec))
		if fnOK := len(fnErr) == 0; fnOK != apiOK {
			t.Errorf("type %s, family %s: the API says ok=%v (%v), the function ok=%v (%v)", p[0], p[1], apiOK, apiErr, fnOK, fnErr)
		}
		for _, e := range fnErr {
			if e.Field != "spec.instanceConfig.instanceType" {
				t.Errorf("type %s, family %s: the function refuses %s, want spec.instanceConfig.instanceType", p[0], p[1], e.Field)
			}
		}
	}
}

// TestRuleBoundsDoNotOverflow: maxExecutors near the int32 limit gives
// the right node count and leaves out CPU and memory limits that would
// not fit an int64.
func TestRuleBoundsDoNotOverflow(t *testing.T) {
	cases := map[string]struct {
		reason string
		max    int64
		epn    int
		want   map[string]any
	}{
		"MaxInt32OnePerNode": {
			reason: "2147483647 executors, one per node: as many nodes; 16 CPU x 2147483647 fits, 128Gi x 2147483647 (2.9e20 bytes) does not, so only nodes bounds the pool.",
			max:    2147483647, epn: 1,
			want: map[string]any{"nodes": "2147483647"},
		},
		"MaxInt32ThreePerNode": {
			reason: "2147483647 executors at 3 per node: 715827883 nodes (the int32 sum max + 3 - 1 used to overflow).",
			max:    2147483647, epn: 3,
			want: map[string]any{"nodes": "715827883"},
		},
		"Ordinary": {
			reason: "8 executors at 3 per node: 3 nodes of 16 CPU / 128Gi.",
			max:    8, epn: 3,
			want: map[string]any{"nodes": "3", "cpu": "48", "memory": "384Gi"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := fmt.Sprintf("  maxExecutors: %d\n  executorsPerNode: %d\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n", tc.max, tc.epn)
			// A platform that lifts the executor cap (tenancy.maxExecutors)
			// still gets NodePool limits that fit their fields.
			in := testInput + "  maxExecutors: 2147483647\n"
			rsp := scenario{Input: in, XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: kwokCRDs}.run(t)
			np := desired(rsp, "nodepool")
			if np == nil {
				t.Fatalf("%s\nno NodePool: %v", tc.reason, results(rsp))
			}
			got, _, _ := unstructured.NestedMap(np.Object, "spec", "limits")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nlimits: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRuleQueryServiceWithoutRequests: a QueryService that requests no
// CPU or memory is incompatible, and the message says what to set.
func TestRuleQueryServiceWithoutRequests(t *testing.T) {
	noReq := "apiVersion: e6data.io/v1alpha1\nkind: QueryService\nmetadata: {name: analytics, namespace: team-a}\nspec:\n  executor:\n    image: ghcr.io/e6data/executor:3.1\n    poolRef: {name: burst, namespace: pools}\n"
	rsp := scenario{XR: xpool("burst", "pools", basicSpec+"  instanceConfig: {instanceFamily: r7gd}\n"), QueryServices: []string{noReq, qsReporting}, CRDs: awsCRDs, Catalog: true}.run(t)
	found := false
	for _, a := range asList(status(rsp)["attachedQueryServices"]) {
		m := a.(map[string]any)
		if ref, _ := m["queryService"].(map[string]any); ref["name"] != "analytics" {
			continue
		}
		found = true
		msg, _ := m["message"].(string)
		if m["compatible"] == true || !strings.Contains(msg, "set spec.executor.resources.cpu and spec.executor.resources.memory") {
			t.Errorf("a QueryService without requests: compatible=%v message %q, want incompatible with what to set", m["compatible"], msg)
		}
	}
	if !found {
		t.Errorf("status.attachedQueryServices does not report team-a/analytics")
	}
	// reporting (4 CPU / 30Gi) sizes the pool alone: r7gd.2xlarge (7.7
	// CPU / 56.8Gi allocatable).
	if got := status(rsp)["derivedInstanceType"]; got != "r7gd.2xlarge" {
		t.Errorf("derivedInstanceType %v, want r7gd.2xlarge", got)
	}
}

// yamlInto decodes YAML into v.
func yamlInto(y string, v any) error { return yaml.Unmarshal([]byte(y), v) }

// decodeSpec decodes a Pool spec written as XPool spec lines.
func decodeSpec(t *testing.T, spec string) poolv1alpha1.PoolSpec {
	t.Helper()
	var s poolv1alpha1.PoolSpec
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll("\n"+spec, "\n  ", "\n")), &s); err != nil {
		t.Fatal(err)
	}
	return s
}
