package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// vendorSettings are the golden tests' cluster settings, with pools of
// every namespace allowed to attach QueryServices of every namespace, so
// that the scenarios' QueryServices size the pools.
const vendorSettings = clusterSettings + "  " + attachAnywhere

var (
	autoModeCRDs = []string{decision.CRDNodePool, decision.CRDEKSNodeClass}
	gcpCRDs      = []string{decision.CRDNodePool, decision.CRDGCENodeClass}
)

// compatibilityOf is the compatible flag and message status reports for
// QueryService ns/name.
func compatibilityOf(t *testing.T, st map[string]any, ns, name string) (bool, string) {
	t.Helper()
	for _, a := range asList(st["attachedQueryServices"]) {
		m := a.(map[string]any)
		if ref, _ := m["queryService"].(map[string]any); ref["name"] == name && ref["namespace"] == ns {
			msg, _ := m["message"].(string)
			return m["compatible"] == true, msg
		}
	}
	t.Fatalf("status.attachedQueryServices does not report %s/%s: %v", ns, name, st["attachedQueryServices"])
	return false, ""
}

// TestVendorExecutorFitsKarpentersNode replays an executor that fits the
// allocatable model but not the node Karpenter would launch: Karpenter
// subtracts the DaemonSets of the cluster from a NodePool's types before it
// launches a node (kubernetes-sigs/karpenter v1.14.1 pkg/controllers/
// provisioning/scheduling/nodeclaim.go, daemonOverheadGroups), so an
// executor larger than what is left gets no NodeClaim and stays Pending. An m7i.2xlarge (8 vCPU, 32Gi,
// amd64, 58 ENI-limited pods) has 8000m - 90m = 7910m and 32768Mi - 2458Mi
// VM overhead - 893Mi (11 x 58 + 255) - 100Mi = 29317Mi allocatable
// (aws/karpenter-provider-aws pkg/providers/instancetype/types.go); an EKS
// cluster runs kube-proxy (100m) and aws-node (25m + 25m) on it
// (amazon-vpc-cni-k8s config/master/aws-k8s-cni.yaml), and the pool one
// warmup pod (5m, 16Mi): 7755m and 29301Mi are left for the executor.
func TestVendorExecutorFitsKarpentersNode(t *testing.T) {
	spec := "  maxExecutors: 4\n  allowedQueryServices:\n  - {name: edge, namespace: team-a}\n  instanceConfig: {instanceType: m7i.2xlarge}\n"
	cases := map[string]struct {
		reason   string
		settings string
		cpu, mem string
		want     bool
		message  string
	}{
		"BeyondKarpenterIsIncompatible": {
			reason: "7800m / 28Gi fitted the model (7905m without the add-ons) but not Karpenter's node (7755m): incompatible, with the figures.",
			cpu:    "7800m", mem: "28Gi",
			message: "m7i.2xlarge allocatable is 7.75 CPU / 28.6Gi",
		},
		"AtTheEdgeFits": {
			reason: "Exactly what is left runs.",
			cpu:    "7755m", mem: "29301Mi", want: true,
		},
		"OneMilliCPUBeyondTheEdge": {
			reason: "One milli-CPU more does not.",
			cpu:    "7756m", mem: "29301Mi",
		},
		"OneMiBeyondTheEdge": {
			reason: "One Mi more memory does not.",
			cpu:    "7755m", mem: "29302Mi",
		},
		"SettingReplacesTheAddOns": {
			reason:   "sizing.nodeDaemonSets names the cluster's DaemonSets instead of the EKS add-on defaults: 7910m - 400m - 5m = 7505m are left.",
			settings: "  sizing:\n    nodeDaemonSets:\n    - {name: kube-proxy, cpu: 100m}\n    - {name: node-agent, cpu: 300m, memory: 300Mi}\n",
			cpu:      "7505m", mem: "29001Mi", want: true,
		},
		"SettingIsExact": {
			reason:   "... and 1m more than that is refused.",
			settings: "  sizing:\n    nodeDaemonSets:\n    - {name: kube-proxy, cpu: 100m}\n    - {name: node-agent, cpu: 300m, memory: 300Mi}\n",
			cpu:      "7506m", mem: "29001Mi",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := qs("edge", "team-a", "burst", "pools", "ghcr.io/e6data/executor:3.1", tc.cpu, tc.mem, nil)
			s := scenario{XR: xpool("burst", "pools", spec), QueryServices: []string{q}, CRDs: awsCRDs, Catalog: true}
			if tc.settings != "" {
				s.Environment = []string{environmentConfig(decision.DefaultEnvironmentConfig, vendorSettings+tc.settings)}
			}
			ok, msg := compatibilityOf(t, status(s.run(t)), "team-a", "edge")
			if ok != tc.want || !strings.Contains(msg, tc.message) {
				t.Errorf("%s\ncompatible=%v (%q), want %v with %q", tc.reason, ok, msg, tc.want, tc.message)
			}
		})
	}
}

// autoModeViolations are the EKS Auto Mode rules a NodePool breaks, which
// the karpenter.sh CRD does not check (AWS, "Create a Node Pool for EKS
// Auto Mode", https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html:
// expireAfter plus terminationGracePeriod, 24h when unset, may not exceed
// 21 days; kubernetes.io/os is not a supported label; and "Learn about
// Amazon EKS Auto Mode Managed instances",
// https://docs.aws.amazon.com/eks/latest/userguide/automode-learn-instances.html:
// only types with more than 1 vCPU, no nano, micro or small).
func autoModeViolations(np *unstructured.Unstructured, cat *sizing.Catalog) []string {
	var out []string
	tmpl, _, _ := unstructured.NestedMap(np.Object, "spec", "template", "spec")
	expire, _ := tmpl["expireAfter"].(string)
	grace, _ := tmpl["terminationGracePeriod"].(string)
	if grace == "" {
		grace = "24h"
	}
	e, errE := time.ParseDuration(expire)
	g, errG := time.ParseDuration(grace)
	if expire == "" || expire == "Never" || errE != nil || errG != nil || e+g > 21*24*time.Hour {
		out = append(out, fmt.Sprintf("expireAfter %q + terminationGracePeriod %q exceeds 21 days", expire, grace))
	}
	reqs, _ := tmpl["requirements"].([]any)
	for _, r := range reqs {
		m := r.(map[string]any)
		switch m["key"] {
		case objects.LabelOS:
			out = append(out, "requirement kubernetes.io/os is not supported")
		case objects.LabelInstanceType:
			for _, v := range m["values"].([]any) {
				it, ok := cat.Lookup(v.(string))
				size := it.Name[strings.LastIndex(it.Name, ".")+1:]
				if !ok || it.CPU.CmpInt64(1) <= 0 || size == "nano" || size == "micro" || size == "small" {
					out = append(out, fmt.Sprintf("instance type %v is not one Auto Mode launches", v))
				}
			}
		}
	}
	return out
}

// TestVendorEKSAutoModeRules replays NodePools EKS Auto Mode refuses or
// never fills: a 720h (or Never) expireAfter with its 24h grace period, a
// kubernetes.io/os requirement, and types it never launches (reference
// 4.5's family r7gd before any QueryService attaches got r7gd.medium, one
// vCPU, and its placeholders stayed Pending with nothing saying why).
func TestVendorEKSAutoModeRules(t *testing.T) {
	aws, err := sizing.LoadCatalog(sizing.CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason      string
		spec        string
		expireAfter string
		wantType    string
		wantFailed  string
	}{
		"DefaultLifetime": {
			reason: "The shipped 720h expireAfter plus Auto Mode's 24h grace period is 31 days: the NodePool asks for at most 21.",
			spec:   "  minExecutors: 5\n  maxExecutors: 10\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceFamily: r7gd}\n", wantType: "r7gd.large",
		},
		"NeverExpires": {
			reason: "Never is more than 21 days too.",
			spec:   "  maxExecutors: 10\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceFamily: r7gd}\n", expireAfter: "Never", wantType: "r7gd.large",
		},
		"ShortLifetimeKept": {
			reason: "A lifetime within 21 days is kept as set.",
			spec:   "  maxExecutors: 10\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceFamily: m7g}\n", expireAfter: "100h", wantType: "m7g.large",
		},
		"PinnedOneVCPUTypeFails": {
			reason:     "A pinned type Auto Mode never launches fails the pool, saying why, instead of leaving placeholders Pending.",
			spec:       "  maxExecutors: 10\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceType: r7gd.medium}\n",
			wantFailed: "EKS Auto Mode never launches r7gd.medium: it has 1 vCPU and EKS Auto Mode launches only types with more than 1",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			settings := vendorSettings
			if tc.expireAfter != "" {
				settings += "  karpenter: {expireAfter: " + tc.expireAfter + "}\n"
			}
			rsp := scenario{Input: shippedInput(t), Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, settings)},
				XR: xpool("burst", "pools", tc.spec), CRDs: autoModeCRDs, Catalog: true}.run(t)
			st := status(rsp)
			if tc.wantFailed != "" {
				if msg, _ := st["message"].(string); st["phase"] != "Failed" || !strings.Contains(msg, tc.wantFailed) {
					t.Errorf("%s\nphase %v (%q), want Failed saying %q", tc.reason, st["phase"], msg, tc.wantFailed)
				}
				return
			}
			np := desired(rsp, "nodepool")
			if np == nil {
				t.Fatalf("%s\nno NodePool: %v", tc.reason, results(rsp))
			}
			if v := autoModeViolations(np, aws); len(v) > 0 {
				t.Errorf("%s\nEKS Auto Mode refuses the NodePool: %v", tc.reason, v)
			}
			if got := st["derivedInstanceType"]; got != tc.wantType {
				t.Errorf("%s\nderivedInstanceType %v, want %s", tc.reason, got, tc.wantType)
			}
		})
	}
}

// inputEnums are the values of every enum of the function input's settings,
// by their path in an EnvironmentConfig's data, read from the input CRD.
func inputEnums(t *testing.T) map[string][]string {
	t.Helper()
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "../../package/function/input/pool.fn.burstpool.io_inputs.yaml")), &crd); err != nil || len(crd.Spec.Versions) == 0 {
		t.Fatalf("cannot read the input CRD: %v", err)
	}
	out := map[string][]string{}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if vs, ok := s["enum"].([]any); ok {
			for _, v := range vs {
				out[path] = append(out[path], fmt.Sprint(v))
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, p := range props {
			if path == "" && (k == "metadata" || k == "apiVersion" || k == "kind" || k == "environmentConfig") {
				continue
			}
			walk(strings.TrimPrefix(path+"."+k, "."), p.(map[string]any))
		}
		// Enums of list items (catalogOverrides[].arch) are rendered by
		// the catalog tests, not here.
	}
	walk("", crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	return out
}

// TestVendorRenderMatrix renders a pool with every value of every enum of
// the settings, on every cloud environment of the golden tests, and checks
// every object against its upstream schema (CEL included: the GCENodeClass
// refuses a channel with an Ubuntu family) and, on EKS Auto Mode, against
// Auto Mode's rules that no schema carries.
func TestVendorRenderMatrix(t *testing.T) {
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatalf("cannot load the upstream schemas (see test/harness/schemacheck): %v", err)
	}
	aws, err := sizing.LoadCatalog(sizing.CloudAWS)
	if err != nil {
		t.Fatal(err)
	}
	kinds := reg.Kinds()
	enums := inputEnums(t)
	for _, want := range []string{"gcp.imageFamily", "gcp.imageChannel", "azure.imageFamily", "provisioning.cloud", "provisioning.method"} {
		if len(enums[want]) == 0 {
			t.Fatalf("the input CRD has no enum %s: %v", want, slices.Sorted(maps.Keys(enums)))
		}
	}
	spec := "  minExecutors: 1\n  maxExecutors: 4\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n"
	for _, path := range slices.Sorted(maps.Keys(enums)) {
		for _, value := range enums[path] {
			for _, env := range slices.Sorted(maps.Keys(environments)) {
				e := environments[env]
				t.Run(path+"="+value+"/"+env, func(t *testing.T) {
					settings := e.settings
					if settings == "" {
						settings = vendorSettings
					}
					data := map[string]any{}
					if err := yaml.Unmarshal([]byte(strings.ReplaceAll("\n"+settings, "\n  ", "\n")), &data); err != nil {
						t.Fatal(err)
					}
					setPath(data, strings.Split(path, "."), value)
					b, err := yaml.Marshal(data)
					if err != nil {
						t.Fatal(err)
					}
					indented := "  " + strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n  ") + "\n"
					rsp := scenario{Input: shippedInput(t), Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, indented)},
						XR: xpool("burst", "pools", spec), QueryServices: []string{qsAnalytics}, CRDs: e.crds, Catalog: true, KWOKCatalog: e.kwokCatalog}.run(t)
					for _, r := range results(rsp) {
						if strings.HasPrefix(r, "FATAL") {
							t.Errorf("Fatal result: %s", r)
						}
					}
					nc := desired(rsp, "nodeclass")
					autoMode := nc != nil && nc.GetAPIVersion() == "eks.amazonaws.com/v1"
					for _, n := range desiredNames(rsp) {
						u := desired(rsp, n)
						if slices.Contains(kinds, u.GroupVersionKind()) {
							if err := reg.Validate(u); err != nil {
								t.Errorf("emitted object %s is invalid: %v", n, err)
							}
						}
						if u.GetKind() == "NodePool" && u.GetAPIVersion() == "karpenter.sh/v1" && autoMode {
							if v := autoModeViolations(u, aws); len(v) > 0 {
								t.Errorf("EKS Auto Mode refuses NodePool %s: %v", n, v)
							}
						}
					}
				})
			}
		}
	}
}

// setPath sets data[p0][p1]... to v, creating maps on the way.
func setPath(data map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := data[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			data[k] = next
		}
		data = next
	}
	data[path[len(path)-1]] = v
}

// TestVendorGCPImageFamilies renders the GCENodeClass of every image family
// and channel the settings allow and checks it against the provider's CRD,
// whose CEL says "channel is only supported for family
// ContainerOptimizedOS" and "family requires either channel or version to
// be set" (cloudpilot-ai/karpenter-provider-gcp pkg/apis/v1alpha1/
// gcenodeclass.go, ImageSelectorTerm).
func TestVendorGCPImageFamilies(t *testing.T) {
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatal(err)
	}
	enums := inputEnums(t)
	for _, family := range enums["gcp.imageFamily"] {
		for _, channel := range enums["gcp.imageChannel"] {
			settings := vendorSettings + "  gcp: {imageFamily: " + family + ", imageChannel: " + channel + "}\n"
			rsp := scenario{Input: shippedInput(t), Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, settings)},
				XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: gcpCRDs, Catalog: true}.run(t)
			nc := desired(rsp, "nodeclass")
			if nc == nil {
				t.Fatalf("%s/%s: no GCENodeClass: %v", family, channel, results(rsp))
			}
			if err := reg.Validate(nc); err != nil {
				t.Errorf("%s/%s: the provider refuses the GCENodeClass: %v", family, channel, err)
			}
			terms, _, _ := unstructured.NestedSlice(nc.Object, "spec", "imageSelectorTerms")
			want := []any{map[string]any{"family": family, "version": "latest"}}
			if family == "ContainerOptimizedOS" {
				want = []any{map[string]any{"family": family, "channel": channel}}
			}
			if diff := cmp.Diff(want, terms); diff != "" {
				t.Errorf("%s/%s: imageSelectorTerms: -want, +got:\n%s", family, channel, diff)
			}
		}
	}
}

// TestVendorNodeAgentsPreemptExecutors replays a node packed with executors
// before its agents land (a QueryService with a new image attaches after
// the node filled): without a priority above the executors' the new
// warmup pod stays Pending and ImagesWarm never turns True. The scheduler
// preempts lower-priority pods only for a pod of higher priority whose
// class allows it (Kubernetes, "Pod Priority and Preemption":
// preemptionPolicy PreemptLowerPriority, the default). system-node-critical
// is not the default because GKE admits it only in namespaces with a
// ResourceQuota for it (Kubernetes, "Resource Quotas": limit priority class
// consumption by default), so each pool composes its own class.
func TestVendorNodeAgentsPreemptExecutors(t *testing.T) {
	spec := basicSpec + "  storageAgent: {enabled: true, image: ghcr.io/e6data/storage-agent:1.0}\n"
	cases := map[string]struct {
		reason   string
		settings string
		class    string
		composed bool
	}{
		"PoolClass": {
			reason: "Unset, the agents run at the pool's own class, which preempts executors.",
			class:  "burst-node-agent", composed: true,
		},
		"NamedClass": {
			reason:   "warmup.priorityClassName names an existing class (system-node-critical where the cluster admits it); none is composed.",
			settings: "  warmup: {helperImage: ghcr.io/burstpool/warm:v0.1.0, priorityClassName: system-node-critical}\n",
			class:    "system-node-critical",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: shippedInput(t), Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, vendorSettings+tc.settings)},
				XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: awsCRDs, Catalog: true}.run(t)
			agents := 0
			for _, n := range desiredNames(rsp) {
				u := desired(rsp, n)
				if u.GetKind() != "DaemonSet" {
					continue
				}
				agents++
				if got, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "priorityClassName"); got != tc.class {
					t.Errorf("%s\nDaemonSet %s runs at priority class %q, want %q", tc.reason, n, got, tc.class)
				}
			}
			if agents < 3 {
				t.Errorf("%s\n%d DaemonSets, want two warmups and the storage agent", tc.reason, agents)
			}
			pc := desired(rsp, "node-agent-priorityclass")
			if (pc != nil) != tc.composed {
				t.Fatalf("%s\nnode-agent PriorityClass composed: %v, want %v", tc.reason, pc != nil, tc.composed)
			}
			if pc == nil {
				return
			}
			v, _, _ := unstructured.NestedFieldNoCopy(pc.Object, "value")
			value := nestedNumber(map[string]any{"v": v}, "v")
			policy, _, _ := unstructured.NestedString(pc.Object, "preemptionPolicy")
			if pc.GetName() != tc.class || value <= 0 || value > 1000000000 || policy != "PreemptLowerPriority" {
				t.Errorf("%s\nPriorityClass %s value %d preemptionPolicy %s: want %s above executors (0), within user classes (1000000000), preempting", tc.reason, pc.GetName(), value, policy, tc.class)
			}
		})
	}
}

// TestVendorAzureMaxPods replays an AKSNodeClass that asks for 110 pods on
// a cluster whose Azure CNI gives every pod a node-subnet address: Azure
// reserves maxPods addresses per node in the subnet, and Karpenter's Azure
// provider defaults to 30 on that plugin, 250 on overlay and 110 on kubenet
// (Azure/karpenter-provider-azure pkg/utils/utils.go, GetMaxPods). The
// AKSNodeClass leaves it to that default unless azure.maxPods sets it.
func TestVendorAzureMaxPods(t *testing.T) {
	cases := map[string]struct {
		reason   string
		settings string
		want     any
	}{
		"ClusterDefault": {reason: "Unset: no maxPods, the provider's default for the cluster's network plugin."},
		"Set":            {reason: "azure.maxPods is written as set.", settings: "  azure: {maxPods: 50}\n", want: float64(50)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: shippedInput(t), Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, vendorSettings+tc.settings)},
				XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: []string{decision.CRDNodePool, decision.CRDAKSNodeClass}, Catalog: true}.run(t)
			nc := desired(rsp, "nodeclass")
			if nc == nil {
				t.Fatalf("%s\nno AKSNodeClass: %v", tc.reason, results(rsp))
			}
			if diff := cmp.Diff(tc.want, nc.Object["spec"].(map[string]any)["maxPods"]); diff != "" {
				t.Errorf("%s\nmaxPods: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestVendorEKSAutoModeTags replays a pool on a default EKS Auto Mode
// cluster: AWS's managed Auto Mode policies do not let the cluster IAM
// role apply user-defined tags (AWS, "Amazon EKS Auto Mode cluster IAM
// role", "Custom AWS tags for EKS Auto resources",
// https://docs.aws.amazon.com/eks/latest/userguide/auto-cluster-iam-role.html),
// so a NodeClass with spec.tags was not Ready and the pool launched
// nothing. The NodeClass carries tags only where eksAutoMode.clusterRoleTags
// says the role may apply them; the pool's nodes are found by the NodePool
// template's labels, which executors select, either way.
func TestVendorEKSAutoModeTags(t *testing.T) {
	spec := "  maxExecutors: 8\n  allowedQueryServices: [{name: analytics, namespace: team-a}]\n  instanceConfig: {instanceType: m7g.2xlarge}\n"
	const role = "  eksAutoMode:\n    role: AmazonEKSAutoNodeRole\n"
	if !strings.Contains(vendorSettings, role) {
		t.Fatalf("the vendor settings no longer hold %q", role)
	}
	identity := map[string]any{"e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools"}
	type want struct {
		Tags     map[string]any
		Warning  bool
		Labels   map[string]any
		Selector map[string]any
	}
	cases := map[string]struct {
		reason   string
		autoMode string
		want     want
	}{
		"DefaultHasNoTags": {
			reason: "A default Auto Mode cluster's role may not tag: no spec.tags.",
		},
		"TagsWithoutThePermission": {
			reason:   "Tags in the settings without clusterRoleTags are left out, and the pool warns, naming both settings.",
			autoMode: "    tags: {team: analytics}\n",
			want:     want{Warning: true},
		},
		"TagsWhereTheRoleMayApplyThem": {
			reason:   "With clusterRoleTags the NodeClass carries the pool's tag and the settings' tags.",
			autoMode: "    clusterRoleTags: true\n    tags: {team: analytics}\n",
			want:     want{Tags: map[string]any{"e6data.io/pool": "burst", "team": "analytics"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			settings := strings.Replace(vendorSettings, role, role+tc.autoMode, 1)
			rsp := scenario{Input: shippedInput(t), Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, settings)},
				XR: xpool("burst", "pools", spec), QueryServices: []string{qsAnalytics}, CRDs: autoModeCRDs, Catalog: true}.run(t)
			nc, np := desired(rsp, "nodeclass"), desired(rsp, "nodepool")
			if nc == nil || np == nil {
				t.Fatalf("%s\nno NodeClass or NodePool: %v", tc.reason, results(rsp))
			}
			tags, _, _ := unstructured.NestedMap(nc.Object, "spec", "tags")
			labels, _, _ := unstructured.NestedMap(np.Object, "spec", "template", "metadata", "labels")
			sched, _ := status(rsp)["executorScheduling"].(map[string]any)
			got := want{Tags: tags, Labels: labels, Selector: sched["nodeSelector"].(map[string]any)}
			for _, r := range results(rsp) {
				got.Warning = got.Warning || (strings.Contains(r, "EKSAutoModeTagsNotApplied") && strings.Contains(r, "data.eksAutoMode.clusterRoleTags"))
			}
			tc.want.Labels, tc.want.Selector = identity, identity
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
