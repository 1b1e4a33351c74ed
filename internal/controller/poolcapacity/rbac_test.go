package poolcapacity_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/watch"
)

// TestLeastPrivilege runs the provider as its service account
// (provider-burstpool in crossplane-system, the one the shipped
// DeploymentRuntimeConfig fixes), bound by nothing but the shipped roles and
// bindings of deploy/provider (the opt-in eviction role included), with
// both deletion policies on, warm-before-schedule, warm slots and the
// executor gate of a CapacityBuffer (its static policies applied as the
// platform applies deploy/provider/executor-gate.yaml), and
// checks that it observes, deletes, opens a warming node, releases a
// placeholder and writes the pool's ExecutorGate as it should, through a ProviderConfig with the injected identity and one whose
// kubeconfig Secret it reads through its namespaced Role.
func TestLeastPrivilege(t *testing.T) {
	const (
		pool = "rbac-pool"
		sa   = "provider-burstpool"
		ns   = "crossplane-system"
	)
	ctx := context.Background()
	c := newClient(t, ns)
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range providerRBAC(t) {
		u := o.obj
		// Other tests may have created the ClusterRoles from the same
		// files already.
		if err := c.Create(ctx, u); err != nil && (u.GetKind() != "ClusterRole" || !kerrors.IsAlreadyExists(err)) {
			t.Fatalf("cannot create %s %s from deploy/provider/%s: %v", u.GetKind(), u.GetName(), o.file, err)
		}
		kinds[u.GetKind()]++
	}
	if diff := cmp.Diff(map[string]int{"ClusterRole": 3, "Role": 1, "ClusterRoleBinding": 3, "RoleBinding": 1}, kinds); diff != "" {
		t.Fatalf("deploy/provider's roles changed shape (-want +got):\n%s", diff)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := c.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}}, tr); err != nil {
		t.Fatalf("cannot get a token for service account %s/%s: %v", ns, sa, err)
	}
	as := rest.AnonymousClientConfig(env.Config)
	as.BearerToken = tr.Status.Token

	// A kubeconfig of the same cluster, with the same identity, in a
	// Secret only the namespaced Role lets the provider read.
	kc, err := clientcmd.Write(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: as.Host, CertificateAuthorityData: as.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": {Token: as.BearerToken}},
		Contexts:       map[string]*clientcmdapi.Context{"c": {Cluster: "c", AuthInfo: "u"}},
		CurrentContext: "c",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rbac-kubeconfig", Namespace: ns}, Data: map[string][]byte{"kubeconfig": kc}}); err != nil {
		t.Fatal(err)
	}

	createNamespace(t, c, "team-r")
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "rbac-node", Labels: map[string]string{qsv1alpha1.LabelPool: pool}}}
	// Launched warming: the provider opens it at the bound (patch nodes).
	warming := corev1.Taint{Key: qsv1alpha1.TaintWarming, Value: pool, Effect: corev1.TaintEffectNoSchedule}
	n.Spec.Taints = []corev1.Taint{warming}
	if err := c.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if err := c.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	labels := func(qs string) map[string]string {
		l := executorLabels(qs)
		l[qsv1alpha1.LabelPool] = pool
		return l
	}
	createPod(t, c, "team-r", "ok", "rbac-node", labels("sales"), nil, running(time.Now()))
	createPod(t, c, "team-r", "failed", "rbac-node", labels("sales"), nil, corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Error", Message: "exit 1"})
	createPod(t, c, "team-r", "intruder", "rbac-node", labels("other"), nil, running(time.Now()))

	if err := c.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "rbac"},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}}}); err != nil {
		t.Fatal(err)
	}
	pc := poolCapacity("rbac", "rbac")
	pc.Spec.ForProvider.Pool.Name = pool
	pc.Spec.ForProvider.NodeSelector = map[string]string{qsv1alpha1.LabelPool: pool}
	pc.Spec.ForProvider.ExecutorSelector = map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool}
	pc.Spec.ForProvider.WarmupSelector = nil
	pc.Spec.ForProvider.QueryServices = []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: "team-r"}}
	pc.Spec.ForProvider.Policies = v1alpha1.Policies{DeleteFailedExecutors: true, UnauthorizedExecutors: v1alpha1.UnauthorizedEvict}
	pc.Spec.ForProvider.Startup = &v1alpha1.Startup{Taint: warming, Images: []string{"e6/exec:1"}, OpenAfter: metav1.Duration{Duration: time.Second}}
	pc.Spec.ForProvider.WarmSlots = &v1alpha1.WarmSlots{Selector: map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder},
		Gate: qsv1alpha1.GateWarmSlot, Slots: 2}
	// A gated placeholder, in the pool's namespace, the provider releases
	// (patch pods).
	createNamespace(t, c, pc.Spec.ForProvider.Pool.Namespace)
	if err := c.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: pc.Spec.ForProvider.Pool.Namespace, Name: "rbac-placeholder", Labels: pc.Spec.ForProvider.WarmSlots.Selector},
		Spec:       corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: qsv1alpha1.GateWarmSlot}}, Containers: []corev1.Container{{Name: "pause", Image: "pause"}}},
	}); err != nil {
		t.Fatal(err)
	}
	// The pool's CapacityBuffer, whose replicas the provider takes over
	// (get, then server-side apply).
	createBuffer(t, c, pc.Spec.ForProvider.Pool.Namespace, "rbac-warm-slots")
	// Its executor gate: the platform applies the static policies; the
	// provider writes the ExecutorGate that parameterises them, and reads
	// the static policy by name.
	applyExecutorGatePolicies(t, c)
	pc.Spec.ForProvider.WarmSlots.CapacityBuffer = &v1alpha1.WarmBuffer{Name: "rbac-warm-slots", Holds: true}
	pc.Spec.ForProvider.ExecutorGate = qsv1alpha1.GateExecutor
	// A learned warm level: the demand history and the recommendation
	// go into the status the provider writes (status of PoolCapacities).
	pc.Spec.ForProvider.WarmPolicy = &v1alpha1.WarmPolicy{Learned: &v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: metav1.Duration{Duration: 5 * time.Minute}}}
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}

	secretPC := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "rbac-secret"},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceSecret}}}
	secretPC.Spec.Credentials.SecretRef = &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Name: "rbac-kubeconfig", Namespace: ns}, Key: "kubeconfig"}
	if err := c.Create(ctx, secretPC); err != nil {
		t.Fatal(err)
	}
	remote := poolCapacity("rbac-remote", "rbac-secret")
	remote.Spec.ForProvider.Pool.Name = pool
	remote.Spec.ForProvider.NodeSelector = pc.Spec.ForProvider.NodeSelector
	remote.Spec.ForProvider.ExecutorSelector = pc.Spec.ForProvider.ExecutorSelector
	remote.Spec.ForProvider.WarmupSelector = nil
	if err := c.Create(ctx, remote); err != nil {
		t.Fatal(err)
	}

	p := startProviderAs(t, as, watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
	defer p.stop(t)

	for _, name := range []string{"failed", "intruder"} {
		eventually(t, "deleting pod team-r/"+name, func() error {
			got := &corev1.Pod{}
			err := c.Get(ctx, client.ObjectKey{Namespace: "team-r", Name: name}, got)
			if kerrors.IsNotFound(err) || (err == nil && got.DeletionTimestamp != nil) {
				return nil
			}
			return fmt.Errorf("pod team-r/%s is still there (err %v)", name, err)
		})
	}
	converges(t, c, "rbac", summary{
		Total: 2, Available: 1, Occupied: 1, Ready: 1,
		Allocations: []string{"team-r/sales pool=1 regular=0 allocated=true"},
		// The evicted intruder terminates with the DisruptionTarget
		// condition the Eviction API sets (no kubelet removes it here).
		Failures:    []string{"team-r/failed Error 0", "team-r/intruder Disrupted 0"},
		ReadyReason: string(xpv2.ReasonAvailable),
	})
	eventually(t, "node opened and placeholder released", func() error {
		got, ph := &corev1.Node{}, &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Name: "rbac-node"}, got); err != nil {
			return err
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: pc.Spec.ForProvider.Pool.Namespace, Name: "rbac-placeholder"}, ph); err != nil {
			return err
		}
		if slices.ContainsFunc(got.Spec.Taints, func(x corev1.Taint) bool { return x.MatchTaint(&warming) }) || len(ph.Spec.SchedulingGates) > 0 {
			return fmt.Errorf("node taints %v, placeholder gates %v", got.Spec.Taints, ph.Spec.SchedulingGates)
		}
		return nil
	})
	eventually(t, "CapacityBuffer rbac-warm-slots taken over", func() error {
		if n := bufferReplicas(t, c, pc.Spec.ForProvider.Pool.Namespace, "rbac-warm-slots"); n == 3 {
			return fmt.Errorf("CapacityBuffer rbac-warm-slots still has the 3 replicas it was created with")
		}
		return nil
	})
	eventually(t, "ExecutorGate rbac written", func() error {
		return c.Get(ctx, client.ObjectKey{Name: "rbac"}, &v1alpha1.ExecutorGate{})
	})
	// The provider found the static policy: no ExecutorGateUnavailable
	// (events are recorded asynchronously, within milliseconds).
	time.Sleep(time.Second)
	events := &corev1.EventList{}
	if err := c.List(ctx, events); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name == "rbac" && e.Reason == "ExecutorGateUnavailable" {
			t.Errorf("PoolCapacity rbac: ExecutorGateUnavailable under the shipped roles: %s", e.Message)
		}
	}
	eventually(t, "PoolCapacity rbac's demand history and learned warm level written", func() error {
		got := getPC(t, c, "rbac")
		if got.Status.AtProvider.Demand == nil || got.Status.AtProvider.WarmRecommendation == nil {
			return fmt.Errorf("demand written: %t, warm recommendation written: %t", got.Status.AtProvider.Demand != nil, got.Status.AtProvider.WarmRecommendation != nil)
		}
		return nil
	})
	eventually(t, "PoolCapacity rbac-remote observes through the kubeconfig Secret", func() error {
		got := &v1alpha1.PoolCapacity{}
		if err := c.Get(ctx, client.ObjectKey{Name: "rbac-remote"}, got); err != nil {
			return err
		}
		if r := got.GetCondition(xpv2.TypeReady); r.Reason != xpv2.ReasonAvailable {
			return fmt.Errorf("Ready is %s/%s: %s (Synced: %s)", r.Status, r.Reason, r.Message, got.GetCondition(xpv2.TypeSynced).Message)
		}
		return nil
	})
}

// createRBACRoles creates the ClusterRoles of deploy/provider (the
// provider's roles and the opt-in eviction role), unless they exist, and
// returns them.
func createRBACRoles(t *testing.T, c client.Client) []rbacv1.ClusterRole {
	t.Helper()
	var roles []rbacv1.ClusterRole
	for _, o := range providerRBAC(t) {
		if o.obj.GetKind() != "ClusterRole" {
			continue
		}
		var cr rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &cr); err != nil {
			t.Fatalf("ClusterRole %s of deploy/provider/%s: %v", o.obj.GetName(), o.file, err)
		}
		roles = append(roles, cr)
		if err := c.Create(context.Background(), &cr); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatalf("cannot create ClusterRole %s: %v", cr.Name, err)
		}
	}
	return roles
}

// An rbacObject is one object of deploy/provider's roles and the file it is
// in.
type rbacObject struct {
	file string
	obj  *unstructured.Unstructured
}

// providerRBAC reads the objects of deploy/provider's roles: the provider's
// own (rbac.yaml) and the opt-in eviction role (rbac-evictions.yaml).
func providerRBAC(t *testing.T) []rbacObject {
	t.Helper()
	var objs []rbacObject
	for _, f := range []string{"rbac.yaml", "rbac-evictions.yaml"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "provider", f))
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("deploy/provider/%s: %v", f, err)
			}
			objs = append(objs, rbacObject{file: f, obj: u})
		}
	}
	return objs
}

// executorGatePolicies are the static policies and bindings of
// deploy/provider/executor-gate.yaml.
func executorGatePolicies(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "provider", "executor-gate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err == io.EOF {
			return objs
		} else if err != nil {
			t.Fatalf("deploy/provider/executor-gate.yaml: %v", err)
		}
		objs = append(objs, u)
	}
}

// applyExecutorGatePolicies creates the static policies and bindings of
// deploy/provider/executor-gate.yaml, as the platform applies them once
// at install; those another test created already are left as they are.
func applyExecutorGatePolicies(t *testing.T, c client.Client) {
	t.Helper()
	for _, u := range executorGatePolicies(t) {
		if err := c.Create(context.Background(), u); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatalf("cannot create %s %s of deploy/provider/executor-gate.yaml: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// deleteExecutorGatePolicies deletes what applyExecutorGatePolicies
// creates, for a test that starts without it.
func deleteExecutorGatePolicies(t *testing.T, c client.Client) {
	t.Helper()
	for _, u := range executorGatePolicies(t) {
		if err := c.Delete(context.Background(), u); err != nil && !kerrors.IsNotFound(err) {
			t.Fatalf("cannot delete %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// providerIdentity is a client identity named as the provider's service
// account (system:serviceaccount:crossplane-system:provider-burstpool),
// with an administrator's rights.
func providerIdentity(t *testing.T) *rest.Config {
	t.Helper()
	name := "system:serviceaccount:" + v1alpha1.DefaultProviderNamespace + ":" + v1alpha1.ProviderServiceAccount
	u, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return u.Config()
}
