package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/warmup"
)

// Test fixtures: two QueryServices the pool allows and one it does not.
var (
	qsAnalytics = qs("analytics", "team-a", "burst", "pools", "ghcr.io/e6data/executor:3.1", "8", "60Gi", map[string]string{"e6data.io/burst": "enabled"})
	qsReporting = qs("reporting", "team-b", "burst", "pools", "ghcr.io/e6data/executor:3.0", "4", "30Gi", nil)
	qsRogue     = qs("rogue", "team-c", "burst", "pools", "ghcr.io/e6data/executor:3.0", "4", "30Gi", map[string]string{qsv1alpha1.LabelPool: "burst"})
	qsElsewhere = qs("elsewhere", "team-d", "other", "pools", "ghcr.io/e6data/executor:2.9", "4", "30Gi", map[string]string{"e6data.io/burst": "enabled"})
	allQS       = []string{qsAnalytics, qsReporting, qsRogue, qsElsewhere}

	kwokCRDs   = []string{decision.CRDNodePool, decision.CRDKWOKNodeClass}
	awsCRDs    = []string{decision.CRDNodePool, decision.CRDEC2NodeClass}
	linodeCRDs = []string{decision.CRDLKE}
)

// basicSpec allows analytics and reporting.
const basicSpec = `  minExecutors: 2
  maxExecutors: 8
  allowedQueryServices:
  - {name: analytics, namespace: team-a}
  - {name: reporting, namespace: team-b}
`

// summary is what the table tests compare of a response.
type summary struct {
	Fatal      string
	Objects    []string
	Phase      string
	Conditions map[string]string
	Results    []string
}

// summarize reads the compared parts of rsp; conditions and results only
// for the keys (or reasons) want names, so each case states what it is
// about.
func summarize(rsp *fnv1.RunFunctionResponse, want summary) summary {
	var s summary
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			s.Fatal = r.GetMessage()
			if want.Fatal != "" && strings.Contains(s.Fatal, want.Fatal) {
				s.Fatal = want.Fatal
			}
		}
	}
	s.Objects = desiredNames(rsp)
	if st := status(rsp); st != nil {
		s.Phase, _ = st["phase"].(string)
	}
	got := conditions(rsp)
	if len(want.Conditions) > 0 {
		s.Conditions = map[string]string{}
		for k := range want.Conditions {
			s.Conditions[k] = got[k]
		}
	}
	for _, r := range results(rsp) {
		for _, w := range want.Results {
			if strings.HasPrefix(r, w) {
				s.Results = append(s.Results, w)
			}
		}
	}
	return s
}

func TestRunFunction(t *testing.T) {
	wd := "warmup-" + warmup.Hash("ghcr.io/e6data/executor:3.0")
	wa := "warmup-" + warmup.Hash("ghcr.io/e6data/executor:3.1")
	karpenterObjects := []string{"access-policy", "access-policy-binding", "capacity", "node-agent-priorityclass", "nodeclass", "nodepool", "placeholder", "placeholder-priorityclass", wd, wa}

	cases := map[string]struct {
		reason string
		s      scenario
		want   summary
	}{
		"FirstCallAsksForRequiredResources": {
			reason: "Before Crossplane supplies the QueryServices and CRDs, the function only asks for them and renders nothing new.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec), NoRequired: true},
			want:   summary{Objects: []string{}},
		},
		"FirstCallKeepsObservedObjects": {
			reason: "A call without the required resources must not drop the observed NodePool, NodeClass or DaemonSets.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), NoRequired: true, Observed: map[string]string{
				"nodepool":  "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nspec: {}\n",
				"nodeclass": "apiVersion: karpenter.kwok.sh/v1alpha1\nkind: KWOKNodeClass\nmetadata: {name: burst-nodeclass}\nspec: {}\n",
				wa:          "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: burst-warmup-x, namespace: pools}\nspec: {}\n",
			}},
			want: summary{Objects: []string{"nodeclass", "nodepool", wa}},
		},
		"OneUnsuppliedRequirementKeepsObservedObjects": {
			reason: "When one required resource is not supplied on a call, nothing is decided and every observed object is kept.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Unsupplied: []string{reqCRDPrefix + decision.CRDKWOKNodeClass}, Observed: map[string]string{
				"nodepool":  "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nspec: {}\n",
				"nodeclass": "apiVersion: karpenter.kwok.sh/v1alpha1\nkind: KWOKNodeClass\nmetadata: {name: burst-nodeclass}\nspec: {}\n",
				"capacity":  "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: burst-capacity}\nspec: {}\n",
				wa:          "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: burst-warmup-x, namespace: pools}\nspec: {}\n",
			}},
			want: summary{Objects: []string{"capacity", "nodeclass", "nodepool", wa}},
		},
		"QueryServicesUnsuppliedKeepsObservedObjects": {
			reason: "Without the QueryServices, auto-collected images would look unused: nothing is decided and warmup DaemonSets are kept.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Unsupplied: []string{reqQSPrefix + "team-a/analytics"}, Observed: map[string]string{
				wa: "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: burst-warmup-x, namespace: pools}\nspec: {}\n",
				wd: "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: burst-warmup-y, namespace: pools}\nspec: {}\n",
			}},
			want: summary{Objects: []string{wd, wa}},
		},
		"BadInputDurationIsPending": {
			reason: "An input value the API server would reject in the NodePool makes the pool Pending with the field to fix, and composes nothing.",
			s:      scenario{Input: testInput + "karpenter: {consolidateAfter: soon}\n", XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs},
			want:   summary{Objects: []string{}, Phase: "Pending", Conditions: map[string]string{decision.CondProvisioned: "FALSE/SettingsInvalid"}, Results: []string{"WARNING SettingsInvalid: the Composition's function input field karpenter.consolidateAfter \"soon\" is not a duration"}},
		},
		"KarpenterOnKWOK": {
			reason: "With Karpenter's kwok provider installed, the pool gets a NodePool, a KWOKNodeClass, placeholders, the PoolCapacity and one warmup DaemonSet per attached image.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs},
			want: summary{Objects: karpenterObjects, Phase: "Creating", Conditions: map[string]string{
				decision.CondProvisioned: "TRUE/KarpenterNodePool", decision.CondCompatible: "TRUE/AllCompatible", decision.CondImagesWarm: "FALSE/WarmupPending",
			}},
		},
		"KarpenterOnAWS": {
			reason: "With the EC2NodeClass CRD installed, the pool is a Karpenter pool on AWS.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs},
			want:   summary{Objects: karpenterObjects, Phase: "Creating", Conditions: map[string]string{decision.CondProvisioned: "TRUE/KarpenterNodePool"}},
		},
		"AWSWithoutRoleIsPending": {
			reason: "An AWS pool whose settings lack a node role is Pending before anything is composed, names the EnvironmentConfig field, and keeps every observed object.",
			s: scenario{Input: "apiVersion: pool.fn.burstpool.io/v1beta1\nkind: Input\nclusterName: c\n", XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
				Observed: map[string]string{
					"nodepool": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nspec: {}\n",
					wa:         "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: burst-warmup-x, namespace: pools}\nspec: {}\n",
				}},
			want: summary{Objects: []string{"nodepool", wa}, Phase: "Pending", Conditions: map[string]string{decision.CondProvisioned: "FALSE/SettingsMissing"},
				Results: []string{"WARNING SettingsMissing: EnvironmentConfig burstpool field data.aws.role is required on AWS with Karpenter"}},
		},
		"EnvironmentConfigCompletesAWS": {
			reason: "The node role and cluster name from the EnvironmentConfig complete an input that has neither.",
			s: scenario{Input: "apiVersion: pool.fn.burstpool.io/v1beta1\nkind: Input\n" + attachAnywhere, XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
				Environment: []string{environmentConfig("burstpool", "  clusterName: prod\n  aws: {role: KarpenterNodeRole-prod}\n")}},
			want: summary{Objects: karpenterObjects, Phase: "Creating", Conditions: map[string]string{decision.CondProvisioned: "TRUE/KarpenterNodePool"}},
		},
		"BadEnvironmentValueIsPending": {
			reason: "A bad value in the EnvironmentConfig names its data field, makes the pool Pending and keeps what exists.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs,
				Environment: []string{environmentConfig("burstpool", "  karpenter: {weight: 200}\n")},
				Observed:    map[string]string{"nodepool": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nspec: {}\n"}},
			want: summary{Objects: []string{"nodepool"}, Phase: "Pending", Conditions: map[string]string{decision.CondProvisioned: "FALSE/SettingsInvalid"},
				Results: []string{"WARNING SettingsInvalid: EnvironmentConfig burstpool field data.karpenter.weight 200 is not between 1 and 100"}},
		},
		"UnknownEnvironmentSettingIsPending": {
			reason: "A typo in the EnvironmentConfig is named, not ignored.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs,
				Environment: []string{environmentConfig("burstpool", "  aws: {rol: x}\n")}},
			want: summary{Objects: []string{}, Phase: "Pending", Conditions: map[string]string{decision.CondProvisioned: "FALSE/SettingsInvalid"},
				Results: []string{"WARNING SettingsInvalid: EnvironmentConfig burstpool field data.aws.rol is not a setting"}},
		},
		"WrongTypeInEnvironmentIsPending": {
			reason: "A value of the wrong type in the EnvironmentConfig names its field.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs,
				Environment: []string{environmentConfig("burstpool", "  karpenter: {weight: heavy}\n")}},
			want: summary{Objects: []string{}, Phase: "Pending", Conditions: map[string]string{decision.CondProvisioned: "FALSE/SettingsInvalid"},
				Results: []string{"WARNING SettingsInvalid: EnvironmentConfig burstpool field data.karpenter.weight must be a int32"}},
		},
		"EnvironmentUnsuppliedKeepsObservedObjects": {
			reason: "Until Crossplane supplies the EnvironmentConfig, nothing is decided and observed objects are kept.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Unsupplied: []string{reqEnvironment},
				Observed: map[string]string{"nodepool": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nspec: {}\n"}},
			want: summary{Objects: []string{"nodepool"}},
		},
		"LinodeWithoutNodeSelectorIsPending": {
			reason: "Where burstpool does not create nodes, a pool without nodeSelector is Pending with a condition that says to set it.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: linodeCRDs},
			want:   summary{Objects: []string{}, Phase: "Pending", Conditions: map[string]string{decision.CondProvisioned: "FALSE/NodeSelectorRequired"}},
		},
		"LinodeWithNodeSelector": {
			reason: "A Linode pool with nodeSelector uses the existing LKE nodes.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  nodeSelector: {lke.linode.com/pool-id: \"42\"}\n"), QueryServices: allQS, CRDs: linodeCRDs},
			want:   summary{Objects: []string{"access-policy", "access-policy-binding", "capacity", "node-agent-priorityclass", "placeholder", "placeholder-priorityclass", wd, wa}, Phase: "Creating", Conditions: map[string]string{decision.CondProvisioned: "TRUE/ExistingNodes"}},
		},
		"LinodeManaged": {
			reason: "With manageNodePool the pool gets an LKE node pool sized from min and max executors.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  provisioning: {manageNodePool: true}\n"), QueryServices: allQS, CRDs: linodeCRDs},
			want:   summary{Objects: []string{"access-policy", "access-policy-binding", "capacity", "cloud-nodepool", "node-agent-priorityclass", "placeholder", "placeholder-priorityclass", wd, wa}, Phase: "Creating", Conditions: map[string]string{decision.CondProvisioned: "TRUE/CloudNodePool"}},
		},
		"ProvisioningOverridesDetection": {
			reason: "spec.provisioning picks the method even when other CRDs are installed.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  nodeSelector: {pool: a}\n  provisioning: {method: static}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			want:   summary{Objects: []string{"access-policy", "access-policy-binding", "capacity", "node-agent-priorityclass", "placeholder", "placeholder-priorityclass", wd, wa}, Conditions: map[string]string{decision.CondProvisioned: "TRUE/ExistingNodes"}, Phase: "Creating"},
		},
		"InvalidSpecIsFatal": {
			reason: "A spec that bypassed the schema (maxExecutors 0) is refused with a message naming the field.",
			s:      scenario{XR: xpool("burst", "pools", "  maxExecutors: 0\n  allowedQueryServices: [{name: a}]\n"), QueryServices: allQS, CRDs: kwokCRDs},
			want:   summary{Fatal: "spec.maxExecutors is 0: set it to at least 1", Objects: []string{}},
		},
		"UnknownInputFieldIsFatal": {
			reason: "A typo in the Composition's input is refused, not ignored.",
			s:      scenario{Input: "apiVersion: pool.fn.burstpool.io/v1beta1\nkind: Input\nclustrName: x\n", XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs},
			want:   summary{Fatal: "cannot read the function input", Objects: []string{}},
		},
		"UnknownInstanceTypeFails": {
			reason: "An instance type the catalog lacks makes the pool Failed and keeps its observed NodePool and NodeClass.",
			s: scenario{XR: xpool("burst", "pools", basicSpec+"  instanceConfig: {instanceType: no-such-type}\n"), QueryServices: allQS, CRDs: kwokCRDs,
				Observed: map[string]string{
					"nodepool":  "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nspec: {}\n",
					"nodeclass": "apiVersion: karpenter.kwok.sh/v1alpha1\nkind: KWOKNodeClass\nmetadata: {name: burst-nodeclass}\nspec: {}\n",
				}},
			want: summary{Objects: []string{"access-policy", "access-policy-binding", "capacity", "node-agent-priorityclass", "nodeclass", "nodepool", wd, wa}, Phase: "Failed", Conditions: map[string]string{decision.CondProvisioned: "FALSE/SizingFailed"}},
		},
		"SelectorAttachesAcrossNamespaces": {
			reason: "queryServiceSelector allows matching QueryServices in any namespace; only those pointing here attach, and one pointing here but not allowed is reported.",
			s:      scenario{XR: xpool("burst", "pools", "  maxExecutors: 4\n  queryServiceSelector: {matchExpressions: [{key: e6data.io/burst, operator: In, values: [enabled]}]}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			want:   summary{Objects: []string{"access-policy", "access-policy-binding", "capacity", "node-agent-priorityclass", "nodeclass", "nodepool", "placeholder", "placeholder-priorityclass", wa}, Phase: "Creating"},
		},
		"PullSecretElsewhereWarns": {
			reason: "An imagePullSecret outside the pool namespace is reported and not used.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  imageConfig: {imagePullSecrets: [{name: regcred, namespace: other}, {name: local}]}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			want: summary{Objects: karpenterObjects, Phase: "Creating", Conditions: map[string]string{decision.CondPullSecrets: "FALSE/SecretNotInPoolNamespace"},
				Results: []string{"WARNING SecretNotInPoolNamespace: imageConfig.imagePullSecrets other/regcred is not in the pool namespace pools"}},
		},
		"NoAttachedQueryServiceIsPending": {
			reason: "Without an attached QueryService or an instance type there is nothing to size: Pending, with what to do.",
			s:      scenario{XR: xpool("burst", "pools", "  maxExecutors: 4\n  allowedQueryServices: [{name: nobody, namespace: x}]\n"), QueryServices: allQS, CRDs: kwokCRDs},
			want:   summary{Objects: []string{"access-policy", "access-policy-binding", "capacity"}, Phase: "Pending", Conditions: map[string]string{decision.CondProvisioned: "FALSE/NoInstanceType", decision.CondCompatible: "FALSE/NoneAttached"}},
		},
		"EarlierStepsKept": {
			reason: "Objects that earlier pipeline steps desired are kept.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs,
				Desired: map[string]string{"extra": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: pools}\n"}},
			want: summary{Objects: append([]string{"access-policy", "access-policy-binding", "capacity", "extra"}, karpenterObjects[3:]...), Phase: "Creating"},
		},
		"EKSAutoMode": {
			reason: "With only EKS Auto Mode's NodeClass CRD, the pool gets an eks.amazonaws.com NodeClass.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: []string{decision.CRDNodePool, decision.CRDEKSNodeClass}},
			want:   summary{Objects: karpenterObjects, Phase: "Creating", Conditions: map[string]string{decision.CondProvisioned: "TRUE/KarpenterNodePool"}},
		},
		"CapacityNameTakenByAnotherNamespace": {
			reason: "A PoolCapacity named after the pool that another namespace's pool holds fails the claim, naming the owner, and composes nothing.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Existing: map[string]string{
				"capacity": "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: burst-capacity, labels: {e6data.io/pool: burst, e6data.io/pool-namespace: other}}\nspec: {}\n",
			}},
			want: summary{Objects: []string{}, Phase: "Failed", Conditions: map[string]string{decision.CondProvisioned: "FALSE/NameTaken"}},
		},
		"PriorityClassNameTakenOutsideBurstpool": {
			reason: "A PriorityClass of the pool's placeholder name that no pool made fails the claim too.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Existing: map[string]string{
				"placeholder-priorityclass": "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: burst-placeholder}\nvalue: 5\n",
			}},
			want: summary{Objects: []string{}, Phase: "Failed", Conditions: map[string]string{decision.CondProvisioned: "FALSE/NameTaken"}},
		},
		"OwnObjectsAreNotTaken": {
			reason: "The pool's own PoolCapacity (its identity labels) is not a clash.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Existing: map[string]string{
				"capacity": "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: burst-capacity, labels: {e6data.io/pool: burst, e6data.io/pool-namespace: pools}}\nspec: {}\n",
			}},
			want: summary{Objects: karpenterObjects, Phase: "Creating", Conditions: map[string]string{decision.CondProvisioned: "TRUE/KarpenterNodePool"}},
		},
		"OwnerRequirementUnsuppliedKeepsObservedObjects": {
			reason: "Until Crossplane supplies the PoolCapacity named after the pool, nothing is decided: a clash must be seen before anything is composed.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Unsupplied: []string{reqOwnerPrefix + string(objects.ComposedCapacity)}},
			want:   summary{Objects: []string{}},
		},
		"KarpenterWithoutNodeClassCRD": {
			reason: "Asking for Karpenter where its CRDs are missing fails with what to install.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  provisioning: {cloud: gcp, method: karpenter}\n"), QueryServices: allQS, CRDs: nil},
			want:   summary{Objects: []string{"access-policy", "access-policy-binding", "capacity", "node-agent-priorityclass", wd, wa}, Phase: "Failed", Conditions: map[string]string{decision.CondProvisioned: "FALSE/ProvisioningUnsupported"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := tc.s.run(t)
			got := summarize(rsp, tc.want)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s\nresults: %v", tc.reason, diff, results(rsp))
			}
			if tc.want.Fatal != "" {
				return
			}
			// Crossplane calls again until the requirements stabilize:
			// they must not change once it supplies them.
			first := tc.s
			first.NoRequired = true
			if diff := cmp.Diff(first.run(t).GetRequirements(), rsp.GetRequirements(), protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...).Requirements changed once supplied: -first call, +this call:\n%s", tc.reason, diff)
			}
		})
	}
}

// observe turns rsp's desired objects into observed ones, with status
// from statusOf (nil leaves none).
func observe(t testing.TB, rsp *fnv1.RunFunctionResponse, statusOf func(name string, u *unstructured.Unstructured) map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range desiredNames(rsp) {
		u := desired(rsp, n)
		if statusOf != nil {
			if st := statusOf(n, u); st != nil {
				u.Object["status"] = st
			}
		}
		b, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

// healthy is the status of a composed object that is ready.
func healthy(occupied, nodes int64) func(string, *unstructured.Unstructured) map[string]any {
	return func(n string, u *unstructured.Unstructured) map[string]any {
		ready := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		switch {
		case u.GetKind() == "DaemonSet":
			return map[string]any{"observedGeneration": int64(0), "desiredNumberScheduled": nodes, "numberReady": nodes}
		case n == "capacity":
			ready["atProvider"] = map[string]any{
				"totalExecutors": nodes, "occupiedExecutors": occupied, "availableExecutors": nodes - occupied,
				"nodes": map[string]any{"ready": nodes},
			}
			return ready
		case u.GetKind() == "NodePool":
			ready["nodes"] = nodes
			return ready
		}
		return ready
	}
}

// withStatus sets the XPool's status.
func withStatus(xr, st string) string { return xr + "status:\n" + st }

func TestLifecycle(t *testing.T) {
	spec := basicSpec
	base := scenario{XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: kwokCRDs}

	first := base.run(t)
	if got := status(first)["phase"]; got != "Creating" {
		t.Fatalf("first call: phase %v, want Creating", got)
	}

	active := base
	active.Observed = observe(t, first, healthy(1, 2))
	rsp := active.run(t)
	st := status(rsp)
	if diff := cmp.Diff(map[string]any{"phase": "Active", "occupied": float64(1), "nodes": float64(2)},
		map[string]any{"phase": st["phase"], "occupied": st["occupiedExecutors"], "nodes": st["currentNodes"]}); diff != "" {
		t.Errorf("observed healthy: -want, +got:\n%s", diff)
	}
	if got := nestedNumber(desired(rsp, "placeholder").Object, "spec", "replicas"); got != 1 {
		t.Errorf("placeholder replicas = %d, want minExecutors 2 - occupied 1 = 1", got)
	}

	suspending := scenario{XR: withStatus(xpool("burst", "pools", spec+"  suspend: true\n"), "  phase: Active\n"), QueryServices: allQS, CRDs: kwokCRDs, Observed: active.Observed}
	rsp = suspending.run(t)
	if got := status(rsp)["phase"]; got != "Suspending" {
		t.Errorf("suspend with nodes: phase %v, want Suspending", got)
	}
	limits, _, _ := unstructured.NestedStringMap(desired(rsp, "nodepool").Object, "spec", "limits")
	if diff := cmp.Diff(map[string]string{"cpu": "0", "memory": "0", "nodes": "0"}, limits); diff != "" {
		t.Errorf("suspended NodePool limits: -want, +got:\n%s", diff)
	}
	if got := nestedNumber(desired(rsp, "placeholder").Object, "spec", "replicas"); got != 0 {
		t.Errorf("suspended placeholder replicas = %d, want 0", got)
	}
	if got := len(desiredNames(rsp)); got != len(desiredNames(first)) {
		t.Errorf("suspend dropped objects: %v", desiredNames(rsp))
	}

	suspended := suspending
	suspended.Observed = observe(t, rsp, healthy(0, 0))
	rsp = suspended.run(t)
	if got := status(rsp)["phase"]; got != "Suspended" {
		t.Errorf("suspend without nodes: phase %v, want Suspended", got)
	}

	resuming := scenario{XR: withStatus(xpool("burst", "pools", spec), "  phase: Suspended\n"), QueryServices: allQS, CRDs: kwokCRDs, Observed: observe(t, rsp, nil)}
	rsp = resuming.run(t)
	if got := status(rsp)["phase"]; got != "Resuming" {
		t.Errorf("resume: phase %v, want Resuming", got)
	}
	resumed := resuming
	resumed.Observed = observe(t, rsp, healthy(0, 1))
	if got := status(resumed.run(t))["phase"]; got != "Active" {
		t.Errorf("resumed: phase %v, want Active", got)
	}
}

func TestRetention(t *testing.T) {
	const img = "ghcr.io/e6data/executor:2.0"
	rn := warmup.ResourceName(img)
	withImage := basicSpec + "  imageConfig: {cachedImages: [\"" + img + "\"], autoCollectImages: false, unusedImageRetention: 1h}\n"
	without := basicSpec + "  imageConfig: {autoCollectImages: false, unusedImageRetention: 1h}\n"

	rsp := scenario{XR: xpool("burst", "pools", withImage), QueryServices: allQS, CRDs: kwokCRDs}.run(t)
	if desired(rsp, rn) == nil {
		t.Fatalf("cached image %s has no warmup DaemonSet: %v", img, desiredNames(rsp))
	}
	observed := observe(t, rsp, healthy(0, 1))

	// The image leaves the set: its DaemonSet stays, marked unused now.
	rsp = scenario{XR: xpool("burst", "pools", without), QueryServices: allQS, CRDs: kwokCRDs, Observed: observed}.run(t)
	ds := desired(rsp, rn)
	if ds == nil {
		t.Fatalf("image that just left the set was dropped before its retention: %v", desiredNames(rsp))
	}
	if got := ds.GetAnnotations()[warmup.AnnotationUnusedSince]; got != now.Format(time.RFC3339) {
		t.Errorf("unused-since = %q, want %q", got, now.Format(time.RFC3339))
	}
	if got := rsp.GetMeta().GetTtl().AsDuration(); got > time.Minute {
		t.Errorf("TTL = %s, want at most a minute so the retention is checked in time", got)
	}

	// Half the retention later it is still kept, and the TTL points at
	// the end of the retention when that comes first.
	observed = observe(t, rsp, healthy(0, 1))
	f := &Function{now: func() time.Time { return now.Add(59*time.Minute + 30*time.Second) }, size: fakeSize}
	rsp, err := f.RunFunction(t.Context(), scenario{XR: xpool("burst", "pools", without), QueryServices: allQS, CRDs: kwokCRDs, Observed: observed}.request(t))
	if err != nil {
		t.Fatal(err)
	}
	if desired(rsp, rn) == nil {
		t.Fatalf("image dropped within its retention")
	}
	if got := rsp.GetMeta().GetTtl().AsDuration(); got != 30*time.Second {
		t.Errorf("TTL = %s, want the 30s left of the retention", got)
	}

	// After the retention it is dropped, with an event.
	f = &Function{now: func() time.Time { return now.Add(61 * time.Minute) }, size: fakeSize}
	rsp, err = f.RunFunction(t.Context(), scenario{XR: xpool("burst", "pools", without), QueryServices: allQS, CRDs: kwokCRDs, Observed: observed}.request(t))
	if err != nil {
		t.Fatal(err)
	}
	if desired(rsp, rn) != nil {
		t.Errorf("image kept after its retention")
	}
	if got := results(rsp); !strings.Contains(strings.Join(got, "\n"), "NORMAL WarmImageDropped") {
		t.Errorf("no WarmImageDropped event: %v", got)
	}
}

func TestConcurrentCalls(t *testing.T) {
	// Crossplane calls the function concurrently for different XPools; the
	// shared render cache must give each its own, correct objects.
	f := &Function{now: func() time.Time { return now }, size: fakeSize, cache: &renderCache{}}
	errs := make(chan string, 16)
	for i := range 16 {
		go func() {
			name := fmt.Sprintf("pool-%d", i%4)
			rsp, err := f.RunFunction(t.Context(), scenario{XR: xpool(name, "pools", basicSpec+"  imageConfig: {cachedImages: [ghcr.io/e6data/executor:3.1]}\n"), QueryServices: allQS, CRDs: kwokCRDs}.request(t))
			switch {
			case err != nil:
				errs <- err.Error()
			case desired(rsp, warmup.ResourceName("ghcr.io/e6data/executor:3.1")) == nil:
				errs <- name + " has no warmup DaemonSet"
			case !strings.HasPrefix(desired(rsp, warmup.ResourceName("ghcr.io/e6data/executor:3.1")).GetName(), name+"-warmup-"):
				errs <- name + " got another pool's warmup DaemonSet"
			default:
				errs <- ""
			}
		}()
	}
	for range 16 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}
