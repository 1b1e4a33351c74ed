package poolcapacity_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/watch"
)

// TestLeastPrivilege runs the provider as a user bound to nothing but the
// ClusterRoles of docs/capacity-rbac.yaml, with both deletion policies on,
// and checks that it observes and deletes what it should.
func TestLeastPrivilege(t *testing.T) {
	const (
		pool = "rbac-pool"
		user = "capacity-provider"
	)
	ctx := context.Background()
	c := newClient(t)

	roles := createRBACRoles(t, c)
	for _, cr := range roles {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "test-" + cr.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}
		if err := c.Create(ctx, crb); err != nil {
			t.Fatal(err)
		}
	}
	if len(roles) != 3 {
		t.Fatalf("docs/capacity-rbac.yaml should hold 3 ClusterRoles, found %d", len(roles))
	}
	au, err := env.AddUser(envtest.User{Name: user}, nil)
	if err != nil {
		t.Fatal(err)
	}

	createNamespace(t, c, "team-r")
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "rbac-node", Labels: map[string]string{qsv1alpha1.LabelPool: pool}}}
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
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}

	p := startProviderAs(t, au.Config(), watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
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
}

// createRBACRoles creates the ClusterRoles of docs/capacity-rbac.yaml, unless
// they exist, and returns them.
func createRBACRoles(t *testing.T, c client.Client) []rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "capacity-rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var roles []rbacv1.ClusterRole
	for {
		var cr rbacv1.ClusterRole
		if err := dec.Decode(&cr); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if cr.Kind != "ClusterRole" {
			continue
		}
		roles = append(roles, cr)
		if err := c.Create(context.Background(), &cr); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatalf("cannot create ClusterRole %s: %v", cr.Name, err)
		}
	}
	return roles
}
