package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/harness/pkgmeta"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// The provider's service account, fixed by runtimeconfig.yaml.
const (
	providerSA        = "provider-burstpool"
	providerNamespace = "crossplane-system"
)

// allowed is every permission the provider's roles may grant, as
// "role: scope group/resource verb [name]" (scope is "cluster" or the
// Role's namespace; name, when a rule names its resources, one of them).
// Growing it is a decision, made here with a reason.
var allowed = []string{
	// Observe executors and pool nodes; read QueryServices.
	"burstpool-capacity-observer: cluster /pods get",
	"burstpool-capacity-observer: cluster /pods list",
	"burstpool-capacity-observer: cluster /pods watch",
	"burstpool-capacity-observer: cluster /nodes get",
	"burstpool-capacity-observer: cluster /nodes list",
	"burstpool-capacity-observer: cluster /nodes watch",
	// Open a warm pool node (remove its startup taint) and release a
	// placeholder (remove its scheduling gate): patch, never update.
	"burstpool-capacity-observer: cluster /pods patch",
	"burstpool-capacity-observer: cluster /nodes patch",
	// Keep the pool's CapacityBuffer's spec.replicas at the warm slots it
	// still wants: read by name, server-side apply; never create, update
	// or delete.
	"burstpool-capacity-observer: cluster autoscaling.x-k8s.io/capacitybuffers get",
	"burstpool-capacity-observer: cluster autoscaling.x-k8s.io/capacitybuffers patch",
	"burstpool-capacity-observer: cluster e6data.io/queryservices get",
	"burstpool-capacity-observer: cluster e6data.io/queryservices list",
	"burstpool-capacity-observer: cluster e6data.io/queryservices watch",
	// A remote workload cluster's summary for the function names the
	// detection CRDs that exist, read by name.
	"burstpool-capacity-observer: cluster apiextensions.k8s.io/customresourcedefinitions get",
	// PoolCapacities: read, write status; update and patch only for the
	// managed reconciler's finalizer. Never create or delete.
	"burstpool-capacity-provider: cluster capacity.e6data.io/poolcapacities get",
	"burstpool-capacity-provider: cluster capacity.e6data.io/poolcapacities list",
	"burstpool-capacity-provider: cluster capacity.e6data.io/poolcapacities watch",
	"burstpool-capacity-provider: cluster capacity.e6data.io/poolcapacities update",
	"burstpool-capacity-provider: cluster capacity.e6data.io/poolcapacities patch",
	"burstpool-capacity-provider: cluster capacity.e6data.io/poolcapacities/status get",
	"burstpool-capacity-provider: cluster capacity.e6data.io/poolcapacities/status update",
	"burstpool-capacity-provider: cluster capacity.e6data.io/poolcapacities/status patch",
	// ProviderConfigs: read, keep their finalizer and status (user count).
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigs get",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigs list",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigs watch",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigs update",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigs patch",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigs/status get",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigs/status update",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigs/status patch",
	// ProviderConfigUsages record which PoolCapacity uses which config.
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigusages get",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigusages list",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigusages watch",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigusages create",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigusages update",
	"burstpool-capacity-provider: cluster capacity.e6data.io/providerconfigusages patch",
	// A PoolCapacity of a remote pool names a provider-kubernetes
	// ProviderConfig, whose kubeconfig Secret the provider reads, so one
	// ProviderConfig points both providers at the workload cluster.
	"burstpool-capacity-provider: cluster kubernetes.crossplane.io/providerconfigs get",
	// The executor gate: the parameters of the static admission policies
	// of executor-gate.yaml, one ExecutorGate per PoolCapacity that holds
	// executors back (server-side apply creates or patches it; one list as
	// the provider starts says which pools have one to remove), and a read
	// of that file's MutatingAdmissionPolicy by name, to tell the pool when
	// it is missing. No right to write any admission policy.
	"burstpool-capacity-provider: cluster capacity.e6data.io/executorgates list",
	"burstpool-capacity-provider: cluster capacity.e6data.io/executorgates create",
	"burstpool-capacity-provider: cluster capacity.e6data.io/executorgates patch",
	"burstpool-capacity-provider: cluster capacity.e6data.io/executorgates delete",
	"burstpool-capacity-provider: cluster admissionregistration.k8s.io/mutatingadmissionpolicies get burstpool-executor-gate",
	"burstpool-capacity-provider: cluster /events create",
	"burstpool-capacity-provider: cluster /events patch",
	// Kubeconfig Secrets of ProviderConfigs, in their namespace only, by
	// name; the leader-election Lease.
	"burstpool-capacity-credentials: crossplane-system /secrets get",
	"burstpool-capacity-credentials: crossplane-system coordination.k8s.io/leases get",
	"burstpool-capacity-credentials: crossplane-system coordination.k8s.io/leases create",
	"burstpool-capacity-credentials: crossplane-system coordination.k8s.io/leases update",
	// Opt-in (rbac-evictions.yaml): remove failed and unauthorized
	// executors through the Eviction API, which honours PDBs.
	"burstpool-capacity-evictor: cluster /pods/eviction create",
	"burstpool-capacity-evictor: cluster policy/poddisruptionbudgets get",
	"burstpool-capacity-evictor: cluster policy/poddisruptionbudgets list",
}

// objects decodes every object of the YAML files named.
func objects(t *testing.T, files ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("provider", f)) //nolint:gosec // a file of the repository
		if err != nil {
			t.Fatal(err)
		}
		objs, err := localcp.Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, objs...)
	}
	return out
}

func into(t *testing.T, u *unstructured.Unstructured, v any) {
	t.Helper()
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// TestProviderRBACAllowList fails when the provider's roles grant anything
// the allow-list does not name (wildcards included), grant less than it
// names, or are bound to anyone but the provider's service account.
func TestProviderRBACAllowList(t *testing.T) {
	var got []string
	roles := map[string]bool{}
	for _, u := range objects(t, "rbac.yaml", "rbac-evictions.yaml") {
		switch u.GetKind() {
		case "ClusterRole", "Role":
			var r rbacv1.ClusterRole // a Role has the same fields
			into(t, u, &r)
			if r.AggregationRule != nil {
				t.Errorf("%s %s aggregates other roles: what it grants would not be reviewed here", u.GetKind(), r.Name)
			}
			scope := "cluster"
			if u.GetKind() == "Role" {
				scope = u.GetNamespace()
			}
			roles[u.GetKind()+"/"+r.Name] = true
			for _, rule := range r.Rules {
				if len(rule.NonResourceURLs) > 0 {
					t.Errorf("%s %s: rule %v names URLs, which the allow-list does not cover", u.GetKind(), r.Name, rule)
				}
				names := rule.ResourceNames
				if len(names) == 0 {
					names = []string{""}
				}
				for _, g := range rule.APIGroups {
					for _, res := range rule.Resources {
						for _, v := range rule.Verbs {
							for _, n := range names {
								got = append(got, strings.TrimSpace(fmt.Sprintf("%s: %s %s/%s %s %s", r.Name, scope, g, res, v, n)))
							}
						}
					}
				}
			}
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.RoleBinding
			into(t, u, &b)
			want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: providerSA, Namespace: providerNamespace}}
			if diff := cmp.Diff(want, b.Subjects); diff != "" {
				t.Errorf("%s %s binds someone else: -want, +got:\n%s", u.GetKind(), b.Name, diff)
			}
			if !roles[b.RoleRef.Kind+"/"+b.RoleRef.Name] {
				t.Errorf("%s %s binds %s %s, which these files do not define", u.GetKind(), b.Name, b.RoleRef.Kind, b.RoleRef.Name)
			}
		default:
			t.Errorf("unexpected %s %s among the provider's roles", u.GetKind(), u.GetName())
		}
	}
	slices.Sort(got)
	want := slices.Clone(allowed)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the provider's roles differ from the allow-list (-allowed +granted):\n%s", diff)
	}
}

// TestRuntimeConfig checks runtimeconfig.yaml: every object is valid
// against Crossplane v2.4.0's and Kubernetes' schemas; the ImageConfig
// gives the Provider that the Configuration depends on (matched by its
// image prefix, as Crossplane matches a dependency-installed package's
// image) the DeploymentRuntimeConfig; that config runs the pod under the
// account the roles are bound to through
// deploymentTemplate.spec.template.spec.serviceAccountName, not
// serviceAccountTemplate.metadata.name (which makes the package manager
// own the account; Crossplane's runtime docs advise against it); and the
// file ships that account. The provider runs highly available: two
// replicas (Crossplane keeps the template's replicas, defaulting only an
// unset count to 1: v2.4.0 internal/controller/pkg/runtime,
// DeploymentWithOptionalReplicas), spread over nodes, never on a pool
// node, and a PodDisruptionBudget that selects the template's pods and
// keeps one.
func TestRuntimeConfig(t *testing.T) {
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		ImagePrefixes     []string
		ImageRuntimeRef   string
		RuntimeConfig     string
		PodServiceAccount string
		TemplateAccount   string
		ServiceAccounts   []string
		Replicas          int64
		SpreadOverNodes   bool
		OffPoolNodes      bool
		// DisruptionBudget is the PDB's minAvailable, when its selector
		// matches the template's labels.
		DisruptionBudget int64
	}
	var got summary
	var podLabels, pdbSel map[string]string
	var pdbMin int64
	for _, u := range objects(t, "runtimeconfig.yaml") {
		if err := reg.Validate(u); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		switch u.GetAPIVersion() + " " + u.GetKind() {
		case "pkg.crossplane.io/v1beta1 ImageConfig":
			ms, _, _ := unstructured.NestedSlice(u.Object, "spec", "matchImages")
			for _, m := range ms {
				p, _, _ := unstructured.NestedString(m.(map[string]any), "prefix")
				got.ImagePrefixes = append(got.ImagePrefixes, p)
			}
			got.ImageRuntimeRef, _, _ = unstructured.NestedString(u.Object, "spec", "runtime", "configRef", "name")
		case "pkg.crossplane.io/v1beta1 DeploymentRuntimeConfig":
			got.RuntimeConfig = u.GetName()
			got.PodServiceAccount, _, _ = unstructured.NestedString(u.Object, "spec", "deploymentTemplate", "spec", "template", "spec", "serviceAccountName")
			got.TemplateAccount, _, _ = unstructured.NestedString(u.Object, "spec", "serviceAccountTemplate", "metadata", "name")
			got.Replicas, _, _ = unstructured.NestedInt64(u.Object, "spec", "deploymentTemplate", "spec", "replicas")
			podLabels, _, _ = unstructured.NestedStringMap(u.Object, "spec", "deploymentTemplate", "spec", "template", "metadata", "labels")
			spread, _, _ := unstructured.NestedSlice(u.Object, "spec", "deploymentTemplate", "spec", "template", "spec", "topologySpreadConstraints")
			for _, c := range spread {
				c := c.(map[string]any)
				sel, _, _ := unstructured.NestedStringMap(c, "labelSelector", "matchLabels")
				if c["topologyKey"] == "kubernetes.io/hostname" && c["whenUnsatisfiable"] == "DoNotSchedule" && len(sel) > 0 && subset(sel, podLabels) {
					got.SpreadOverNodes = true
				}
			}
			terms, _, _ := unstructured.NestedSlice(u.Object, "spec", "deploymentTemplate", "spec", "template", "spec", "affinity", "nodeAffinity",
				"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			got.OffPoolNodes = len(terms) > 0
			for _, term := range terms {
				exprs, _, _ := unstructured.NestedSlice(term.(map[string]any), "matchExpressions")
				if !slices.ContainsFunc(exprs, func(e any) bool {
					m := e.(map[string]any)
					return m["key"] == "e6data.io/pool" && m["operator"] == "DoesNotExist"
				}) {
					got.OffPoolNodes = false
				}
			}
		case "policy/v1 PodDisruptionBudget":
			pdbSel, _, _ = unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
			pdbMin, _, _ = unstructured.NestedInt64(u.Object, "spec", "minAvailable")
		case "v1 ServiceAccount":
			got.ServiceAccounts = append(got.ServiceAccounts, u.GetNamespace()+"/"+u.GetName())
		default:
			t.Errorf("unexpected %s %s in runtimeconfig.yaml", u.GetKind(), u.GetName())
		}
	}
	want := summary{
		ImagePrefixes:     []string{configurationProvider(t)},
		ImageRuntimeRef:   "provider-burstpool",
		RuntimeConfig:     "provider-burstpool",
		PodServiceAccount: providerSA,
		ServiceAccounts:   []string{providerNamespace + "/" + providerSA},
		Replicas:          2,
		SpreadOverNodes:   true,
		OffPoolNodes:      true,
		DisruptionBudget:  1,
	}
	if len(pdbSel) > 0 && subset(pdbSel, podLabels) {
		got.DisruptionBudget = pdbMin
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runtimeconfig.yaml: -want, +got:\n%s", diff)
	}
}

// subset reports whether every label of sel is in labels.
func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// configurationProvider returns the package of the Provider that the
// burstpool Configuration (crossplane.yaml) depends on.
func configurationProvider(t *testing.T) string {
	t.Helper()
	return configurationDependency(t, "Provider").Package
}

// configurationDependency returns the burstpool Configuration's
// (crossplane.yaml's) dependency of kind.
func configurationDependency(t *testing.T, kind string) pkgmeta.Dependency {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "crossplane.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	deps, err := pkgmeta.DependsOn(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps {
		if d.Kind == kind {
			return d
		}
	}
	t.Fatalf("crossplane.yaml depends on no %s", kind)
	return pkgmeta.Dependency{}
}
