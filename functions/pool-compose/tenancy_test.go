package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/warmup"
)

// tenancyInput is a function input whose only tenancy grant is the
// reference's: pools of e6-pools attach QueryServices of workspace-*, and
// may send objects to the workload cluster west.
const tenancyInput = `
apiVersion: pool.fn.burstpool.io/v1beta1
kind: Input
clusterName: test-cluster
provisioning: {clusterId: "123456"}
warmup: {helperImage: ghcr.io/burstpool/warm:v0.1.0}
tenancy:
  maxExecutors: 100
  namespaces:
  - names: [e6-pools]
    attachFrom: ["workspace-*"]
    workloadClusters: [west]
    maxNodes: 10
    instanceFamilies: [r7gd, m7g.2xlarge]
`

// TestClaimRefusedOnTheClaim runs whole requests: a refused claim is
// Failed with ClaimNotAllowed, says which setting forbids it, and keeps
// every object it composed (Crossplane deletes what a function leaves out
// of its desired state, so keeping means desiring each as observed).
func TestClaimRefusedOnTheClaim(t *testing.T) {
	observed := map[string]string{
		"nodepool":                 "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst-pool-nodepool}\nspec: {}\n",
		"remote-nodepool-e6-pools": "apiVersion: kubernetes.crossplane.io/v1alpha2\nkind: Object\nmetadata: {name: west-nodepool-burst-pool}\nspec: {}\n",
	}
	const spec = "  maxExecutors: 4\n  queryServiceSelector: {matchLabels: {e6data.io/pool: burst-pool}}\n"
	cases := map[string]struct {
		reason string
		spec   string
		want   summary
	}{
		"AdminWorkloadCluster": {
			reason: "A claim naming a ProviderConfig its entry does not list composes nowhere, keeps what it has, and names the setting.",
			spec:   spec + "  workloadCluster: {providerConfigName: admin}\n",
			want: summary{Objects: []string{"nodepool", "remote-nodepool-e6-pools"}, Phase: "Failed", Conditions: map[string]string{decision.CondProvisioned: "FALSE/ClaimNotAllowed"},
				Results: []string{`WARNING ClaimNotAllowed: the Composition's function input field tenancy.namespaces[0].workloadClusters does not list "admin"`}},
		},
		"HugePool": {
			reason: "maxExecutors 2147483647 composes no placeholder Deployment and no NodePool of that size.",
			spec:   "  maxExecutors: 2147483647\n  minExecutors: 2147483647\n  queryServiceSelector: {matchLabels: {e6data.io/pool: burst-pool}}\n",
			want: summary{Objects: []string{"nodepool", "remote-nodepool-e6-pools"}, Phase: "Failed", Conditions: map[string]string{decision.CondProvisioned: "FALSE/ClaimNotAllowed"},
				Results: []string{"WARNING ClaimNotAllowed: the Composition's function input field tenancy.maxExecutors allows at most 100 executors per Pool"}},
		},
		"ClusterID": {
			reason: "A cluster ID other than the settings' own, not listed, is refused.",
			spec:   spec + "  provisioning: {clusterId: \"999\"}\n",
			want: summary{Objects: []string{"nodepool", "remote-nodepool-e6-pools"}, Phase: "Failed", Conditions: map[string]string{decision.CondProvisioned: "FALSE/ClaimNotAllowed"},
				Results: []string{`WARNING ClaimNotAllowed: the Composition's function input field tenancy.namespaces[0].clusterIds does not list "999"`}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: tenancyInput, XR: xpool("burst-pool", "e6-pools", tc.spec), CRDs: kwokCRDs, Observed: observed}.run(t)
			if diff := cmp.Diff(tc.want, summarize(rsp, tc.want)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\nresults: %v", tc.reason, diff, results(rsp))
			}
			for n, y := range observed {
				if got, want := desired(rsp, n), mustStruct(t, y).AsMap(); got == nil || !cmp.Equal(want, got.Object) {
					t.Errorf("%s\n%s is not kept as observed: %v", tc.reason, n, got)
				}
			}
		})
	}
}

// TestConsentToAttach: a QueryService attaches only when the pool allows
// it, its poolRef names the pool, and the settings let the pool attach
// from its namespace; the status reports sizes only of QueryServices that
// point at the pool, and says nothing of where others point or, outside
// the pool's namespace, whether they exist.
func TestConsentToAttach(t *testing.T) {
	label := map[string]string{qsv1alpha1.LabelPool: "burst-pool"}
	const spec = "  maxExecutors: 4\n  queryServiceSelector: {matchLabels: {e6data.io/pool: burst-pool}}\n" +
		"  allowedQueryServices: [{name: private, namespace: team-x}, {name: missing, namespace: team-x}, {name: other, namespace: workspace-b}]\n"
	qss := []string{
		qs("analytics", "workspace-a", "burst-pool", "e6-pools", "ghcr.io/e6data/executor:3.1", "8", "60Gi", label),
		qs("own", "e6-pools", "burst-pool", "", "ghcr.io/e6data/executor:3.2", "4", "30Gi", label),
		qs("stranger", "team-x", "burst-pool", "e6-pools", "ghcr.io/stranger/exec:1", "4", "30Gi", label),
		qs("private", "team-x", "secret-pool", "team-x", "ghcr.io/stranger/exec:2", "16", "100Gi", nil),
		qs("other", "workspace-b", "elsewhere", "workspace-b", "ghcr.io/e6data/executor:9", "16", "100Gi", nil),
	}
	rsp := scenario{Input: tenancyInput, XR: xpool("burst-pool", "e6-pools", spec), QueryServices: qss, CRDs: kwokCRDs}.run(t)

	type report struct {
		Attached bool
		CPU      any
		Message  string
	}
	got := map[string]report{}
	for _, r := range status(rsp)["attachedQueryServices"].([]any) {
		m := r.(map[string]any)
		ref := m["queryService"].(map[string]any)
		msg, _ := m["message"].(string)
		got[ref["namespace"].(string)+"/"+ref["name"].(string)] = report{Attached: m["attached"] == true, CPU: m["requiredCpu"], Message: msg}
	}
	want := map[string]report{
		"e6-pools/own":          {Attached: true, CPU: "4"},
		"workspace-a/analytics": {Attached: true, CPU: "8"},
		"team-x/stranger": {Message: "the cluster's settings do not let pools of namespace e6-pools attach QueryServices of namespace team-x: " +
			"the platform team lists it in tenancy.namespaces[].attachFrom of the entry for e6-pools"},
		"team-x/private": {Message: "allowed, but QueryService team-x/private does not exist or its spec.executor.poolRef does not name this pool: " +
			"its owners set it to {name: burst-pool, namespace: e6-pools} to burst onto this pool"},
		"team-x/missing": {Message: "allowed, but QueryService team-x/missing does not exist or its spec.executor.poolRef does not name this pool: " +
			"its owners set it to {name: burst-pool, namespace: e6-pools} to burst onto this pool"},
		"workspace-b/other": {Message: "allowed, but QueryService workspace-b/other does not exist or its spec.executor.poolRef does not name this pool: " +
			"its owners set it to {name: burst-pool, namespace: e6-pools} to burst onto this pool"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status.attachedQueryServices: -want, +got:\n%s", diff)
	}

	var warmed []string
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, decision.WarmupPrefix) {
			warmed = append(warmed, desired(rsp, n).GetAnnotations()[warmup.AnnotationImage])
		}
	}
	wantWarm := []string{"ghcr.io/e6data/executor:3.1", "ghcr.io/e6data/executor:3.2"}
	if diff := cmp.Diff(wantWarm, warmed, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("warmed images: only those of attached QueryServices, -want, +got:\n%s", diff)
	}
}

// TestWarmSetBounded: however many QueryServices attach, a pool warms at
// most warmup.maxImages images (32 by default), its own cachedImages
// first, and its ImagesWarm condition names what it left out.
func TestWarmSetBounded(t *testing.T) {
	label := map[string]string{qsv1alpha1.LabelPool: "burst-pool"}
	var qss []string
	for i := range 40 {
		qss = append(qss, qs(fmt.Sprintf("q%02d", i), "workspace-a", "burst-pool", "e6-pools", fmt.Sprintf("ghcr.io/e6data/executor:%02d", i), "4", "30Gi", label))
	}
	const spec = "  maxExecutors: 4\n  queryServiceSelector: {matchLabels: {e6data.io/pool: burst-pool}}\n  imageConfig: {cachedImages: [ghcr.io/e6data/own:1]}\n"
	cases := map[string]struct {
		reason    string
		input     string
		wantWarm  int
		wantOwn   bool
		wantCond  string
		wantEvent string
	}{
		"Default": {
			reason: "Without warmup.maxImages, 32 images are warmed: the pool's own and 31 of the QueryServices'.",
			input:  tenancyInput, wantWarm: 32, wantOwn: true, wantCond: "FALSE/WarmSetBounded",
			wantEvent: "WARNING WarmSetBounded: EnvironmentConfig burstpool field data.warmup.maxImages (32) bounds the warm set: ghcr.io/e6data/executor:31, ghcr.io/e6data/executor:32, ghcr.io/e6data/executor:33, ghcr.io/e6data/executor:34, ghcr.io/e6data/executor:35 and 4 more are not warmed",
		},
		"Setting": {
			reason: "warmup.maxImages 2 warms the pool's own image and one more.",
			input:  strings.Replace(tenancyInput, "warmup: {", "warmup: {maxImages: 2, ", 1), wantWarm: 2, wantOwn: true, wantCond: "FALSE/WarmSetBounded",
			wantEvent: "WARNING WarmSetBounded: the Composition's function input field warmup.maxImages (2) bounds the warm set",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: tc.input, XR: xpool("burst-pool", "e6-pools", spec), QueryServices: qss, CRDs: kwokCRDs}.run(t)
			warm, own := 0, false
			for _, n := range desiredNames(rsp) {
				if strings.HasPrefix(n, decision.WarmupPrefix) {
					warm++
					own = own || desired(rsp, n).GetAnnotations()[warmup.AnnotationImage] == "ghcr.io/e6data/own:1"
				}
			}
			got := map[string]any{"warm": warm, "own": own, "cond": conditions(rsp)[decision.CondImagesWarm], "event": slices.ContainsFunc(results(rsp), func(r string) bool { return strings.HasPrefix(r, tc.wantEvent) })}
			want := map[string]any{"warm": tc.wantWarm, "own": tc.wantOwn, "cond": tc.wantCond, "event": true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\nresults: %v", tc.reason, diff, results(rsp))
			}
		})
	}
}

// TestTenantsDocExample runs docs/tenants.md's worked EnvironmentConfig:
// the reference's pool in e6-pools attaches a workspace-* QueryService,
// and a tenant-b Pool naming the ProviderConfig admin is refused with the
// message the page shows.
func TestTenantsDocExample(t *testing.T) {
	doc := readFile(t, "../../docs/tenants.md")
	_, rest, _ := strings.Cut(doc, "### A worked EnvironmentConfig")
	_, block, _ := strings.Cut(rest, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	_, data, ok := strings.Cut(block, "data:\n")
	if !ok {
		t.Fatal("docs/tenants.md has no worked EnvironmentConfig")
	}
	env := []string{environmentConfig(decision.DefaultEnvironmentConfig, data)}
	label := map[string]string{qsv1alpha1.LabelPool: "burst-pool"}
	qss := []string{qs("analytics-cluster", "workspace-analytics-prod", "burst-pool", "e6-pools", "img:1", "8", "60Gi", label)}
	const selector = "  queryServiceSelector: {matchLabels: {e6data.io/pool: burst-pool}}\n"

	rsp := scenario{Input: shippedInput(t), Environment: env, XR: xpool("burst-pool", "e6-pools", "  maxExecutors: 20\n"+selector), QueryServices: qss, CRDs: awsCRDs}.run(t)
	if got := tenancyAttached(rsp); !cmp.Equal(got, map[string]bool{"workspace-analytics-prod/analytics-cluster": true}) {
		t.Errorf("e6-pools/burst-pool attaches %v, want workspace-analytics-prod/analytics-cluster\nresults: %v", got, results(rsp))
	}

	rsp = scenario{Input: shippedInput(t), Environment: env, XR: xpool("burst-pool", "tenant-b", "  maxExecutors: 4\n  workloadCluster: {providerConfigName: admin}\n"+selector), CRDs: awsCRDs}.run(t)
	_, decides, _ := strings.Cut(doc, "## What the platform team decides")
	_, shown, _ := strings.Cut(decides, "kubectl get pool burst-pool -n tenant-b -o jsonpath='{.status.message}'\n")
	shown, _, _ = strings.Cut(shown, "\n")
	if got, _ := status(rsp)["message"].(string); got != shown {
		t.Errorf("tenant-b's refused Pool says:\n%s\ndocs/tenants.md shows:\n%s", got, shown)
	}
}

// tenancyAttached reads which QueryServices the response attaches.
func tenancyAttached(rsp *fnv1.RunFunctionResponse) map[string]bool {
	out := map[string]bool{}
	l, _ := status(rsp)["attachedQueryServices"].([]any)
	for _, r := range l {
		m := r.(map[string]any)
		ref := m["queryService"].(map[string]any)
		if m["attached"] == true {
			out[ref["namespace"].(string)+"/"+ref["name"].(string)] = true
		}
	}
	return out
}

// TestDerivedTypeWithinFamilies: a pool that names no type is sized only
// from the families tenancy.instanceFamilies allows, and a setting that
// allows none of the catalog fails the pool saying so.
func TestDerivedTypeWithinFamilies(t *testing.T) {
	label := map[string]string{qsv1alpha1.LabelPool: "burst-pool"}
	qss := []string{qs("analytics", "e6-pools", "burst-pool", "e6-pools", "img:1", "8", "60Gi", label)}
	const spec = "  maxExecutors: 4\n  queryServiceSelector: {matchLabels: {e6data.io/pool: burst-pool}}\n"
	cases := map[string]struct {
		reason     string
		families   string
		wantPrefix string
		wantCond   string
	}{
		"OneFamily": {
			reason:   "Only r6i is allowed: the derived type is an r6i.",
			families: "[r6i]", wantPrefix: "r6i.", wantCond: "TRUE/KarpenterNodePool",
		},
		"NoneOfTheCatalog": {
			reason:   "A family the catalog lacks leaves nothing to size from: the pool fails and says why.",
			families: "[zz9]", wantCond: "FALSE/SizingFailed",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tenancyInput + "aws: {role: node-role}\n"
			in = strings.Replace(in, "instanceFamilies: [r7gd, m7g.2xlarge]", "instanceFamilies: "+tc.families, 1)
			rsp := scenario{Input: in, XR: xpool("burst-pool", "e6-pools", spec), QueryServices: qss, CRDs: awsCRDs, Catalog: true}.run(t)
			typ, _ := status(rsp)["derivedInstanceType"].(string)
			got := map[string]any{"prefix": tc.wantPrefix != "" && strings.HasPrefix(typ, tc.wantPrefix), "cond": conditions(rsp)[decision.CondProvisioned]}
			want := map[string]any{"prefix": tc.wantPrefix != "", "cond": tc.wantCond}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nderived %q: -want, +got:\n%s\nresults: %v", tc.reason, typ, diff, results(rsp))
			}
		})
	}
}

// TestInheritNeedsConsent: spec.inheritNodeConfigFrom takes a
// QueryService's instance type only when it points at the pool from a
// namespace the settings allow; otherwise the pool learns nothing of it.
func TestInheritNeedsConsent(t *testing.T) {
	label := map[string]string{qsv1alpha1.LabelPool: "burst-pool"}
	withType := func(y string) string {
		return strings.Replace(y, "  executor:\n", "  executor:\n    instanceType: r7gd.8xlarge\n", 1)
	}
	cases := map[string]struct {
		reason string
		qs     string
		want   string
	}{
		"PointsHereAllowedNamespace": {
			reason: "A QueryService of an allowed namespace that points here lends its type.",
			qs:     withType(qs("analytics", "workspace-a", "burst-pool", "e6-pools", "img:1", "8", "60Gi", label)),
			want:   "r7gd.8xlarge",
		},
		"PointsElsewhere": {
			reason: "A QueryService that points at another pool lends nothing.",
			qs:     withType(qs("analytics", "workspace-a", "other", "workspace-a", "img:1", "8", "60Gi", nil)),
		},
		"NamespaceNotAllowed": {
			reason: "A QueryService of a namespace the settings do not allow lends nothing, even pointing here.",
			qs:     withType(qs("analytics", "team-x", "burst-pool", "e6-pools", "img:1", "8", "60Gi", label)),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q := decision.DecodeQueryService(mustStruct(t, tc.qs))
			in := decision.Input{Pool: "burst-pool", Namespace: "e6-pools", QueryServices: []decision.QueryService{q},
				Spec: poolv1alpha1.PoolSpec{InheritNodeConfigFrom: &poolv1alpha1.QueryServiceReference{Name: "analytics", Namespace: q.Namespace}}}
			cfg := &v1beta1.Input{Tenancy: &v1beta1.Tenancy{Namespaces: []v1beta1.TenantNamespaces{{Names: []string{"e6-pools"}, AttachFrom: []string{"workspace-*"}}}}}
			if got := decision.InheritedType(in, decision.TenantOf(cfg, "e6-pools")); got != tc.want {
				t.Errorf("%s\ninheritedType(...) = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}
