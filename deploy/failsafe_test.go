package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// TestFailsafeManifest checks failsafe.yaml: every object is valid against
// Kubernetes' schemas; the fail-safe's role grants exactly what it does
// (list pods, nodes and PoolCapacities; patch pods and nodes; read the
// provider's Lease by name) to its own
// account, in the provider's namespace, the account its admission policy
// and executor-gate.yaml's guard name; it runs /failsafe from the image
// of the Provider the Configuration depends on, two replicas spread over
// nodes and kept off pool nodes, one kept through disruptions.
func TestFailsafeManifest(t *testing.T) {
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Account         string
		Rules           []string
		BoundTo         []string
		PolicyAccount   string
		Image, Command  string
		Replicas        int64
		Spread, OffPool bool
		BudgetKeeps     int64
	}
	var got summary
	var podLabels, pdbSel map[string]string
	var pdbMin int64
	for _, u := range objects(t, "failsafe.yaml") {
		if err := reg.Validate(u); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		switch u.GetKind() {
		case "ServiceAccount":
			got.Account = u.GetNamespace() + "/" + u.GetName()
		case "ClusterRole", "Role":
			got.Rules = append(got.Rules, flatRules(t, u)...)
		case "ClusterRoleBinding", "RoleBinding":
			subs, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			for _, s := range subs {
				s := s.(map[string]any)
				got.BoundTo = append(got.BoundTo, s["namespace"].(string)+"/"+s["name"].(string))
			}
		case "ValidatingAdmissionPolicy":
			conds, _, _ := unstructured.NestedSlice(u.Object, "spec", "matchConditions")
			for _, c := range conds {
				e := c.(map[string]any)["expression"].(string)
				if i := strings.Index(e, "'system:serviceaccount:"); i >= 0 {
					got.PolicyAccount = strings.TrimSuffix(strings.TrimPrefix(e[i:], "'system:serviceaccount:"), "'")
					got.PolicyAccount = strings.Replace(got.PolicyAccount, ":", "/", 1)
				}
			}
		case "Deployment":
			got.Replicas, _, _ = unstructured.NestedInt64(u.Object, "spec", "replicas")
			podLabels, _, _ = unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels")
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			c := cs[0].(map[string]any)
			got.Image = c["image"].(string)
			cmd, _, _ := unstructured.NestedStringSlice(c, "command")
			got.Command = strings.Join(cmd, " ")
			spread, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "topologySpreadConstraints")
			got.Spread = slices.ContainsFunc(spread, func(c any) bool {
				m := c.(map[string]any)
				sel, _, _ := unstructured.NestedStringMap(m, "labelSelector", "matchLabels")
				return m["topologyKey"] == "kubernetes.io/hostname" && m["whenUnsatisfiable"] == "DoNotSchedule" && len(sel) > 0 && subset(sel, podLabels)
			})
			terms, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "affinity", "nodeAffinity",
				"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			got.OffPool = len(terms) == 1 && strings.Contains(strings.ToLower(toString(terms[0])), "e6data.io/pool doesnotexist")
		case "PodDisruptionBudget":
			pdbSel, _, _ = unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
			pdbMin, _, _ = unstructured.NestedInt64(u.Object, "spec", "minAvailable")
		}
	}
	if len(pdbSel) > 0 && subset(pdbSel, podLabels) {
		got.BudgetKeeps = pdbMin
	}
	slices.Sort(got.Rules)
	account := providerNamespace + "/burstpool-failsafe"
	want := summary{
		Account: account,
		Rules: []string{"/nodes list", "/nodes patch", "/pods list", "/pods patch", "capacity.e6data.io/poolcapacities list",
			providerNamespace + " coordination.k8s.io/leases get provider-burstpool-capacity"},
		BoundTo:       []string{account, account},
		PolicyAccount: account,
		Image:         configurationProvider(t) + ":" + providerVersion(t),
		Command:       "/failsafe",
		Replicas:      2, Spread: true, OffPool: true, BudgetKeeps: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failsafe.yaml: -want, +got:\n%s", diff)
	}

	// examples/monitoring's PodMonitor for the fail-safe selects its pods
	// and scrapes the port it serves metrics on.
	raw, err := os.ReadFile(filepath.Join("..", "examples", "monitoring", "podmonitor-failsafe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pm := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &pm.Object); err != nil {
		t.Fatal(err)
	}
	sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	if len(sel) == 0 || !subset(sel, podLabels) || len(eps) != 1 || eps[0].(map[string]any)["port"] != "metrics" {
		t.Errorf("podmonitor-failsafe.yaml selects %v on ports %v; the fail-safe's pods carry %v and serve on port metrics", sel, eps, podLabels)
	}

	// executor-gate.yaml's guard lets the same account remove the gate.
	for _, u := range objects(t, "executor-gate.yaml") {
		if u.GetKind() != "ValidatingAdmissionPolicy" {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "spec", "matchConditions")
		if !slices.ContainsFunc(conds, func(c any) bool {
			return strings.Contains(c.(map[string]any)["expression"].(string), "':burstpool-failsafe'")
		}) {
			t.Errorf("the guard %s does not let burstpool-failsafe remove the executor gate", u.GetName())
		}
	}
}

func toString(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	var b strings.Builder
	exprs, _, _ := unstructured.NestedSlice(m, "matchExpressions")
	for _, e := range exprs {
		e := e.(map[string]any)
		b.WriteString(e["key"].(string) + " " + e["operator"].(string) + ";")
	}
	return b.String()
}

// providerVersion is the lowest release of the Provider the Configuration
// accepts (crossplane.yaml's constraint ">=vX.Y.Z ..."): the release whose
// image a checkout's failsafe.yaml runs.
func providerVersion(t *testing.T) string {
	t.Helper()
	v, _, _ := strings.Cut(strings.TrimPrefix(configurationDependency(t, "Provider").Version, ">="), " ")
	return v
}

// flatRules lists a role's rules as "[namespace ]group/resource verb[ names]".
func flatRules(t *testing.T, u *unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
	for _, r := range rules {
		r := r.(map[string]any)
		groups, _, _ := unstructured.NestedStringSlice(r, "apiGroups")
		res, _, _ := unstructured.NestedStringSlice(r, "resources")
		names, _, _ := unstructured.NestedStringSlice(r, "resourceNames")
		verbs, _, _ := unstructured.NestedStringSlice(r, "verbs")
		for _, g := range groups {
			for _, re := range res {
				for _, v := range verbs {
					out = append(out, strings.TrimSpace(u.GetNamespace()+" "+g+"/"+re+" "+v+" "+strings.Join(names, ",")))
				}
			}
		}
	}
	return out
}
