package poolcapacity_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/watch"
)

// fastWatch is how the fault tests run the observers.
var fastWatch = watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond}

// counter sums the counter called name in g, over the series whose labels
// match: all of them when match is nil.
func counter(t *testing.T, g prometheus.Gatherer, name string, match func(label, value string) bool) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if match == nil || slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return match(l.GetName(), l.GetValue()) }) {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// reconciles returns how many reconciles of PoolCapacities controller-runtime
// has counted in this process.
func reconciles(t *testing.T) float64 {
	t.Helper()
	name := managed.ControllerName(v1alpha1.PoolCapacityGroupKind)
	return counter(t, crmetrics.Registry, "controller_runtime_reconcile_total", func(l, v string) bool { return l == "controller" && v == name })
}

// faultPool is a pool of its own for one fault test: its nodes, and the
// labels of its executors.
type faultPool struct{ name string }

// newFaultPool creates what every fault test starts from: a client with
// the namespaces of the pool's executors (and any more the test needs),
// the local ProviderConfig and one ready pool node, NAME-node.
func newFaultPool(t *testing.T, name string, namespaces ...string) (client.Client, faultPool) {
	t.Helper()
	c := newClient(t, namespaces...)
	ensureLocalProviderConfig(t, c)
	fp := faultPool{name}
	fp.node(t, c, name+"-node")
	return c, fp
}

func (fp faultPool) node(t *testing.T, c client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{qsv1alpha1.LabelPool: fp.name}}}
	if err := c.Create(ctx, n); err != nil {
		t.Fatalf("cannot create node %s: %v", name, err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "Test", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(ctx, n); err != nil {
		t.Fatalf("cannot set the status of node %s: %v", name, err)
	}
}

func (fp faultPool) labels(qs string) map[string]string {
	l := executorLabels(qs)
	l[qsv1alpha1.LabelPool] = fp.name
	return l
}

func (fp faultPool) capacity(name, providerConfig, ns string) *v1alpha1.PoolCapacity {
	pc := poolCapacity(name, providerConfig)
	pc.Spec.ForProvider.Pool.Name = fp.name
	pc.Spec.ForProvider.NodeSelector = map[string]string{qsv1alpha1.LabelPool: fp.name}
	pc.Spec.ForProvider.ExecutorSelector = map[string]string{qsv1alpha1.LabelPool: fp.name, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool}
	pc.Spec.ForProvider.WarmupSelector = nil
	pc.Spec.ForProvider.MaxExecutors = 100
	pc.Spec.ForProvider.QueryServices = []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: ns}}
	return pc
}

func ensureLocalProviderConfig(t *testing.T, c client.Client) {
	t.Helper()
	err := c.Create(context.Background(), &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}}})
	if err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// deletePCs deletes the PoolCapacities called names and waits until they
// are gone, so that later tests' providers do not see them. It returns how
// long the slowest took.
func deletePCs(t *testing.T, c client.Client, names ...string) time.Duration {
	t.Helper()
	ctx := context.Background()
	var slowest time.Duration
	for _, name := range names {
		start := time.Now()
		if err := c.Delete(ctx, &v1alpha1.PoolCapacity{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !kerrors.IsNotFound(err) {
			t.Fatal(err)
		}
		eventually(t, name+" going away", func() error {
			err := c.Get(ctx, client.ObjectKey{Name: name}, &v1alpha1.PoolCapacity{})
			if kerrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there: %v", err)
		})
		slowest = max(slowest, time.Since(start))
	}
	return slowest
}

func getPC(t *testing.T, c client.Client, name string) *v1alpha1.PoolCapacity {
	t.Helper()
	pc := &v1alpha1.PoolCapacity{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, pc); err != nil {
		t.Fatal(err)
	}
	return pc
}

// TestReconcileRateUnderFailingExecutors runs a pool with 40 executors that
// cannot pull their image and counts reconciles once the status is written:
// only the poll interval may reconcile a pool whose inputs do not change.
func TestReconcileRateUnderFailingExecutors(t *testing.T) {
	const ns = "team-churn"
	ctx := context.Background()
	c, fp := newFaultPool(t, "churn", ns)
	for i := range 40 {
		createPod(t, c, ns, fmt.Sprintf("pull-%02d", i), "churn-node", fp.labels("sales"), nil, corev1.PodStatus{Phase: corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "executor", Image: "e6/exec:typo", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image e6/exec:typo"}}}}})
	}
	if err := c.Create(ctx, fp.capacity("churn", "default", ns)); err != nil {
		t.Fatal(err)
	}
	p := startProvider(t, fastWatch)
	defer p.stop(t)
	eventually(t, "20 failures listed", func() error {
		if n := len(getPC(t, c, "churn").Status.AtProvider.Failures); n != 20 {
			return fmt.Errorf("%d failures listed", n)
		}
		return nil
	})

	const window = 10 * time.Second
	before, rv := reconciles(t), getPC(t, c, "churn").ResourceVersion
	time.Sleep(window)
	n := reconciles(t) - before
	perMinute := n * float64(time.Minute/window)
	t.Logf("%.0f reconciles in %s (%.0f a minute, poll interval 2s); status rewritten: %t", n, window, perMinute, getPC(t, c, "churn").ResourceVersion != rv)
	// The poll interval alone is 30 a minute; allow the other tests'
	// PoolCapacities a share.
	if perMinute > 60 {
		t.Errorf("%.0f reconciles a minute of a pool whose pods do not change; want at most 60 (the 2s poll interval is 30)", perMinute)
	}
	if got := getPC(t, c, "churn").ResourceVersion; got != rv {
		t.Errorf("the status of a pool whose pods do not change was rewritten (resourceVersion %s -> %s)", rv, got)
	}
	deletePCs(t, c, "churn")
}

// blackhole accepts TCP connections and never answers, as a cluster
// behind a dropped route or a dead load balancer does.
func blackhole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

func kubeconfigFor(t *testing.T, server string) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["gone"] = &clientcmdapi.Cluster{Server: "https://" + server, InsecureSkipTLSVerify: true}
	kc.AuthInfos["gone"] = &clientcmdapi.AuthInfo{Token: "x"}
	kc.Contexts["gone"] = &clientcmdapi.Context{Cluster: "gone", AuthInfo: "gone"}
	kc.CurrentContext = "gone"
	b, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUnreachableCluster points ten PoolCapacities at a cluster that never
// answers and one at a kubeconfig secret that is gone, and checks that a
// healthy pool still converges in its usual time, that the unreachable ones
// say why they are not Ready, and that deleting them completes.
func TestUnreachableCluster(t *testing.T) {
	const ns = "team-reach"
	ctx := context.Background()
	c, fp := newFaultPool(t, "reach", ns, "burstpool-system")
	createPod(t, c, ns, "reach-exec", "reach-node", fp.labels("sales"), nil, running(time.Now().Add(-time.Minute)))

	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "burstpool-system", Name: "blackhole-kubeconfig"},
		Data: map[string][]byte{"kubeconfig": kubeconfigFor(t, blackhole(t))}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"blackhole", "no-secret"} {
		pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}}
		pc.Spec.Credentials.Source = xpv2.CredentialsSourceSecret
		pc.Spec.Credentials.SecretRef = &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "burstpool-system", Name: name + "-kubeconfig"}, Key: "kubeconfig"}
		if err := c.Create(ctx, pc); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if err := c.Create(ctx, fp.capacity(fmt.Sprintf("reach-gone-%d", i), "blackhole", ns)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, fp.capacity("reach-no-secret", "no-secret", ns)); err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	p := startProvider(t, fastWatch)
	defer p.stop(t)
	// Created after the provider started, so that it queues behind the
	// unreachable ones.
	if err := c.Create(ctx, fp.capacity("reach-healthy", "default", ns)); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	eventually(t, "the healthy pool converging", func() error {
		if got := getPC(t, c, "reach-healthy").Status.AtProvider.OccupiedExecutors; got != 1 {
			return fmt.Errorf("occupiedExecutors = %d", got)
		}
		return nil
	})
	took := time.Since(created)
	t.Logf("the healthy pool converged %s after it was created (%s after the provider started) beside 10 pools of an unreachable cluster", took.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("the healthy pool took %s to converge; want under 5s: pools of an unreachable cluster must not hold the workers", took)
	}

	for _, name := range []string{"reach-gone-0", "reach-no-secret"} {
		eventually(t, name+" saying why it is not Ready", func() error {
			cond := getPC(t, c, name).GetCondition(xpv2.TypeReady)
			if cond.Status != corev1.ConditionFalse || cond.Reason != "ClusterUnreachable" {
				return fmt.Errorf("Ready is %s (%s): %s", cond.Status, cond.Reason, cond.Message)
			}
			return nil
		})
	}

	names := []string{"reach-no-secret"}
	for i := range 10 {
		names = append(names, fmt.Sprintf("reach-gone-%d", i))
	}
	slowest := deletePCs(t, c, names...)
	t.Logf("deleting a PoolCapacity whose cluster is gone took at most %s", slowest.Round(time.Millisecond))
	if slowest > 5*time.Second {
		t.Errorf("deleting a PoolCapacity whose cluster is gone took %s; want under 5s", slowest)
	}
	deletePCs(t, c, "reach-healthy")
}

// runawayReplicaSet plays a ReplicaSet controller: it keeps n pods of an
// unattached QueryService, recreating each one that is deleted, and counts
// how many it had to recreate.
func runawayReplicaSet(ctx context.Context, t *testing.T, c client.Client, fp faultPool, ns string, n int, recreated *atomic.Int64) {
	pod := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "rogue-", Labels: fp.labels("rogue"),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rogue", UID: "rogue-uid", Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: fp.name + "-node", Containers: []corev1.Container{{Name: "executor", Image: "e6/exec:1"}},
				Tolerations: []corev1.Toleration{{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpExists}}},
		}
	}
	filled := false
	for ctx.Err() == nil {
		var l corev1.PodList
		if err := c.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels(fp.labels("rogue"))); err == nil {
			live := 0
			for _, p := range l.Items {
				if p.DeletionTimestamp == nil {
					live++
				}
			}
			for i := live; i < n; i++ {
				p := pod()
				if err := c.Create(ctx, p); err == nil {
					// Ready, so that the PodDisruptionBudget guards it.
					p.Status = running(time.Now())
					p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
					_ = c.Status().Update(ctx, p)
					if filled {
						recreated.Add(1)
					}
				}
			}
			filled = filled || len(l.Items) >= n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// evictionsOf counts the pods the provider evicted.
func evictionsOf(t *testing.T, p *provider) float64 {
	t.Helper()
	return counter(t, p.metrics, "burstpool_pool_evictions_total", nil)
}

// TestRunawayReplicaSet evicts the unauthorized executors of a ReplicaSet
// that recreates them as fast as they go: a PodDisruptionBudget that allows
// no disruption stops every eviction (and the status still follows the
// pods), and without it evictions stay within the per-pool rate and the
// per-owner backoff.
func TestRunawayReplicaSet(t *testing.T) {
	const ns = "team-runaway"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, fp := newFaultPool(t, "runaway", ns)

	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rogue"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(0)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{qsv1alpha1.LabelQueryService: "rogue"}}}}
	if err := c.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	// No disruption controller runs here: say what it would.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 3, DesiredHealthy: 3, ExpectedPods: 3}
	if err := c.Status().Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}

	var recreated atomic.Int64
	go runawayReplicaSet(ctx, t, c, fp, ns, 3, &recreated)
	pc := fp.capacity("runaway", "default", ns)
	pc.Spec.ForProvider.Policies.UnauthorizedExecutors = v1alpha1.UnauthorizedEvict
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	p := startProvider(t, fastWatch)
	defer p.stop(t)

	t.Run("PDBRespected", func(t *testing.T) {
		eventually(t, "three unauthorized executors reported", func() error {
			if got := getPC(t, c, "runaway").Status.AtProvider.UnauthorizedExecutors; len(got) != 3 {
				return fmt.Errorf("%d unauthorized executors", len(got))
			}
			return nil
		})
		time.Sleep(quietLong)
		if n := recreated.Load(); n != 0 {
			t.Errorf("%d executors were removed although their PodDisruptionBudget allows no disruption", n)
		}
		// The status keeps following the pods while evictions fail.
		createPod(t, c, ns, "sales-exec", "runaway-node", fp.labels("sales"), nil, running(time.Now()))
		eventually(t, "the status following the pods while evictions are refused", func() error {
			o := getPC(t, c, "runaway").Status.AtProvider
			if o.OccupiedExecutors != 4 {
				return fmt.Errorf("occupiedExecutors = %d, want 4", o.OccupiedExecutors)
			}
			return nil
		})
	})

	t.Run("RateBounded", func(t *testing.T) {
		if err := c.Delete(ctx, pdb); err != nil {
			t.Fatal(err)
		}
		const window = 30 * time.Second
		time.Sleep(window)
		n := recreated.Load()
		t.Logf("%d executors evicted and recreated in %s (%.0f a minute) under a runaway ReplicaSet; evictions counted: %.0f", n, window, float64(n)*float64(time.Minute/window), evictionsOf(t, p))
		if n == 0 {
			t.Error("no unauthorized executor was evicted")
		}
		if n > 6 {
			t.Errorf("%d evictions in %s; want at most 6 (the per-owner backoff allows about 3)", n, window)
		}
	})
	cancel()
	deletePCs(t, c, "runaway")
}

// TestEvictionFailureKeepsStatus runs the provider without the right to
// remove pods while a pool's policy says to evict: the status must keep
// following the pods, and Synced must say what failed.
func TestEvictionFailureKeepsStatus(t *testing.T) {
	const (
		ns   = "team-noevict"
		user = "capacity-provider-no-evict"
	)
	ctx := context.Background()
	c, fp := newFaultPool(t, "noevict", ns)
	for _, role := range []string{"burstpool-capacity-observer", "burstpool-capacity-provider"} {
		if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	createRBACRoles(t, c)
	au, err := env.AddUser(envtest.User{Name: user}, nil)
	if err != nil {
		t.Fatal(err)
	}
	createPod(t, c, ns, "intruder", "noevict-node", fp.labels("rogue"), nil, running(time.Now()))
	pc := fp.capacity("noevict", "default", ns)
	pc.Spec.ForProvider.Policies.UnauthorizedExecutors = v1alpha1.UnauthorizedEvict
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	p := startProviderAs(t, au.Config(), fastWatch)
	defer p.stop(t)

	createPod(t, c, ns, "sales-exec", "noevict-node", fp.labels("sales"), nil, running(time.Now()))
	eventually(t, "the status following the pods while evictions fail", func() error {
		got := getPC(t, c, "noevict")
		if o := got.Status.AtProvider; o.OccupiedExecutors != 2 || len(o.UnauthorizedExecutors) != 1 {
			return fmt.Errorf("occupiedExecutors = %d, unauthorized = %d; want 2 and 1", o.OccupiedExecutors, len(o.UnauthorizedExecutors))
		}
		if s := got.GetCondition(xpv2.TypeSynced); s.Status != corev1.ConditionFalse || !strings.Contains(s.Message, "forbidden") {
			return fmt.Errorf("Synced is %s: %s; want False saying the eviction is forbidden", s.Status, s.Message)
		}
		return nil
	})
	deletePCs(t, c, "noevict")
}

// TestObserveOnlyActsOnNothing runs a pool whose policy evicts executors of
// QueryServices it does not attach, under the management policy Observe
// alone: crossplane-runtime calls only Observe then, so the provider must
// report the intruder and leave it running. Given every management policy
// back, Update evicts it. (crossplane-runtime v2.4 pkg/reconciler/managed:
// an Observe-only resource is observed, never created, updated or
// deleted.)
func TestObserveOnlyActsOnNothing(t *testing.T) {
	const ns = "team-observe"
	ctx := context.Background()
	c, fp := newFaultPool(t, "observe", ns)
	createPod(t, c, ns, "intruder", "observe-node", fp.labels("rogue"), nil, running(time.Now()))
	pc := fp.capacity("observe", "default", ns)
	pc.Spec.ForProvider.Policies.UnauthorizedExecutors = v1alpha1.UnauthorizedEvict
	pc.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve}
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	p := startProvider(t, fastWatch)
	defer p.stop(t)

	eventually(t, "the intruder reported", func() error {
		if o := getPC(t, c, "observe").Status.AtProvider; len(o.UnauthorizedExecutors) != 1 {
			return fmt.Errorf("unauthorized = %v; want the intruder", o.UnauthorizedExecutors)
		}
		return nil
	})
	// Several reconciles at the fast watch's pace.
	time.Sleep(quietLong)
	intruder := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "intruder"}, intruder); err != nil || intruder.DeletionTimestamp != nil {
		t.Fatalf("the intruder was acted on under an Observe-only policy: %v (deletion %v)", err, intruder.DeletionTimestamp)
	}

	got := getPC(t, c, "observe")
	got.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionAll}
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the intruder evicted once every management policy is back", func() error {
		// Without a kubelet, an evicted pod bound to a node keeps its
		// deletion timestamp instead of going.
		p := &corev1.Pod{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "intruder"}, p)
		if kerrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil) {
			return nil
		}
		return fmt.Errorf("intruder still there: %v", err)
	})
	deletePCs(t, c, "observe")
}
