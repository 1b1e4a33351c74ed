package main

import (
	"fmt"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/internal/warmup"
)

// nested reads a field of a desired object, or nil.
func nested(rsp *fnv1.RunFunctionResponse, name string, path ...string) any {
	u := desired(rsp, name)
	if u == nil {
		return nil
	}
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return v
}

// podSpec reads a field of a desired workload's pod template.
func podSpec(rsp *fnv1.RunFunctionResponse, name string, path ...string) any {
	return nested(rsp, name, append([]string{"spec", "template", "spec"}, path...)...)
}

// withResults keeps the results of rsp that start with prefix.
func withResults(rsp *fnv1.RunFunctionResponse, prefix string) []string {
	var out []string
	for _, r := range results(rsp) {
		if strings.HasPrefix(r, prefix) {
			out = append(out, r)
		}
	}
	return out
}

func TestRules(t *testing.T) {
	bigQS := qs("big", "team-a", "burst", "pools", "ghcr.io/e6data/executor:3.1", "20", "100Gi", nil)
	inheritFrom := strings.Replace(qsReporting, "    poolRef:", "    instanceType: m-64x-amd64-linux\n    poolRef:", 1)
	failedCapacity := "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: burst-capacity}\nstatus:\n  atProvider:\n    warmupFailures:\n    - {image: ghcr.io/e6data/executor:3.1, reason: ErrImagePull, message: not found, nodes: 2}\n"

	cases := map[string]struct {
		reason string
		s      scenario
		got    func(*fnv1.RunFunctionResponse) any
		want   any
	}{
		"TolerationsBecomeTaints": {
			reason: "The pool's identity taints (name and namespace NoSchedule, then name NoExecute) come first, each keyed toleration becomes a taint (NoSchedule when it names no effect), and one without a key has no taint.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  tolerations: [{key: e6data.io/burst, operator: Exists}, {key: gpu, value: \"true\", effect: NoExecute}, {operator: Exists}]\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return nested(r, "nodepool", "spec", "template", "spec", "taints")
			},
			want: []any{
				map[string]any{"key": "e6data.io/pool", "value": "burst", "effect": "NoSchedule"},
				map[string]any{"key": "e6data.io/pool-namespace", "value": "pools", "effect": "NoSchedule"},
				map[string]any{"key": "e6data.io/pool", "value": "burst", "effect": "NoExecute"},
				map[string]any{"key": "e6data.io/burst", "effect": "NoSchedule"},
				map[string]any{"key": "gpu", "value": "true", "effect": "NoExecute"},
			},
		},
		"PlaceholderIsTheLargestCompatibleExecutor": {
			reason: "A placeholder requests (and is limited to) the largest compatible executor; an incompatible one is left out.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  - {name: big, namespace: team-a}\n"), QueryServices: append(allQS, bigQS), CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return podSpec(r, "placeholder", "containers").([]any)[0].(map[string]any)["resources"]
			},
			want: map[string]any{
				"requests": map[string]any{"cpu": "8", "memory": "60Gi"},
				"limits":   map[string]any{"cpu": "8", "memory": "60Gi"},
			},
		},
		"IncompatibleQueryServiceIsReported": {
			reason: "An executor that does not fit the pool's nodes gives a Warning event and a False condition.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  - {name: big, namespace: team-a}\n"), QueryServices: append(allQS, bigQS), CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{conditions(r)[decision.CondCompatible], withResults(r, "WARNING QueryServiceIncompatible")}
			},
			want: []any{"FALSE/Incompatible", []string{"WARNING QueryServiceIncompatible: QueryService team-a/big does not fit the pool's m-16x-amd64-linux nodes: needs more CPU than m-16x-amd64-linux offers"}},
		},
		"IncompatibleReportedOnce": {
			reason: "A QueryService the status already reports incompatible gives no new event.",
			s: scenario{XR: withStatus(xpool("burst", "pools", basicSpec+"  - {name: big, namespace: team-a}\n"),
				"  derivedInstanceType: m-16x-amd64-linux\n  attachedQueryServices:\n  - {queryService: {name: big, namespace: team-a}, attached: true, compatible: false}\n"), QueryServices: append(allQS, bigQS), CRDs: kwokCRDs},
			got:  func(r *fnv1.RunFunctionResponse) any { return withResults(r, "WARNING QueryServiceIncompatible") },
			want: []string(nil),
		},
		"DerivationEventOnlyOnChange": {
			reason: "The instance type event is emitted when the type changes, not on every call.",
			s:      scenario{XR: withStatus(xpool("burst", "pools", basicSpec), "  derivedInstanceType: m-16x-amd64-linux\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got:    func(r *fnv1.RunFunctionResponse) any { return withResults(r, "NORMAL InstanceType") },
			want:   []string(nil),
		},
		"WarmupFailureFromCapacity": {
			reason: "An image the capacity provider saw fail to pull is Failed in status, with the reason and nodes.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Observed: map[string]string{"capacity": failedCapacity}},
			got: func(r *fnv1.RunFunctionResponse) any {
				for _, c := range status(r)["cachedImages"].([]any) {
					if c := c.(map[string]any); c["image"] == "ghcr.io/e6data/executor:3.1" {
						return []any{c["warmupStatus"], c["message"], conditions(r)[decision.CondImagesWarm]}
					}
				}
				return nil
			},
			want: []any{"Failed", "ErrImagePull: not found (on 2 pool nodes)", "FALSE/WarmupFailed"},
		},
		"PoolPodsAreGuaranteed": {
			reason: "Every pod the pool owns (placeholders, warmup, storage agent) limits each container, init containers included, to its requests: guaranteed QoS.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  storageAgent: {enabled: true, image: ghcr.io/e6data/agent:1}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				var notGuaranteed []string
				for _, n := range desiredNames(r) {
					for _, kind := range []string{"initContainers", "containers"} {
						cs, _ := podSpec(r, n, kind).([]any)
						for _, c := range cs {
							res, _ := c.(map[string]any)["resources"].(map[string]any)
							if res == nil || res["requests"] == nil || !cmp.Equal(res["requests"], res["limits"]) {
								notGuaranteed = append(notGuaranteed, n+"/"+c.(map[string]any)["name"].(string))
							}
						}
					}
				}
				return notGuaranteed
			},
			want: []string(nil),
		},
		"PlaceholdersSpreadOnePerNode": {
			reason: "With one executor per node, placeholders repel each other across hostnames (of this pool only), so each warm slot is a warm node.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return podSpec(r, "placeholder", "affinity", "podAntiAffinity")
			},
			want: map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
				"labelSelector": map[string]any{"matchLabels": map[string]any{"e6data.io/component": "placeholder", "e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools"}},
				"topologyKey":   "kubernetes.io/hostname",
			}}},
		},
		"PlaceholdersShareNodesWithSeveralExecutorsPerNode": {
			reason: "With several executors per node, placeholders may share a node.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  executorsPerNode: 2\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return podSpec(r, "placeholder", "affinity", "podAntiAffinity")
			},
			want: nil,
		},
		"ExecutorSchedulingPublished": {
			reason: "status.executorScheduling lists the labels, node selector and a toleration of every taint the NodePool puts on pool nodes; the PoolCapacity carries the same tolerations.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  tolerations: [{key: dedicated, value: analytics, effect: NoSchedule}]\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				es := status(r)["executorScheduling"].(map[string]any)
				var untolerated []string
				for _, tt := range nested(r, "nodepool", "spec", "template", "spec", "taints").([]any) {
					taint := tt.(map[string]any)
					ok := false
					for _, to := range es["tolerations"].([]any) {
						to := to.(map[string]any)
						ok = ok || (to["key"] == taint["key"] && to["value"] == taint["value"] && to["effect"] == taint["effect"])
					}
					if !ok {
						untolerated = append(untolerated, fmt.Sprint(taint))
					}
				}
				// The capacity provider judges the nodes' taints by the
				// same tolerations.
				same := cmp.Equal(es["tolerations"], nested(r, "capacity", "spec", "forProvider", "tolerations"))
				return []any{es["labels"], es["nodeSelector"], untolerated, same}
			},
			want: []any{
				map[string]any{"e6data.io/executor-type": "pool", "e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools"},
				map[string]any{"e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools"},
				[]string(nil),
				true,
			},
		},
		"QueryServiceShares": {
			reason: "spec.queryServiceLimits gives each attached QueryService its share (an override wins), passed to the PoolCapacity with enforceShares and the executor gate (the provider holds back an executor that would take a slot freed for a waiter below its share), and reported per QueryService.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  queryServiceLimits: {maxPoolExecutors: 3, enforce: true, overrides: [{name: analytics, namespace: team-a, maxPoolExecutors: 5}]}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				shares := map[string]any{}
				for _, q := range nested(r, "capacity", "spec", "forProvider", "queryServices").([]any) {
					q := q.(map[string]any)
					shares["capacity "+q["namespace"].(string)+"/"+q["name"].(string)] = q["maxPoolExecutors"]
				}
				for _, q := range status(r)["attachedQueryServices"].([]any) {
					q := q.(map[string]any)
					ref := q["queryService"].(map[string]any)
					shares["status "+ref["namespace"].(string)+"/"+ref["name"].(string)] = q["maxPoolExecutors"]
				}
				return []any{shares, nested(r, "capacity", "spec", "forProvider", "policies", "enforceShares"), nested(r, "capacity", "spec", "forProvider", "executorGate")}
			},
			want: []any{map[string]any{
				"capacity team-a/analytics": float64(5), "capacity team-b/reporting": float64(3),
				"status team-a/analytics": float64(5), "status team-b/reporting": float64(3), "status team-c/rogue": nil,
			}, true, "e6data.io/pool-slot"},
		},
		"StorageAgent": {
			reason: "storageAgent.enabled runs the agent on pool nodes with requests equal to limits.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  storageAgent: {enabled: true, image: ghcr.io/e6data/agent:1, cpu: 250m}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{nested(r, "storage-agent", "metadata", "name"), podSpec(r, "storage-agent", "containers").([]any)[0].(map[string]any)["resources"], podSpec(r, "storage-agent", "nodeSelector")}
			},
			want: []any{"burst-storage-agent", map[string]any{
				"requests": map[string]any{"cpu": "250m", "memory": "256Mi"},
				"limits":   map[string]any{"cpu": "250m", "memory": "256Mi"},
			}, map[string]any{"e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools"}},
		},
		"StorageAgentHardened": {
			reason: "The storage agent runs as warmup pods do (no service account token, no service links, the restricted profile) except for a writable root filesystem, and tolerates the pool's NoExecute identity taint.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  storageAgent: {enabled: true, image: ghcr.io/e6data/agent:1}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{
					podSpec(r, "storage-agent", "automountServiceAccountToken"), podSpec(r, "storage-agent", "enableServiceLinks"),
					podSpec(r, "storage-agent", "securityContext"), podSpec(r, "storage-agent", "containers").([]any)[0].(map[string]any)["securityContext"],
					podSpec(r, "storage-agent", "tolerations").([]any)[2],
				}
			},
			want: []any{false, false,
				map[string]any{"runAsNonRoot": true, "runAsUser": float64(65532), "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
				map[string]any{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": false, "capabilities": map[string]any{"drop": []any{"ALL"}}},
				map[string]any{"key": "e6data.io/pool", "operator": "Equal", "value": "burst", "effect": "NoExecute"},
			},
		},
		"InheritNodeConfig": {
			reason: "inheritNodeConfigFrom passes the named QueryService's instance type to sizing.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  inheritNodeConfigFrom: {name: reporting, namespace: team-b}\n"), QueryServices: []string{qsAnalytics, inheritFrom}, CRDs: kwokCRDs},
			got:    func(r *fnv1.RunFunctionResponse) any { return status(r)["derivedInstanceType"] },
			want:   "m-64x-amd64-linux",
		},
		"InheritFromMissingQueryServiceIsPending": {
			reason: "Inheriting from a QueryService that does not exist is Pending with its name, and keeps the NodePool.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  inheritNodeConfigFrom: {name: gone, namespace: team-b}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{status(r)["phase"], conditions(r)[decision.CondProvisioned]}
			},
			want: []any{"Pending", "FALSE/InheritedQueryServiceMissing"},
		},
		"SpotOffersRankedTypes": {
			reason: "With spotEnabled the NodePool offers the ranked set and spot with on-demand fallback.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  instanceConfig: {spotEnabled: true}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				reqs := nested(r, "nodepool", "spec", "template", "spec", "requirements").([]any)
				return []any{reqs[0].(map[string]any)["values"], reqs[len(reqs)-1].(map[string]any)["values"]}
			},
			want: []any{[]any{"m-16x-amd64-linux", "m-32x-amd64-linux"}, []any{"spot", "on-demand"}},
		},
		"LimitsFromMaxExecutors": {
			reason: "NodePool limits are ceil(maxExecutors / executorsPerNode) nodes of the type's size.",
			s:      scenario{XR: xpool("burst", "pools", strings.Replace(basicSpec, "maxExecutors: 8", "maxExecutors: 9\n  executorsPerNode: 2", 1)), QueryServices: allQS, CRDs: kwokCRDs},
			got:    func(r *fnv1.RunFunctionResponse) any { return nested(r, "nodepool", "spec", "limits") },
			want:   map[string]any{"nodes": "5", "cpu": "80", "memory": "640Gi"},
		},
		"PullSecretsFromPoolNamespace": {
			reason: "Warmup pods use only the pull secrets of the pool namespace.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  imageConfig: {imagePullSecrets: [{name: regcred, namespace: other}, {name: local}, {name: same, namespace: pools}]}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return podSpec(r, warmup.ResourceName("ghcr.io/e6data/executor:3.1"), "imagePullSecrets")
			},
			want: []any{map[string]any{"name": "local"}, map[string]any{"name": "same"}},
		},
		"ExistingNodesMissing": {
			reason: "A pool on existing nodes whose PoolCapacity sees none of them is Pending, naming the nodeSelector, the labels it looks for and the NoExecute identity taint to put on them.",
			s: scenario{XR: xpool("linode-pool", "e6-pools", "  maxExecutors: 10\n  nodeSelector: {lke.linode.com/pool-id: \"785603\"}\n  allowedQueryServices: [{name: x}]\n"), QueryServices: allQS, CRDs: linodeCRDs,
				Observed: map[string]string{"capacity": "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: linode-pool-capacity}\nstatus: {atProvider: {nodes: {ready: 0}}}\n"}},
			got:  func(r *fnv1.RunFunctionResponse) any { return []any{status(r)["phase"], status(r)["message"]} },
			want: []any{"Pending", "no node matches spec.nodeSelector lke.linode.com/pool-id=785603 with the pool labels e6data.io/pool=linode-pool e6data.io/pool-namespace=e6-pools: create the node pool in your cloud with the label lke.linode.com/pool-id=785603, then label its nodes: kubectl label nodes -l lke.linode.com/pool-id=785603 e6data.io/pool=linode-pool e6data.io/pool-namespace=e6-pools, then taint them (which evicts their pods that are not the pool's): kubectl taint nodes -l lke.linode.com/pool-id=785603 e6data.io/pool=linode-pool:NoExecute"},
		},
		"ExistingNodesPresent": {
			reason: "Once the PoolCapacity sees a node, the pool on existing nodes is not Pending.",
			s: scenario{XR: xpool("linode-pool", "e6-pools", "  maxExecutors: 10\n  nodeSelector: {lke.linode.com/pool-id: \"785603\"}\n  allowedQueryServices: [{name: x}]\n"), QueryServices: allQS, CRDs: linodeCRDs,
				Observed: map[string]string{"capacity": "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: linode-pool-capacity}\nstatus: {atProvider: {nodes: {ready: 1}}}\n"}},
			got:  func(r *fnv1.RunFunctionResponse) any { return status(r)["phase"] != "Pending" },
			want: true,
		},
		"PullSecretOfTheReference": {
			reason: "imageConfig.pullSecret (reference 3.4) without a namespace means the pool namespace; it is used beside imagePullSecrets, once each.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  imageConfig: {pullSecret: {name: registry-secret}, imagePullSecrets: [{name: registry-secret}, {name: extra}]}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{podSpec(r, warmup.ResourceName("ghcr.io/e6data/executor:3.1"), "imagePullSecrets"), conditions(r)[decision.CondPullSecrets]}
			},
			want: []any{[]any{map[string]any{"name": "registry-secret"}, map[string]any{"name": "extra"}}, "TRUE/InPoolNamespace"},
		},
		"PullSecretInAnotherNamespace": {
			reason: "A pullSecret in another namespace than the pool's, where warmup pods run, is not used and the claim says to copy it.",
			s:      scenario{XR: xpool("burst", "pools", basicSpec+"  imageConfig: {pullSecret: {name: e6data-registry-secret, namespace: registry}}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{podSpec(r, warmup.ResourceName("ghcr.io/e6data/executor:3.1"), "imagePullSecrets"), withResults(r, "WARNING SecretNotInPoolNamespace")}
			},
			want: []any{nil, []string{"WARNING SecretNotInPoolNamespace: imageConfig.pullSecret registry/e6data-registry-secret is not in the pool namespace pools, where warmup pods run, and is not used: copy it into pools"}},
		},
		"Deleting": {
			reason: "A deleting XPool is Deleting, and its observed objects are kept.",
			s: scenario{XR: strings.Replace(xpool("burst", "pools", basicSpec), "metadata:\n", "metadata:\n  deletionTimestamp: \"2026-11-22T11:00:00Z\"\n", 1), QueryServices: allQS, CRDs: kwokCRDs,
				Observed: map[string]string{"old": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old, namespace: pools}\n"}},
			got:  func(r *fnv1.RunFunctionResponse) any { return []any{status(r)["phase"], desired(r, "old") != nil} },
			want: []any{"Deleting", true},
		},
		"NoClaimUsesInputNamespace": {
			reason: "An XPool without a claim names objects after itself and puts namespaced ones in the input's namespace.",
			s:      scenario{XR: "apiVersion: e6data.io/v1alpha1\nkind: XPool\nmetadata: {name: lone}\nspec:\n" + basicSpec + "  instanceConfig: {instanceType: m-16x-amd64-linux}\n", QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{nested(r, "placeholder", "metadata", "namespace"), nested(r, "nodepool", "metadata", "name")}
			},
			want: []any{"burstpool-system", "lone-nodepool"},
		},
		"UpgradeEvent": {
			reason: "With autoUpgrade, a larger QueryService moves the pool to a larger type and says so.",
			s: scenario{XR: withStatus(xpool("burst", "pools", basicSpec+"  instanceConfig: {instanceFamily: m, autoUpgrade: true}\n"), "  derivedInstanceType: m-4x-amd64-linux\n"),
				QueryServices: allQS, CRDs: kwokCRDs, Catalog: true},
			got: func(r *fnv1.RunFunctionResponse) any {
				return len(withResults(r, "NORMAL InstanceTypeUpgraded: the pool moves from m-4x-amd64-linux to"))
			},
			want: 1,
		},
		"PullSecretWarnedOnce": {
			reason: "A pull secret problem the XPool's conditions already show gives no new event.",
			s: scenario{XR: withStatus(xpool("burst", "pools", basicSpec+"  imageConfig: {imagePullSecrets: [{name: regcred, namespace: other}]}\n"),
				"  conditions:\n  - {type: ImagePullSecretsUsable, status: \"False\", reason: SecretNotInPoolNamespace}\n"), QueryServices: allQS, CRDs: kwokCRDs},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{withResults(r, "WARNING SecretNotInPoolNamespace"), conditions(r)[decision.CondPullSecrets]}
			},
			want: []any{[]string(nil), "FALSE/SecretNotInPoolNamespace"},
		},
		"KeptObjectsAreUnchanged": {
			reason: "An observed object kept while required resources are missing is copied without status and server-owned metadata, its spec unchanged.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), NoRequired: true, Observed: map[string]string{
				"nodepool": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool, uid: u-1, resourceVersion: \"42\", generation: 3, labels: {e6data.io/pool: burst}, managedFields: [{manager: x}]}\nspec: {limits: {nodes: \"20\"}}\nstatus: {nodes: 3}\n",
			}},
			got: func(r *fnv1.RunFunctionResponse) any { return desired(r, "nodepool").Object },
			want: map[string]any{
				"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
				"metadata": map[string]any{"name": "burst-nodepool", "labels": map[string]any{"e6data.io/pool": "burst"}},
				"spec":     map[string]any{"limits": map[string]any{"nodes": "20"}},
			},
		},
		"ActiveWhileANewImageWarms": {
			reason: "An active pool stays Active while a newly added image warms; the message says so.",
			s: scenario{XR: withStatus(xpool("burst", "pools", basicSpec), "  phase: Active\n"), QueryServices: allQS, CRDs: kwokCRDs, Observed: map[string]string{
				"nodepool":                  "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nstatus: {conditions: [{type: Ready, status: \"True\"}]}\n",
				"nodeclass":                 "apiVersion: karpenter.kwok.sh/v1alpha1\nkind: KWOKNodeClass\nmetadata: {name: burst-nodeclass}\n",
				"capacity":                  "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: burst-capacity}\nstatus: {conditions: [{type: Ready, status: \"True\"}]}\n",
				"placeholder-priorityclass": "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: burst-placeholder}\n",
				"access-policy":             "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: burstpool-access.pools.burst}\n",
				"access-policy-binding":     "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: burstpool-access.pools.burst}\n",
			}},
			got:  func(r *fnv1.RunFunctionResponse) any { return status(r)["phase"] },
			want: "Active",
		},
		"CatalogOverrides": {
			reason: "Instance types from the input's catalogOverrides size pools like catalog types.",
			s: scenario{Input: testInput + "catalogOverrides: [{name: onprem-96x, cpu: \"96\", memory: 768Gi, arch: amd64}]\n",
				XR: xpool("burst", "pools", basicSpec+"  instanceConfig: {instanceType: onprem-96x}\n"), QueryServices: allQS, CRDs: kwokCRDs, Catalog: true},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{status(r)["derivedInstanceType"], nested(r, "nodepool", "spec", "limits")}
			},
			want: []any{"onprem-96x", map[string]any{"nodes": "8", "cpu": "768", "memory": "6Ti"}},
		},
		"ObservedPlaceholderReadiness": {
			reason: "Composed readiness comes from each object's own status: a NodePool whose Ready condition is False is not ready.",
			s: scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Observed: map[string]string{
				"nodepool": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-nodepool}\nstatus: {conditions: [{type: Ready, status: \"False\"}]}\n",
				"capacity": "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: burst-capacity}\nstatus: {conditions: [{type: Ready, status: \"True\"}]}\n",
			}},
			got: func(r *fnv1.RunFunctionResponse) any {
				return []any{r.GetDesired().GetResources()["nodepool"].GetReady().String(), r.GetDesired().GetResources()["capacity"].GetReady().String()}
			},
			want: []any{"READY_FALSE", "READY_TRUE"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := tc.s.run(t)
			if f := fatal(rsp); f != "" {
				t.Fatalf("%s\nFatal: %s", tc.reason, f)
			}
			if diff := cmp.Diff(tc.want, tc.got(rsp)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
