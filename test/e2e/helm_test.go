package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	testfixture "github.com/burstpool/burstpool/test/fixture"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/devplane"
)

// helmInstall: Crossplane runs as its Helm chart installs it
// (devplane.Config.HelmInstall): core under its own service account and
// the chart's ClusterRoles, not system:masters; the RBAC manager binding
// each provider revision's roles to its Deployment's service account; the
// Provider on Crossplane's Deployment package runtime.
const helmInstall capability = "HelmInstall"

// TestHelmInstall installs a release of burstpool published to
// <loopback>/acme, a path that does not end in /burstpool, on a control
// plane whose Crossplane runs as its Helm chart installs it: the
// Configuration alone, deploy/provider applied with the ImageConfig's
// prefix changed to the release's (docs/install.md, "Publishing to your
// own registry"). Crossplane installs the Function as
// acme-function-pool-compose, the name the released Composition uses.
func TestHelmInstall(t *testing.T) {
	t.Parallel()
	runScenarios(t, newSuite(t, helmPlane), helmScenarios)
}

// helmPlane is the stack with Crossplane installed as by its Helm chart,
// and burstpool released to <loopback>/acme.
var helmPlane = plane{
	configure: func(t *testing.T, cfg *devplane.Config) {
		cfg.HelmInstall, cfg.Release, cfg.Tag, cfg.ReleasePath = true, true, "v0.1.0", "acme"
	},
	caps: []capability{helmInstall, simulatedCloud},
}

// helmScenarios are TestHelmInstall's scenarios.
var helmScenarios = []scenario{
	{name: "ProviderRights", needs: []capability{helmInstall}, run: scenarioProviderRights},
	{name: "ComposesFromAnyRegistry", needs: []capability{helmInstall, simulatedCloud}, run: scenarioComposesFromAnyRegistry},
}

// providerRights are what the provider's service account may and may not
// do once Crossplane's RBAC manager has bound the provider revision's
// system ClusterRole to it (crossplane v2.4.0,
// internal/controller/rbac/provider/roles RenderClusterRoles and
// binding.Reconciler), beside deploy/provider/rbac.yaml's roles, as
// "scope group/resource[/subresource] verb [name]: allowed|denied".
// docs/install.md ("What the provider may do") lists the same.
var providerRights = []string{
	// The system role's extra rule: every verb on secrets, configmaps,
	// events and leases, in every namespace.
	"cluster /secrets get: allowed",
	"cluster /secrets list: allowed",
	"cluster /secrets watch: allowed",
	"cluster /secrets create: allowed",
	"cluster /secrets delete: allowed",
	"default /secrets get: allowed",
	"cluster /configmaps get: allowed",
	"cluster /configmaps delete: allowed",
	"cluster /events delete: allowed",
	"cluster coordination.k8s.io/leases delete: allowed",
	// Its own CRDs: read, create and change, never delete.
	"cluster capacity.e6data.io/poolcapacities create: allowed",
	"cluster capacity.e6data.io/poolcapacities delete: denied",
	"cluster capacity.e6data.io/poolcapacities/finalizers update: allowed",
	"cluster capacity.e6data.io/executorgates list: allowed",
	"cluster capacity.e6data.io/providerconfigs create: allowed",
	// What neither role grants: the cluster's workloads, nodes and
	// provisioning, identities and admission.
	"cluster /pods delete: denied",
	"cluster /pods/eviction create: denied",
	"cluster /pods update: denied",
	"cluster /nodes update: denied",
	"cluster /nodes delete: denied",
	"cluster karpenter.sh/nodepools get: denied",
	"cluster karpenter.sh/nodeclaims delete: denied",
	"cluster apps/daemonsets create: denied",
	"crossplane-system /serviceaccounts/token create: denied",
	"cluster rbac.authorization.k8s.io/clusterrolebindings create: denied",
	"cluster rbac.authorization.k8s.io/clusterroles escalate: denied",
	"cluster admissionregistration.k8s.io/mutatingadmissionpolicies create: denied",
	"cluster admissionregistration.k8s.io/validatingadmissionpolicies delete burstpool-executor-gate-guard: denied",
	"cluster admissionregistration.k8s.io/validatingadmissionpolicybindings create: denied",
	// The shipped roles, a sample (deploy's TestProviderAccountAccess
	// checks each of them alone).
	"cluster /pods watch: allowed",
	"cluster /nodes patch: allowed",
	"cluster capacity.e6data.io/poolcapacities/status update: allowed",
}

// scenarioProviderRights asks the API server, with a SubjectAccessReview
// each, what the provider's service account may do once the RBAC manager
// has bound the provider revision's roles to it, and compares that with
// providerRights.
func scenarioProviderRights(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	_, prov := s.PackageNames()
	rev, err := devplane.ActiveRevision(ctx, s.Client, "Provider", prov, waitQuick)
	if err != nil {
		t.Fatal(err)
	}
	name := "crossplane:provider:" + rev + ":system"
	// The RBAC manager makes the role and the binding in two controllers,
	// either first.
	took := eventually(t, waitReconcile, "the RBAC manager makes "+name+" and binds it to the provider's Deployment's account", func(ctx context.Context) (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKey{Name: name}, &rbacv1.ClusterRole{}); err != nil {
			return false, err
		}
		b := &rbacv1.ClusterRoleBinding{}
		if err := s.Client.Get(ctx, client.ObjectKey{Name: name}, b); err != nil {
			return false, err
		}
		want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: devplane.ProviderServiceAccount, Namespace: devplane.CrossplaneNS}}
		return cmp.Equal(want, b.Subjects), fmt.Errorf("%s binds %v", name, b.Subjects)
	})
	t.Logf("%s bound to %s in %s", name, devplane.ProviderServiceAccount, took.Round(100*time.Millisecond))

	user := "system:serviceaccount:" + devplane.CrossplaneNS + ":" + devplane.ProviderServiceAccount
	var got []string
	for _, r := range providerRights {
		perm, _, _ := strings.Cut(r, ": ")
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + devplane.CrossplaneNS, "system:authenticated"},
			ResourceAttributes: testfixture.Access(t, perm),
		}}
		if err := s.Client.Create(ctx, sar); err != nil {
			t.Fatalf("SubjectAccessReview %q: %v", perm, err)
		}
		verdict := "denied"
		if sar.Status.Allowed {
			verdict = "allowed"
		}
		got = append(got, perm+": "+verdict)
	}
	if diff := cmp.Diff(providerRights, got); diff != "" {
		t.Errorf("what %s may do under the RBAC manager (-documented +effective):\n%s", user, diff)
	}
}

// scenarioComposesFromAnyRegistry bursts executors onto a pool composed by
// the Configuration released to <loopback>/acme: its Composition names the
// Function Crossplane installed for it, and core, under the chart's roles
// and examples/rbac's, composes every object of the pool.
func scenarioComposesFromAnyRegistry(t *testing.T, ctx context.Context, e *env) {
	fn, _ := e.PackageNames()
	if _, err := e.Get(ctx, gvk("pkg.crossplane.io/v1", "Function"), "", fn); err != nil {
		t.Fatalf("Crossplane installed no Function %s for the release's Configuration: %v", fn, err)
	}
	b := newBurst(t, ctx, e)
	took := b.start(t, ctx, e.Stack, 2)
	t.Logf("executors of a pool composed from the acme release Running in %s", took.Round(100*time.Millisecond))
}
