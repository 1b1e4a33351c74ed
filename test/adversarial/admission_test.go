package adversarial

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/fixture"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/burstpool/burstpool/test/harness/apiserver"
	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// The attached tenant of the admission tests: the namespace the platform
// lets e6-pools/burst-pool attach QueryServices from (the reference's 4.1
// pool, as placementGolden renders it), and the tenant's own user there.
var admissionPool = fixture.Pool{Name: "burst-pool", Namespace: poolNS}

const (
	tenantUser = "analytics-admin"
	// providerUser is the provider's service account, as the API server
	// names it (deploy/provider/runtimeconfig.yaml fixes it).
	providerUser = "system:serviceaccount:crossplane-system:provider-burstpool"
)

// admissionCluster is an API server with what an installed burstpool
// puts there for the 4.1 pool: the provider's CRDs, its service account
// and every role of deploy/provider, the static executor gate policies of
// deploy/provider/executor-gate.yaml, the pool's rendered access policy,
// and the ExecutorGate the provider writes for a pool that holds
// executors back. admin creates what the platform does; tenant is the
// attached namespace's administrator (every right on its pods);
// provider is the provider's service account.
type admissionCluster struct {
	admin, tenant, provider client.Client
	env                     *envtest.Environment
	// as is a client that acts as user, in groups.
	as func(user string, groups ...string) client.Client
}

// startAdmissionCluster starts it; it stops when t ends.
func startAdmissionCluster(t *testing.T) admissionCluster {
	t.Helper()
	ctx := t.Context()
	root := gomod.RootForTest(t)
	env := apiserver.Start(t, filepath.Join(root, "package", "provider", "crds"))
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	as := func(user string, groups ...string) client.Client {
		cfg := rest.CopyConfig(env.Config)
		if user != "" {
			cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
		}
		c, err := client.New(cfg, client.Options{Scheme: s})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ac := admissionCluster{
		admin:    as(""),
		tenant:   as(tenantUser),
		provider: as(providerUser, "system:serviceaccounts", "system:serviceaccounts:crossplane-system"),
		env:      env,
		as:       as,
	}
	fixture.CreateNamespaces(t, ac.admin, poolNS, attachedNS, "crossplane-system")
	fixture.Create(t, ac.admin,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: v1alpha1.ProviderServiceAccount}},
		// What a tenant may do with pods in its own namespace (the
		// aggregated "admin" role, which envtest's API server, without
		// kube-controller-manager, leaves empty).
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: attachedNS, Name: "tenant-admin"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: attachedNS, Name: "tenant-admin"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant-admin"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: tenantUser}},
		})

	// The provider's roles as shipped (rbac.yaml and the opt-in roles
	// beside it), and the static gate policies, applied as docs/install.md
	// applies them.
	files, err := filepath.Glob(filepath.Join(root, "deploy", "provider", "rbac*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, filepath.Join(root, "deploy", "provider", "executor-gate.yaml")) {
		raw, err := os.ReadFile(f) //nolint:gosec // a file of the checkout
		if err != nil {
			t.Fatal(err)
		}
		if err := localcp.Apply(ctx, env.Config, raw); err != nil {
			t.Fatalf("cannot apply %s: %v", f, err)
		}
	}

	// The pool's access policy and binding, as the function renders them.
	b, err := os.ReadFile(filepath.Join(root, placementGolden))
	if err != nil {
		t.Fatal(err)
	}
	r := &rendering{}
	if err := yaml.Unmarshal(b, r); err != nil {
		t.Fatalf("%s: %v", placementGolden, err)
	}
	for _, name := range []string{"access-policy", "access-policy-binding"} {
		if err := ac.admin.Create(ctx, r.object(t, name)); err != nil {
			t.Fatalf("cannot create the rendered %s: %v", name, err)
		}
	}

	// The ExecutorGate of the pool, written by the provider's account.
	if err := ac.provider.Create(ctx, &v1alpha1.ExecutorGate{
		ObjectMeta: metav1.ObjectMeta{Name: "burst-pool-capacity", Labels: admissionPool.NodeLabels()},
		Spec: v1alpha1.ExecutorGateSpec{
			Pool: v1alpha1.PoolRef{Name: admissionPool.Name, Namespace: admissionPool.Namespace},
			Gate: qsv1alpha1.GateExecutor, Namespaces: []string{attachedNS},
			Selector: map[string]string{qsv1alpha1.LabelPool: admissionPool.Name, qsv1alpha1.LabelPoolNamespace: admissionPool.Namespace,
				qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
		},
	}); err != nil {
		t.Fatalf("the provider's account cannot write the pool's ExecutorGate: %v", err)
	}
	return ac
}

// executor is a pod of the attached QueryService aimed at the pool, with
// the labels, node selector and tolerations of status.executorScheduling.
func (ac admissionCluster) executor(name string) *corev1.Pod {
	return fixture.Pod(fixture.PodOptions{Namespace: attachedNS, Name: name, Labels: admissionPool.ExecutorLabels(attachedQS),
		NodeSelector: admissionPool.NodeLabels(), Tolerations: admissionPool.Tolerations()})
}

// waitGated waits until the API server enforces the pool's access policy
// and the static gate policies: an executor the tenant creates comes
// gated, and one of a QueryService the pool does not attach is refused.
// It returns the gated executor's name.
func (ac admissionCluster) waitGated(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	name := ""
	fixture.Eventually(t, fixture.PolicyEnforced, "the tenant's new executor admitted with the gate "+qsv1alpha1.GateExecutor, func() error {
		p := ac.executor("")
		p.GenerateName = "analytics-exec-"
		if err := ac.tenant.Create(ctx, p); err != nil {
			return err
		}
		if len(p.Spec.SchedulingGates) == 0 {
			_ = ac.admin.Delete(ctx, p)
			return fmt.Errorf("executor %s admitted without gates", p.Name)
		}
		name = p.Name
		return nil
	})
	fixture.Eventually(t, fixture.PolicyEnforced, "the access policy refusing an executor of a QueryService the pool does not attach", func() error {
		p := ac.executor("")
		p.GenerateName = "probe-"
		p.Labels[qsv1alpha1.LabelQueryService] = hostileQS
		if err := ac.tenant.Create(ctx, p); err == nil {
			_ = ac.admin.Delete(ctx, p)
			return fmt.Errorf("pod %s admitted", p.Name)
		}
		return nil
	})
	return name
}

// wantRefused fails t unless err is an admission refusal that says want;
// want "" asks for no error.
func wantRefused(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v, want admitted", what, err)
	case want != "" && err == nil:
		t.Errorf("%s admitted, want refused with %q", what, want)
	case want != "" && !kerrors.IsInvalid(err) && !kerrors.IsForbidden(err):
		t.Errorf("%s: %v, want an admission refusal", what, err)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s: %v, want a refusal with %q", what, err, want)
	}
}

// TestAttachedTenantRunsNoUncountedPoolPods replays an attached tenant
// (a namespace the platform lets the pool attach) that runs pods on the
// pool without the pool's executor labels: the pool would not count,
// gate, share or charge them, and would book their nodes as its own
// waste. The pool's access policy refuses them, at creation and at the
// update that makes a pod aim at the pool, naming the labels missing;
// the tenant's labelled executors and the pool's own pods are admitted.
func TestAttachedTenantRunsNoUncountedPoolPods(t *testing.T) {
	ctx := t.Context()
	ac := startAdmissionCluster(t)
	ac.waitGated(t)

	missingAll := "lacks e6data.io/executor-type=pool, e6data.io/pool=burst-pool, e6data.io/pool-namespace=e6-pools"
	unlabelled := ac.executor("unlabelled")
	unlabelled.Labels = map[string]string{qsv1alpha1.LabelQueryService: attachedQS}
	noType := ac.executor("no-executor-type")
	delete(noType.Labels, qsv1alpha1.LabelExecutorType)
	regular := ac.executor("regular-type")
	regular.Labels[qsv1alpha1.LabelExecutorType] = qsv1alpha1.ExecutorTypeRegular
	noExecute := ac.executor("tolerates-noexecute")
	noExecute.Labels = map[string]string{qsv1alpha1.LabelQueryService: attachedQS}
	noExecute.Spec.NodeSelector = nil
	noExecute.Spec.Tolerations = []corev1.Toleration{{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: admissionPool.Name, Effect: corev1.TaintEffectNoExecute}}
	placeholder := fixture.Pod(fixture.PodOptions{Namespace: poolNS, Name: "placeholder",
		Labels:       map[string]string{qsv1alpha1.LabelPool: admissionPool.Name, qsv1alpha1.LabelPoolNamespace: poolNS, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder},
		NodeSelector: admissionPool.NodeLabels(), Tolerations: admissionPool.Tolerations()})
	elsewhere := fixture.Pod(fixture.PodOptions{Namespace: attachedNS, Name: "elsewhere", Labels: map[string]string{qsv1alpha1.LabelQueryService: attachedQS}})

	cases := map[string]struct {
		reason string
		as     client.Client
		pod    *corev1.Pod
		want   string // "" admitted, else a part of the refusal
	}{
		"QueryServiceLabelOnly": {
			reason: "A pod of the attached QueryService aimed at the pool without the pool's labels is refused, naming them.",
			as:     ac.tenant, pod: unlabelled, want: missingAll,
		},
		"NoExecutorType": {
			reason: "The executor type label is one of them: without it the pod is not counted as a pool executor.",
			as:     ac.tenant, pod: noType, want: "lacks e6data.io/executor-type=pool.",
		},
		"RegularExecutorType": {
			reason: "A pod labelled as a regular executor aimed at the pool is refused: the pool counts only pool executors.",
			as:     ac.tenant, pod: regular, want: "lacks e6data.io/executor-type=pool.",
		},
		"NoExecuteTolerationOnly": {
			reason: "Tolerating the pool's NoExecute taint aims at the pool as much as a node selector does.",
			as:     ac.tenant, pod: noExecute, want: missingAll,
		},
		"LabelledExecutor": {
			reason: "An executor with the pool's labels is admitted.",
			as:     ac.tenant, pod: ac.executor("labelled"),
		},
		"PoolsOwnPlaceholder": {
			reason: "The pool's own placeholder, in the pool's namespace, is admitted without executor labels.",
			as:     ac.admin, pod: placeholder,
		},
		"NotAimedAtThePool": {
			reason: "A pod of the tenant that does not aim at the pool is not the policy's business.",
			as:     ac.tenant, pod: elsewhere,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			wantRefused(t, tc.reason, tc.as.Create(ctx, tc.pod), tc.want)
		})
	}

	// An update that makes a harmless pod aim at the pool is checked the
	// same way (Kubernetes lets an update add tolerations to any pod).
	later := fixture.Pod(fixture.PodOptions{Namespace: attachedNS, Name: "aims-later", Labels: map[string]string{qsv1alpha1.LabelQueryService: attachedQS}})
	if err := ac.tenant.Create(ctx, later); err != nil {
		t.Fatal(err)
	}
	later.Spec.Tolerations = admissionPool.Tolerations()
	wantRefused(t, "An update that adds the pool's tolerations to a pod without the pool's labels", ac.tenant.Update(ctx, later), missingAll)
}

// TestAttachedTenantCannotWalkAroundTheGate replays an attached tenant
// that takes a slot its executor was held back from: removing the gate
// e6data.io/pool-slot from its own gated executor (alone, or while
// relabelling it, or after relabelling it), or creating the executor
// already bound to a pool node (spec.nodeName, with the NoExecute
// toleration), which skips both the gate and the scheduler. The static
// guard refuses each, naming the gate; the provider's account releases
// the executor.
func TestAttachedTenantCannotWalkAroundTheGate(t *testing.T) {
	ctx := t.Context()
	ac := startAdmissionCluster(t)
	gated := ac.waitGated(t)

	ungate := func(p *corev1.Pod) {
		p.Spec.SchedulingGates = nil
	}
	get := func(name string) *corev1.Pod {
		p := &corev1.Pod{}
		if err := ac.admin.Get(ctx, types.NamespacedName{Namespace: attachedNS, Name: name}, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := get(gated)
	ungate(p)
	wantRefused(t, "the tenant removing the gate from its executor", ac.tenant.Update(ctx, p), "only the burstpool capacity provider")

	p = get(gated)
	ungate(p)
	delete(p.Labels, qsv1alpha1.LabelExecutorType)
	// Refused by the guard, and by the access policy too (a gated pod's
	// update is checked like a creation): either may answer first.
	wantRefused(t, "the tenant relabelling its executor while removing the gate", ac.tenant.Update(ctx, p), "denied request")

	p = get(gated)
	delete(p.Labels, qsv1alpha1.LabelPool)
	wantRefused(t, "the tenant relabelling its gated executor, to remove the gate after", ac.tenant.Update(ctx, p), "denied request")

	patch := []byte(`[{"op":"remove","path":"/spec/schedulingGates"}]`)
	wantRefused(t, "the tenant's JSON patch removing the gate", ac.tenant.Patch(ctx, get(gated), client.RawPatch(types.JSONPatchType, patch)), "only the burstpool capacity provider")

	bound := ac.executor("bound")
	bound.Spec.NodeName = "burst-pool-node-a"
	bound.Spec.Tolerations = append(bound.Spec.Tolerations, corev1.Toleration{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: admissionPool.Name, Effect: corev1.TaintEffectNoExecute})
	wantRefused(t, "the tenant creating its executor bound to a pool node", ac.tenant.Create(ctx, bound), "cannot be created bound to a node (spec.nodeName burst-pool-node-a)")

	// What the guard leaves alone: a pod of the tenant that is no pool
	// executor, bound where it likes, and the tenant's own gate.
	other := fixture.Pod(fixture.PodOptions{Namespace: attachedNS, Name: "bound-elsewhere", NodeName: "plain-node"})
	wantRefused(t, "the tenant creating a pod that is no pool executor, bound", ac.tenant.Create(ctx, other), "")
	own := ac.executor("own-gate")
	own.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
	if err := ac.tenant.Create(ctx, own); err != nil {
		t.Fatal(err)
	}
	own.Spec.SchedulingGates = slicesWithout(own.Spec.SchedulingGates, "example.com/hold")
	wantRefused(t, "the tenant removing a gate of its own, beside the pool's", ac.tenant.Update(ctx, own), "")

	// The provider releases the executor, as it does (patch.go): a JSON
	// patch under its own account and shipped roles.
	wantRefused(t, "the provider's account removing the gate", ac.provider.Patch(ctx, get(gated), client.RawPatch(types.JSONPatchType, patch)), "")
	if g := get(gated).Spec.SchedulingGates; len(g) > 0 {
		t.Errorf("executor %s still has gates %v after the provider released it", gated, g)
	}
}

// slicesWithout is gates without the gate named name.
func slicesWithout(gates []corev1.PodSchedulingGate, name string) []corev1.PodSchedulingGate {
	var out []corev1.PodSchedulingGate
	for _, g := range gates {
		if g.Name != name {
			out = append(out, g)
		}
	}
	return out
}

// TestProviderWritesNoAdmissionPolicy replays a compromised provider, or
// anyone holding its service account's token: with the shipped roles
// (every rbac*.yaml of deploy/provider), it must not change what the API
// server admits beyond the pool's gate parameters. The API server's
// authorizer is asked (SubjectAccessReviews) and the account tries for
// real: it may write ExecutorGates, and may neither create, change nor
// delete any MutatingAdmissionPolicy, ValidatingAdmissionPolicy or
// binding, burstpool's static ones included.
func TestProviderWritesNoAdmissionPolicy(t *testing.T) {
	ctx := t.Context()
	ac := startAdmissionCluster(t)

	type access struct{ resource, verb, name string }
	allowed := func(a access) bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   providerUser,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:crossplane-system", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: "admissionregistration.k8s.io", Resource: a.resource, Verb: a.verb, Name: a.name,
			},
		}}
		if a.resource == "executorgates" {
			sar.Spec.ResourceAttributes.Group = v1alpha1.Group
		}
		if err := ac.admin.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}
	var got []string
	for _, r := range []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "validatingadmissionpolicies", "validatingadmissionpolicybindings"} {
		for _, v := range []string{"create", "update", "patch", "delete", "deletecollection"} {
			for _, n := range []string{"", "burstpool-executor-gate", "burstpool-executor-gate-guard", "burstpool-access.e6-pools.burst-pool"} {
				if v == "create" && n != "" {
					continue
				}
				if a := (access{r, v, n}); allowed(a) {
					got = append(got, fmt.Sprintf("%s %s %s", v, r, n))
				}
			}
		}
	}
	for _, a := range []access{{"executorgates", "create", ""}, {"executorgates", "patch", "burst-pool-capacity"}, {"executorgates", "delete", "burst-pool-capacity"}} {
		if !allowed(a) {
			t.Errorf("the provider's account may not %s %s %s, which the executor gate needs", a.verb, a.resource, a.name)
		}
	}
	if len(got) > 0 {
		t.Errorf("the provider's account may change admission policies: %q", got)
	}

	// For real, impersonating the account.
	rogue := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicy",
		"metadata":{"name":"rogue"},"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["pods"]}]},
		"failurePolicy":"Ignore","reinvocationPolicy":"Never","mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{}"}}]}}`), &rogue.Object); err != nil {
		t.Fatal(err)
	}
	wantForbidden := func(what string, err error) {
		t.Helper()
		if !kerrors.IsForbidden(err) {
			t.Errorf("the provider's account %s: %v, want forbidden", what, err)
		}
	}
	wantForbidden("creating a MutatingAdmissionPolicy", ac.provider.Create(ctx, rogue))
	vap := rogue.DeepCopy()
	vap.SetKind("ValidatingAdmissionPolicy")
	unstructured.RemoveNestedField(vap.Object, "spec", "mutations")
	unstructured.RemoveNestedField(vap.Object, "spec", "reinvocationPolicy")
	wantForbidden("creating a ValidatingAdmissionPolicy", ac.provider.Create(ctx, vap))
	for _, o := range []struct{ kind, name string }{
		{"MutatingAdmissionPolicy", "burstpool-executor-gate"},
		{"MutatingAdmissionPolicyBinding", "burstpool-executor-gate"},
		{"ValidatingAdmissionPolicy", "burstpool-executor-gate-guard"},
		{"ValidatingAdmissionPolicyBinding", "burstpool-executor-gate-guard"},
		{"ValidatingAdmissionPolicyBinding", "burstpool-access.e6-pools.burst-pool"},
	} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("admissionregistration.k8s.io/v1")
		u.SetKind(o.kind)
		u.SetName(o.name)
		merge := []byte(`{"metadata":{"labels":{"owned":"by-the-provider"}}}`)
		wantForbidden(fmt.Sprintf("patching %s %s", o.kind, o.name), ac.provider.Patch(ctx, u, client.RawPatch(types.MergePatchType, merge)))
		wantForbidden(fmt.Sprintf("deleting %s %s", o.kind, o.name), ac.provider.Delete(ctx, u))
	}
	for _, kind := range []string{"MutatingAdmissionPolicyBinding", "ValidatingAdmissionPolicyBinding"} {
		b := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"policyName": "burstpool-executor-gate"}}}
		b.SetAPIVersion("admissionregistration.k8s.io/v1")
		b.SetKind(kind)
		b.SetName("rogue")
		if kind == "ValidatingAdmissionPolicyBinding" {
			b.Object["spec"] = map[string]any{"policyName": "burstpool-executor-gate-guard", "validationActions": []any{"Audit"}}
		}
		wantForbidden("creating a "+kind, ac.provider.Create(ctx, b))
	}
}
