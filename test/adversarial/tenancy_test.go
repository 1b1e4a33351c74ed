package adversarial

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/apiserver"
	"github.com/burstpool/burstpool/test/harness/fnrun"
	"github.com/burstpool/burstpool/test/harness/gomod"
)

// The owner's pool: the reference's 4.1 layout, a pool in e6-pools that
// selects QueryServices by the label e6data.io/pool=burst-pool, the label
// the reference tells every QueryService that points at a pool to carry.
const (
	tenancyPoolNS   = "e6-pools"
	tenancyPool     = "burst-pool"
	tenancyOwnQS    = "analytics"
	tenancyOwnImage = "registry.example.com/e6data/executor:3.1"
	// The stranger: a tenant that may create QueryServices in its own
	// namespace only.
	tenancyStrangerNS    = "tenant-x"
	tenancyStrangerImage = "registry.example.com/stranger/exec:1"
)

// tenancyCluster starts an API server with the CRDs the function reads
// (QueryServices, EnvironmentConfigs, Karpenter's and LKE's node pools for
// detection, the Pool claim), creates the namespaces and objects, and
// returns a client of it.
func tenancyCluster(t *testing.T, objects ...client.Object) client.Client {
	t.Helper()
	root := gomod.RootForTest(t)
	up := filepath.Join(root, "test", "crds", "upstream")
	env := apiserver.Start(t,
		filepath.Join(root, "examples", "crds"),
		filepath.Join(root, "apis", "crds"),
		filepath.Join(root, "package", "provider", "crds"),
		filepath.Join(up, "crossplane", "apiextensions.crossplane.io_environmentconfigs.yaml"),
		filepath.Join(up, "karpenter.sh_nodepools.yaml"),
		filepath.Join(up, "karpenter.kwok.sh_kwoknodeclasses.yaml"),
		filepath.Join(up, "lke.linode.upbound.io_nodepools.yaml"),
	)
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fixture.CreateNamespaces(t, c, tenancyPoolNS, tenancyStrangerNS)
	fixture.Create(t, c, objects...)
	return c
}

// decode decodes one YAML object.
func decode(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// tenancySettings is the cluster's EnvironmentConfig: a kwok cluster with
// Karpenter, and data appended (indented two spaces).
func tenancySettings(t *testing.T, data string) client.Object {
	t.Helper()
	return settingsOf(t, "burstpool", "  provisioning: {cloud: kwok, method: karpenter}\n"+data)
}

// tenancyQS is the QueryService o describes, labelled for and pointing at
// o.Pool, the owner's pool when o names none.
func tenancyQS(t *testing.T, o fixture.QueryServiceOptions) client.Object {
	t.Helper()
	if o.Pool == (fixture.Pool{}) {
		o.Pool = fixture.Pool{Name: tenancyPool, Namespace: tenancyPoolNS}
	}
	o.Labels = map[string]string{qsv1alpha1.LabelPool: o.Pool.Name}
	return fixture.Unstructured(t, fixture.QueryService(o))
}

// tenancyCompose runs one composition of the owner's pool with spec as the
// function sees it from the API server.
func tenancyCompose(t *testing.T, c client.Client, spec string) (status map[string]any, desired map[string]*unstructured.Unstructured, conds map[string]string) {
	t.Helper()
	xr, err := fnrun.XPool(tenancyPool, tenancyPoolNS, spec)
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := fnrun.Start(t).Compose(t.Context(), c, fnrun.Request{XR: xr})
	if err != nil {
		t.Fatal(err)
	}
	conds = map[string]string{}
	for typ, cd := range fnrun.Conditions(rsp) {
		conds[typ] = cd.GetReason() + ": " + cd.GetMessage()
	}
	return fnrun.Status(rsp), fnrun.Desired(rsp), conds
}

// tenancyReports reads status.attachedQueryServices by namespace/name.
func tenancyReports(status map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	l, _ := status["attachedQueryServices"].([]any)
	for _, r := range l {
		m, _ := r.(map[string]any)
		ref, _ := m["queryService"].(map[string]any)
		out[fmt.Sprintf("%v/%v", ref["namespace"], ref["name"])] = m
	}
	return out
}

// warmedImages are the images the desired warmup DaemonSets warm.
func warmedImages(desired map[string]*unstructured.Unstructured) []string {
	var out []string
	for n, u := range desired {
		if !strings.HasPrefix(n, "warmup-") {
			continue
		}
		out = append(out, u.GetAnnotations()["e6data.io/image"])
	}
	return out
}

// TestStrangerCopyingTheLabelNeverAttaches replays "Attach to someone
// else's pool by copying a label": a tenant labels its QueryService
// e6data.io/pool=burst-pool and points its poolRef at e6-pools/burst-pool,
// whose queryServiceSelector matches that label in every namespace. The
// cluster's settings list no namespace the pool may attach from, so only
// its own namespace's QueryServices attach: the stranger is not attached,
// its image is not warmed (with the owner's pull secret), and the status
// reports it without its size.
func TestStrangerCopyingTheLabelNeverAttaches(t *testing.T) {
	c := tenancyCluster(t,
		tenancySettings(t, ""),
		tenancyQS(t, fixture.QueryServiceOptions{Namespace: tenancyPoolNS, Name: tenancyOwnQS, Image: tenancyOwnImage, CPU: "4"}),
		tenancyQS(t, fixture.QueryServiceOptions{Namespace: tenancyStrangerNS, Name: "copycat", Image: tenancyStrangerImage, CPU: "30"}),
	)
	status, desired, _ := tenancyCompose(t, c, `maxExecutors: 4
imageConfig: {autoCollectImages: true, pullSecret: {name: owner-registry}}
queryServiceSelector: {matchLabels: {e6data.io/pool: burst-pool}}`)

	reports := tenancyReports(status)
	own, stranger := reports[tenancyPoolNS+"/"+tenancyOwnQS], reports[tenancyStrangerNS+"/copycat"]
	type seen struct {
		OwnAttached, StrangerAttached bool
		StrangerSize                  any
		Warmed                        []string
	}
	got := seen{OwnAttached: own["attached"] == true, StrangerAttached: stranger["attached"] == true, StrangerSize: stranger["requiredCpu"], Warmed: warmedImages(desired)}
	want := seen{OwnAttached: true, Warmed: []string{tenancyOwnImage}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the stranger copying the pool's label: -want, +got:\n%s\nstatus.attachedQueryServices: %v", diff, status["attachedQueryServices"])
	}
}

// TestClaimBeyondTheSettingsIsRefused replays "Send composed objects to
// another cluster or cloud account": a tenant's Pool names a
// provider-kubernetes ProviderConfig, an LKE cluster ID, or a cloud the
// cluster's settings do not grant its namespace (they have no
// tenancy.namespaces entry for it, so it may choose nothing beyond the
// settings' own kwok and Karpenter). The claim is refused with
// ClaimNotAllowed naming the setting, and nothing is composed for that
// target.
func TestClaimBeyondTheSettingsIsRefused(t *testing.T) {
	c := tenancyCluster(t,
		tenancySettings(t, ""),
		tenancyQS(t, fixture.QueryServiceOptions{Namespace: tenancyPoolNS, Name: tenancyOwnQS, Image: tenancyOwnImage, CPU: "4"}),
	)
	const base = "maxExecutors: 4\nallowedQueryServices: [{name: analytics}]\n"
	cases := map[string]struct {
		reason  string
		spec    string
		setting string
		// forbidden is a value no desired object may carry.
		forbidden string
	}{
		"AdminProviderConfig": {
			reason:    "A ProviderConfig the entry does not list (an admin kubeconfig) receives no Object.",
			spec:      base + "workloadCluster: {providerConfigName: admin}",
			setting:   `EnvironmentConfig burstpool field data.tenancy.namespaces has no entry for namespace e6-pools, so its Pools may not set spec.workloadCluster.providerConfigName to "admin"`,
			forbidden: "admin",
		},
		"ForeignLKECluster": {
			reason:    "An LKE cluster ID of another account gets no node pool.",
			spec:      base + "provisioning: {cloud: linode, method: lke, manageNodePool: true, clusterId: \"999999\"}\nnodeSelector: {lke.linode.com/pool-id: \"1\"}",
			setting:   `EnvironmentConfig burstpool field data.tenancy.namespaces has no entry for namespace e6-pools, so its Pools may not set spec.provisioning.clusterId to "999999"`,
			forbidden: "999999",
		},
		"OtherCloud": {
			reason:    "A cloud other than the cluster's gets no NodeClass of that cloud.",
			spec:      base + "provisioning: {cloud: aws, method: karpenter}",
			setting:   `EnvironmentConfig burstpool field data.tenancy.namespaces has no entry for namespace e6-pools, so its Pools may not set spec.provisioning.cloud to "aws"`,
			forbidden: "EC2NodeClass",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, desired, conds := tenancyCompose(t, c, tc.spec)
			got := map[string]any{"phase": status["phase"], "refused": strings.HasPrefix(conds["NodesProvisioned"], "ClaimNotAllowed: "+tc.setting)}
			want := map[string]any{"phase": "Failed", "refused": true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\nNodesProvisioned: %s", tc.reason, diff, conds["NodesProvisioned"])
			}
			for n, u := range desired {
				b, err := yaml.Marshal(u.Object)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(b), tc.forbidden) {
					t.Errorf("%s\ndesired %s carries %q:\n%s", tc.reason, n, tc.forbidden, b)
				}
			}
		})
	}
}

// TestHugePoolIsRefused replays "Size without limit": a Pool of
// maxExecutors and minExecutors 2147483647. The API server refuses the
// claim (the Pool schema's maximum), and a composite that reaches the
// function anyway is refused on the claim and composes no placeholder
// Deployment or NodePool of that size.
func TestHugePoolIsRefused(t *testing.T) {
	c := tenancyCluster(t, tenancySettings(t, ""), tenancyQS(t, fixture.QueryServiceOptions{Namespace: tenancyPoolNS, Name: tenancyOwnQS, Image: tenancyOwnImage, CPU: "4"}))
	const spec = "maxExecutors: 2147483647\nminExecutors: 2147483647\nallowedQueryServices: [{name: analytics}]"

	claim := fixture.Pool{Name: "huge", Namespace: tenancyPoolNS}.Claim(map[string]any{
		"maxExecutors": int64(2147483647), "minExecutors": int64(2147483647), "allowedQueryServices": []any{map[string]any{"name": "analytics"}}})
	err := c.Create(t.Context(), claim)
	if err == nil || !strings.Contains(err.Error(), "spec.maxExecutors") {
		t.Errorf("the API server accepted a Pool of 2147483647 executors (error %v), want it refused on spec.maxExecutors", err)
	}

	status, desired, conds := tenancyCompose(t, c, spec)
	if got := conds["NodesProvisioned"]; !strings.HasPrefix(got, "ClaimNotAllowed: EnvironmentConfig burstpool field data.tenancy.maxExecutors allows at most 1000") {
		t.Errorf("phase %v, NodesProvisioned %q: want ClaimNotAllowed naming data.tenancy.maxExecutors", status["phase"], got)
	}
	for n, u := range desired {
		if r, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok && r > 1000 {
			t.Errorf("desired %s %s asks for %d replicas", u.GetKind(), n, r)
		}
		if nodes, ok, _ := unstructured.NestedString(u.Object, "spec", "limits", "nodes"); ok && len(nodes) > 4 {
			t.Errorf("desired %s %s allows %s nodes", u.GetKind(), n, nodes)
		}
	}
}

// TestListingAStrangerByNameRevealsNothing replays "Learn about
// QueryServices that never agreed to anything": the pool lists another
// tenant's QueryService by name in allowedQueryServices and in
// inheritNodeConfigFrom. That QueryService points at its own pool, so the
// pool's status shows neither its size, nor where it points, nor its
// instance type, nor even that it exists: it reads as one that does not.
func TestListingAStrangerByNameRevealsNothing(t *testing.T) {
	c := tenancyCluster(t,
		tenancySettings(t, ""),
		tenancyQS(t, fixture.QueryServiceOptions{Namespace: tenancyStrangerNS, Name: "secret", Image: tenancyStrangerImage, CPU: "30", Pool: fixture.Pool{Name: "secret-pool", Namespace: tenancyStrangerNS}, InstanceType: "r7gd.16xlarge"}),
	)
	status, _, conds := tenancyCompose(t, c, fmt.Sprintf(`maxExecutors: 4
inheritNodeConfigFrom: {name: secret, namespace: %s}
allowedQueryServices: [{name: secret, namespace: %s}, {name: ghost, namespace: %s}]`, tenancyStrangerNS, tenancyStrangerNS, tenancyStrangerNS))

	reports := tenancyReports(status)
	secret, _ := reports[tenancyStrangerNS+"/secret"]["message"].(string)
	ghost, _ := reports[tenancyStrangerNS+"/ghost"]["message"].(string)
	if strings.ReplaceAll(ghost, "ghost", "secret") != secret {
		t.Errorf("an existing stranger reads differently from a missing one:\n%s\n%s", secret, ghost)
	}

	b, err := yaml.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	shown := string(b)
	for _, c := range conds {
		shown += "\n" + c
	}
	for _, secret := range []string{"secret-pool", "r7gd.16xlarge", "requiredCpu: \"30\"", "requiredMemory"} {
		if strings.Contains(shown, secret) {
			t.Errorf("the pool's status or conditions reveal %q of the stranger's QueryService:\n%s", secret, shown)
		}
	}
}
