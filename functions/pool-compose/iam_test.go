package main

import (
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/warmup"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// nodeIAMOn is the EnvironmentConfig data that turns node IAM on.
const nodeIAMOn = "  aws:\n    nodeIAM:\n      enabled: true\n"

// nodeIAMSettings are clusterSettings with node IAM on.
var nodeIAMSettings = strings.Replace(clusterSettings, "  aws:\n", "  aws:\n    nodeIAM:\n      enabled: true\n", 1)

// iamRole is the node role of pool burst in test-cluster.
const iamRole = "test-cluster.pools.burst-node"

// iamNames are the composed-resource names of pool burst's node IAM
// objects with the default policies.
func iamNames() []string {
	out := []string{string(objects.ComposedNodeAccessEntry), string(objects.ComposedNodeRole)}
	for _, a := range objects.DefaultNodePolicyARNs {
		out = append(out, objects.ComposedNodePolicyPrefix+objects.ARNHash(a))
	}
	slices.Sort(out)
	return out
}

// usageNames are the usages of iamNames.
func usageNames() []string {
	var out []string
	for _, n := range iamNames() {
		out = append(out, objects.ComposedNodeIAMUsagePrefix+strings.TrimPrefix(n, "node-iam-"))
	}
	return out
}

// observedIAM is every node IAM object of pool burst as observed, with the
// conditions cond returns for its composed-resource name (YAML list items,
// indented four spaces).
func observedIAM(cond func(name string) string) map[string]string {
	objs := objects.NodeIAMObjects(objects.NodeIAMArgs{Pool: "burst", Namespace: "pools", ClusterName: "test-cluster", Region: "us-east", Role: objects.NodeRoleName("test-cluster", "pools", "burst")})
	out := map[string]string{}
	for _, o := range objs {
		out[string(o.Name)] = "apiVersion: " + o.Object.GetAPIVersion() + "\nkind: " + o.Object.GetKind() + "\nmetadata: {name: " + o.Object.GetName() +
			"}\nspec: {}\nstatus:\n  conditions:\n" + cond(string(o.Name))
	}
	return out
}

func readyAndSynced(string) string {
	return "    - {type: Synced, status: \"True\", reason: ReconcileSuccess}\n    - {type: Ready, status: \"True\", reason: Available}\n"
}

// withObserved merges observed object maps.
func withObserved(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// runningPool are a pool's NodePool and an EC2NodeClass naming role.
func runningPool(role string) map[string]string {
	return map[string]string{
		"nodepool":  "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nspec: {}\nstatus: {conditions: [{type: Ready, status: \"True\"}]}\n",
		"nodeclass": "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: burst-nodeclass}\nspec: {role: " + role + "}\nstatus: {conditions: [{type: Ready, status: \"True\"}]}\n",
	}
}

func TestNodeIAM(t *testing.T) {
	env := func(data string) []string {
		return []string{environmentConfig(decision.DefaultEnvironmentConfig, data)}
	}
	warm := []string{"warmup-" + warmup.Hash("ghcr.io/e6data/executor:3.0"), "warmup-" + warmup.Hash("ghcr.io/e6data/executor:3.1")}
	base := append([]string{"access-policy", "access-policy-binding", "capacity", "node-agent-priorityclass"}, warm...)
	karpenter := append([]string{"nodeclass", "nodepool", "placeholder", "placeholder-priorityclass"}, base...)
	type want struct {
		Objects []string
		Phase   string
		// Conditions are "Status/Reason" by type; Messages are parts of
		// each condition's message.
		Conditions map[string]string
		Messages   map[string][]string
		// Role is the EC2NodeClass's spec.role, when one is composed.
		Role string
		// Events are the reasons of the warning events.
		Events []string
	}
	cases := map[string]struct {
		reason string
		s      scenario
		want   want
	}{
		"NewPoolWaitsForTheRole": {
			reason: "A new pool composes its role, attachments and access entry, but no NodePool or NodeClass until they are Ready; the condition names the role.",
			s:      scenario{Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs},
			want: want{
				Objects: slices.Concat(base, iamNames()), Phase: "Pending",
				Conditions: map[string]string{decision.CondNodeIAM: "FALSE/Waiting", decision.CondProvisioned: "FALSE/NodeIAMNotReady"},
				Messages:   map[string][]string{decision.CondNodeIAM: {"node IAM role " + iamRole, "Role pools.burst-node-role is not created yet"}},
				Events:     []string{"NodeIAMNotReady"},
			},
		},
		"ProviderErrorInWords": {
			reason: "The provider's Synced=False message shows on the claim in words.",
			s: scenario{Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
				Observed: observedIAM(func(n string) string {
					if n == string(objects.ComposedNodeRole) {
						return "    - {type: Synced, status: \"False\", reason: ReconcileError, message: \"create failed: AccessDenied: not authorized to perform iam:CreateRole\"}\n"
					}
					return readyAndSynced(n)
				})},
			want: want{
				Objects: slices.Concat(base, iamNames()), Phase: "Pending",
				Conditions: map[string]string{decision.CondNodeIAM: "FALSE/Waiting"},
				Messages:   map[string][]string{decision.CondNodeIAM: {"Role pools.burst-node-role: Synced=False: create failed: AccessDenied: not authorized to perform iam:CreateRole (ReconcileError)"}},
				Events:     []string{"NodeIAMNotReady"},
			},
		},
		"ReadyComposesNodesAndUsages": {
			reason: "Once every IAM object is Ready the NodePool and NodeClass are composed with the role, and usages keep the IAM objects while the NodePool exists.",
			s: scenario{Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
				Observed: observedIAM(readyAndSynced)},
			want: want{
				Objects: slices.Concat(karpenter, iamNames(), usageNames()), Phase: "Creating", Role: iamRole,
				Conditions: map[string]string{decision.CondNodeIAM: "TRUE/Ready", decision.CondProvisioned: "TRUE/KarpenterNodePool"},
			},
		},
		"RemovedPolicyIsDeleted": {
			reason: "A policy taken out of the settings loses its attachment and the attachment's usage: only what the settings leave out of the decision is kept.",
			s: scenario{Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
				Observed: withObserved(observedIAM(readyAndSynced), map[string]string{
					objects.ComposedNodePolicyPrefix + objects.ARNHash("arn:aws:iam::aws:policy/Removed"):               "apiVersion: iam.aws.upbound.io/v1beta1\nkind: RolePolicyAttachment\nmetadata: {name: x}\nspec: {}\n",
					objects.ComposedNodeIAMUsagePrefix + "policy-" + objects.ARNHash("arn:aws:iam::aws:policy/Removed"): "apiVersion: protection.crossplane.io/v1beta1\nkind: ClusterUsage\nmetadata: {name: y}\nspec: {}\n",
				})},
			want: want{
				Objects: slices.Concat(karpenter, iamNames(), usageNames()), Phase: "Creating", Role: iamRole,
				Conditions: map[string]string{decision.CondNodeIAM: "TRUE/Ready", decision.CondProvisioned: "TRUE/KarpenterNodePool"},
			},
		},
		"ExistingNodePoolKept": {
			reason: "A role that becomes unready never withdraws an existing NodePool; the NodeClass keeps the role it has, and the usages stay.",
			s: scenario{Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
				Observed: withObserved(runningPool(iamRole), observedIAM(func(n string) string {
					if n == string(objects.ComposedNodeAccessEntry) {
						return "    - {type: Ready, status: \"False\", reason: Deleting}\n"
					}
					return readyAndSynced(n)
				}), map[string]string{usageNames()[0]: "apiVersion: protection.crossplane.io/v1beta1\nkind: ClusterUsage\nmetadata: {name: x}\nspec: {}\n"})},
			want: want{
				Objects: slices.Concat(karpenter, iamNames(), usageNames()), Phase: "Creating", Role: iamRole,
				Conditions: map[string]string{decision.CondNodeIAM: "FALSE/Waiting", decision.CondProvisioned: "TRUE/KarpenterNodePool"},
				Messages:   map[string][]string{decision.CondNodeIAM: {"AccessEntry pools.burst-node-access: Ready=False: Deleting"}},
				Events:     []string{"NodeIAMNotReady"},
			},
		},
		"TurnedOnForARunningPool": {
			reason: "Turning node IAM on for a running pool composes the IAM objects; the NodeClass keeps the settings' role until the new one is Ready.",
			s: scenario{Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
				Observed: runningPool("KarpenterNodeRole-test-cluster")},
			want: want{
				Objects: slices.Concat(karpenter, iamNames()), Phase: "Creating", Role: "KarpenterNodeRole-test-cluster",
				Conditions: map[string]string{decision.CondNodeIAM: "FALSE/Waiting", decision.CondProvisioned: "TRUE/KarpenterNodePool"},
				Events:     []string{"NodeIAMNotReady"},
			},
		},
		"PoolTurnsItOn": {
			reason: "spec.provisioning.composeNodeIAM: true wins over the setting, which is off.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  provisioning: {composeNodeIAM: true}\n"), QueryServices: allQS, CRDs: awsCRDs},
			want: want{
				Objects: slices.Concat(base, iamNames()), Phase: "Pending",
				Conditions: map[string]string{decision.CondNodeIAM: "FALSE/Waiting"},
				Events:     []string{"NodeIAMNotReady"},
			},
		},
		"WaitingEventOnce": {
			reason: "A pool already waiting for its role gets no new event on every reconcile.",
			s: scenario{Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec) + "status:\n  conditions:\n  - {type: NodeIAMReady, status: \"False\", reason: Waiting}\n",
				QueryServices: allQS, CRDs: awsCRDs},
			want: want{Objects: slices.Concat(base, iamNames()), Phase: "Pending", Conditions: map[string]string{decision.CondNodeIAM: "FALSE/Waiting"}},
		},
		"PoolTurnsItOff": {
			reason: "spec.provisioning.composeNodeIAM: false wins over the setting: the settings' role, nothing of IAM.",
			s: scenario{Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec+"  provisioning: {composeNodeIAM: false}\n"), QueryServices: allQS, CRDs: awsCRDs,
				Observed: runningPool("KarpenterNodeRole-test-cluster")},
			want: want{Objects: karpenter, Phase: "Creating", Role: "KarpenterNodeRole-test-cluster", Conditions: map[string]string{decision.CondNodeIAM: "/"}},
		},
		"BadPolicyARN": {
			reason: "A wrong policy ARN keeps the pool Pending, names the field, and keeps what exists.",
			s: scenario{Environment: env(nodeIAMOn + "      extraPolicyARNs: [arn:aws:iam::aws:policy/Ok, AmazonS3ReadOnlyAccess]\n"), XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs,
				Observed: withObserved(runningPool(iamRole), observedIAM(readyAndSynced))},
			want: want{
				Objects: slices.Concat([]string{"nodeclass", "nodepool"}, iamNames()), Phase: "Pending", Role: iamRole,
				Conditions: map[string]string{decision.CondProvisioned: "FALSE/SettingsInvalid"},
				Messages:   map[string][]string{decision.CondProvisioned: {"EnvironmentConfig burstpool field data.aws.nodeIAM.extraPolicyARNs[1] \"AmazonS3ReadOnlyAccess\" is not an IAM policy ARN"}},
			},
		},
		"MissingRegion": {
			reason: "The access entry needs the region: without it the pool is Pending naming provisioning.region, and aws.role is not asked for.",
			s: scenario{Input: strings.Replace(strings.Replace(testInput, "  region: us-east\n", "", 1), "aws:\n  role: KarpenterNodeRole-test-cluster\n", "", 1),
				Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs},
			want: want{
				Objects: []string{}, Phase: "Pending",
				Conditions: map[string]string{decision.CondProvisioned: "FALSE/SettingsMissing"},
				Messages:   map[string][]string{decision.CondProvisioned: {"EnvironmentConfig burstpool field data.provisioning.region is required to compose node IAM"}},
			},
		},
		"OtherCloudsComposeNone": {
			reason: "Node IAM is AWS's: a kwok cluster sized from the kwok catalog composes none.",
			s:      scenario{Environment: env(nodeIAMOn), XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs},
			want:   want{Objects: karpenter, Phase: "Creating", Conditions: map[string]string{decision.CondNodeIAM: "/"}},
		},
	}
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := tc.s.run(t)
			slices.Sort(tc.want.Objects)
			got := want{Objects: desiredNames(rsp), Conditions: map[string]string{}, Messages: map[string][]string{}}
			if st := status(rsp); st != nil {
				got.Phase, _ = st["phase"].(string)
			}
			conds := conditions(rsp)
			for k := range tc.want.Conditions {
				got.Conditions[k] = conds[k]
				if conds[k] == "" {
					got.Conditions[k] = "/"
				}
			}
			for k, parts := range tc.want.Messages {
				msg := conditionMessage(rsp, k)
				for _, p := range parts {
					if strings.Contains(msg, p) {
						got.Messages[k] = append(got.Messages[k], p)
					}
				}
				if len(got.Messages[k]) != len(parts) {
					t.Logf("%s message: %s", k, msg)
				}
			}
			if len(tc.want.Messages) == 0 {
				got.Messages = nil
			}
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && (strings.HasPrefix(r.GetReason(), "NodeIAM") || len(tc.want.Events) > 0) {
					got.Events = append(got.Events, r.GetReason())
				}
			}
			if nc := desired(rsp, "nodeclass"); nc != nil {
				got.Role, _ = nc.Object["spec"].(map[string]any)["role"].(string)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			for _, n := range desiredNames(rsp) {
				if _, kept := tc.s.Observed[n]; strings.HasPrefix(n, "node-iam-") && !kept {
					if err := reg.Validate(desired(rsp, n)); err != nil {
						t.Errorf("%s is invalid: %v", n, err)
					}
				}
			}
		})
	}
}

// conditionMessage is the message of rsp's condition typ.
func conditionMessage(rsp *fnv1.RunFunctionResponse, typ string) string {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == typ {
			return c.GetMessage()
		}
	}
	return ""
}
