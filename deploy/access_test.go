package deploy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/burstpool/burstpool/test/fixture"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/apiserver"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// denied is what the shipped roles never grant the provider's service
// account, as "scope group/resource verb [name]" (scope is "cluster" or a
// namespace): reading every Secret or ConfigMap, changing pods and nodes,
// creating or deleting the objects Crossplane composes, evicting unless
// rbac-evictions.yaml is applied, and writing any admission policy or
// binding, burstpool's own static ones (executor-gate.yaml) included, or
// reading another.
//
// These are the shipped roles' rights alone. Where Crossplane's RBAC
// manager runs (its Helm chart's default), it binds the provider
// revision's system ClusterRole to the same account, which grants every
// verb on Secrets, ConfigMaps, Events and Leases cluster-wide and
// creating PoolCapacities; Crossplane offers no setting that narrows it
// for one provider. test/e2e's TestHelmInstall/ProviderRights lists the
// account's effective rights there, and docs/install.md ("What the
// provider may do") says why burstpool accepts them. Of this list, the
// rights that hold under the RBAC manager too are the pods', nodes',
// composed objects', evictions', RBAC's and admission's.
var denied = []string{
	"cluster /secrets get",
	"cluster /secrets list",
	"crossplane-system /secrets list",
	"crossplane-system /secrets watch",
	"default /secrets get",
	"cluster /pods delete",
	"cluster /pods/eviction create",
	"cluster /nodes update",
	"cluster /nodes delete",
	"cluster capacity.e6data.io/poolcapacities create",
	"cluster capacity.e6data.io/poolcapacities delete",
	"cluster karpenter.sh/nodepools get",
	"cluster /configmaps get",
	"crossplane-system /serviceaccounts/token create",
	"cluster rbac.authorization.k8s.io/clusterrolebindings create",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicies create",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicies patch burstpool-executor-gate",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicies delete burstpool-executor-gate",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicies patch other-policy",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicies get other-policy",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicies list",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicybindings create",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicybindings patch burstpool-executor-gate",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicybindings delete burstpool-executor-gate",
	"cluster admissionregistration.k8s.io/validatingadmissionpolicies create",
	"cluster admissionregistration.k8s.io/validatingadmissionpolicies patch burstpool-executor-gate-guard",
	"cluster admissionregistration.k8s.io/validatingadmissionpolicies delete burstpool-executor-gate-guard",
	"cluster admissionregistration.k8s.io/validatingadmissionpolicybindings create",
	"cluster admissionregistration.k8s.io/validatingadmissionpolicybindings patch burstpool-executor-gate-guard",
	"cluster admissionregistration.k8s.io/validatingadmissionpolicybindings delete burstpool-executor-gate-guard",
}

// TestProviderAccountAccess applies what docs/install.md applies for the
// provider (runtimeconfig.yaml: its service account; rbac.yaml: its roles)
// to a real API server without Crossplane and asks it, with a
// SubjectAccessReview per permission, what the shipped roles let the
// account the DeploymentRuntimeConfig runs the provider's pod under do:
// everything on the allow-list (the opt-in eviction role is not applied),
// and nothing on the denied list. What Crossplane's RBAC manager adds is
// listed by test/e2e's TestHelmInstall/ProviderRights (see denied).
// Kubernetes' RBAC authorizer answers (authorization.k8s.io/v1
// SubjectAccessReview), so bindings to another account or namespace fail
// here as they would in a cluster.
func TestProviderAccountAccess(t *testing.T) {
	env := apiserver.Start(t)
	// Crossplane's namespace, which its installation creates.
	if err := localcp.Apply(t.Context(), env.Config, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+providerNamespace+"\n")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"runtimeconfig.yaml", "rbac.yaml"} {
		// The ImageConfig and DeploymentRuntimeConfig need Crossplane's
		// CRDs; only the ServiceAccount and the roles matter here.
		var keep []byte
		for _, u := range objects(t, f) {
			if u.GetAPIVersion() == "pkg.crossplane.io/v1beta1" {
				continue
			}
			b, err := u.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			keep = append(append(keep, b...), []byte("\n---\n")...)
		}
		if err := localcp.Apply(t.Context(), env.Config, keep); err != nil {
			t.Fatalf("cannot apply %s: %v", f, err)
		}
	}
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("system:serviceaccount:%s:%s", providerNamespace, providerSA)
	allowedBy := func(s string) bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + providerNamespace, "system:authenticated"},
			ResourceAttributes: fixture.Access(t, s),
		}}
		if err := c.Create(t.Context(), sar); err != nil {
			t.Fatalf("SubjectAccessReview %q: %v", s, err)
		}
		return sar.Status.Allowed
	}

	var want, got []string
	for _, a := range allowed {
		role, perm, _ := strings.Cut(a, ": ")
		if role == "burstpool-capacity-evictor" {
			continue
		}
		want = append(want, perm)
		if allowedBy(perm) {
			got = append(got, perm)
		}
	}
	for _, d := range denied {
		if allowedBy(d) {
			got = append(got, d)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what %s may do (-needed +allowed):\n%s", user, diff)
	}
}
