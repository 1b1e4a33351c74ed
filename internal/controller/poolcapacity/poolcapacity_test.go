package poolcapacity_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/warmup"
	"github.com/burstpool/burstpool/internal/watch"
	"github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/capacityprovider"
)

const pool = "analytics"

// The bounds of the package's waits. The provider under test reconciles
// on watch events and every 1-2 s (the tests' poll intervals), so what the
// API server holds shows in a PoolCapacity's status within seconds.
const (
	// timeout bounds every wait for the provider to act or report: a
	// workload cluster summary is read again every 15 s
	// (SummaryRefresh), so 30 s is two refreshes, with room for a loaded
	// machine.
	timeout = 30 * time.Second
	// quietShort and quietLong are how long a test watches for something
	// that must not happen (a buffer moved, a gate removed, an eviction):
	// two reconciles at the poll interval, and several at the fast
	// watch's pace for the eviction paths, which back off.
	quietShort = 2 * time.Second
	quietLong  = 5 * time.Second
	// secondApart separates two events whose timestamps the API server
	// keeps to the second (creation, a pod's start), so that they order.
	secondApart = 1100 * time.Millisecond
)

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := policyv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := rbacv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// newClient returns a client of the test API server, with the namespaces
// created.
func newClient(t *testing.T, namespaces ...string) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: scheme(t)})
	if err != nil {
		t.Fatalf("cannot create a client: %v", err)
	}
	for _, ns := range namespaces {
		createNamespace(t, c, ns)
	}
	return c
}

// provider is one run of the capacity provider, in process.
type provider struct {
	*capacityprovider.Provider
	metrics *prometheus.Registry
}

func startProvider(t *testing.T, w watch.Options) *provider {
	t.Helper()
	return startProviderAs(t, cfg, w)
}

// startProviderAs runs the provider with the identity of as.
func startProviderAs(t *testing.T, as *rest.Config, w watch.Options) *provider {
	t.Helper()
	p := capacityprovider.Start(t, as, scheme(t), w)
	return &provider{Provider: p, metrics: p.Metrics}
}

func (p *provider) stop(t *testing.T) {
	t.Helper()
	p.Stop(t, timeout)
}

// eventually retries check until it returns nil or timeout passes.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	fixture.Eventually(t, timeout, what, check)
}

// testPool is the pool the package's tests observe.
var testPool = fixture.Pool{Name: pool}

// createKubeconfigSecret adds the API server user name, with cluster-admin
// rights, and stores its kubeconfig under the key kubeconfig in the Secret
// burstpool-system/secret, as the kubeconfig of a remote cluster is stored.
func createKubeconfigSecret(t *testing.T, c client.Client, name, secret string) {
	t.Helper()
	user, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "burstpool-system", Name: secret}, Data: map[string][]byte{"kubeconfig": kc}}); err != nil {
		t.Fatal(err)
	}
}

func createNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	fixture.CreateNamespaces(t, c, name)
}

// createNode creates a node of the test pool, Ready or not.
func createNode(t *testing.T, c client.Client, name string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	fixture.Create(t, c, fixture.Node(fixture.NodeOptions{Name: name, Pool: testPool, ReadyStatus: status}))
}

func executorLabels(qs string) map[string]string { return testPool.ExecutorLabels(qs) }

var running = fixture.Running

// createPod creates an executor pod that asks for its pool's nodes, with
// status as the scheduler and kubelet would write it.
func createPod(t *testing.T, c client.Client, ns, name, node string, labels, annotations map[string]string, status corev1.PodStatus) {
	t.Helper()
	p := fixture.Pool{Name: labels[qsv1alpha1.LabelPool]}
	fixture.Create(t, c, fixture.Pod(fixture.PodOptions{Namespace: ns, Name: name, Labels: labels, Annotations: annotations, NodeName: node,
		NodeSelector: map[string]string{qsv1alpha1.LabelPool: p.Name},
		Tolerations:  []corev1.Toleration{{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpExists}},
		Status:       status}))
}

func deletePod(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Delete(context.Background(), p, client.GracePeriodSeconds(0)); err != nil && !kerrors.IsNotFound(err) {
		t.Fatalf("cannot delete pod %s/%s: %v", ns, name, err)
	}
}

func poolCapacity(name, providerConfig string) *v1alpha1.PoolCapacity {
	pc := &v1alpha1.PoolCapacity{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.PoolCapacitySpec{
			ForProvider: v1alpha1.PoolCapacityParameters{
				Pool:             v1alpha1.PoolRef{Name: pool, Namespace: "team-a"},
				NodeSelector:     map[string]string{qsv1alpha1.LabelPool: pool},
				ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
				WarmupSelector:   map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentWarmup},
				ExecutorsPerNode: 2,
				MaxExecutors:     10,
				QueryServices:    []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: "team-a", RegularExecutors: 3}},
			},
		},
	}
	pc.SetProviderConfigReference(&xpv2.Reference{Name: providerConfig})
	return pc
}

// summary is the part of a status the tests compare, in one readable value.
type summary struct {
	Total, Available, Occupied, Pending int32
	Ready, NotReady                     int32
	Allocations                         []string
	Failures                            []string
	Unauthorized                        []string
	WarmupFailures                      []string
	ReadyReason                         string
}

func summarize(pc *v1alpha1.PoolCapacity) summary {
	o := pc.Status.AtProvider
	s := summary{
		Total: o.TotalExecutors, Available: o.AvailableExecutors, Occupied: o.OccupiedExecutors, Pending: o.PendingExecutors,
		Ready: o.Nodes.Ready, NotReady: o.Nodes.NotReady,
		ReadyReason: string(pc.GetCondition(xpv2.TypeReady).Reason),
	}
	for _, a := range o.Allocations {
		s.Allocations = append(s.Allocations, fmt.Sprintf("%s/%s pool=%d regular=%d allocated=%t", a.Namespace, a.QueryService, a.PoolExecutors, a.RegularExecutors, a.AllocatedAt != nil))
	}
	for _, f := range o.Failures {
		s.Failures = append(s.Failures, fmt.Sprintf("%s/%s %s %d", f.Namespace, f.Pod, f.Reason, f.ExitCode))
	}
	sort.Strings(s.Failures)
	for _, u := range o.UnauthorizedExecutors {
		s.Unauthorized = append(s.Unauthorized, fmt.Sprintf("%s/%s %s", u.Namespace, u.Pod, u.QueryService))
	}
	for _, w := range o.WarmupFailures {
		s.WarmupFailures = append(s.WarmupFailures, fmt.Sprintf("%s %s nodes=%d", w.Image, w.Reason, w.Nodes))
	}
	return s
}

func converges(t *testing.T, c client.Client, name string, want summary) *v1alpha1.PoolCapacity {
	t.Helper()
	got := &v1alpha1.PoolCapacity{}
	eventually(t, fmt.Sprintf("PoolCapacity %s converging", name), func() error {
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
			return err
		}
		if diff := cmp.Diff(want, summarize(got)); diff != "" {
			return fmt.Errorf("-want, +got:\n%s", diff)
		}
		return nil
	})
	return got
}

func update(t *testing.T, c client.Client, name string, fn func(*v1alpha1.PoolCapacity)) {
	t.Helper()
	eventually(t, "updating PoolCapacity "+name, func() error {
		pc := &v1alpha1.PoolCapacity{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, pc); err != nil {
			return err
		}
		fn(pc)
		return c.Update(context.Background(), pc)
	})
}

func TestPoolCapacity(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, "team-a", "team-c", "burstpool-system")
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)

	createNode(t, c, "node-1", true)
	createNode(t, c, "node-2", true)
	createNode(t, c, "node-3", false)

	createPod(t, c, "team-a", "sales-exec-1", "node-1", executorLabels("sales"), nil, running(start))
	createPod(t, c, "team-a", "sales-exec-2", "node-2", executorLabels("sales"), nil, running(start.Add(time.Minute)))
	createPod(t, c, "team-a", "sales-exec-oom", "node-1", executorLabels("sales"), nil, corev1.PodStatus{
		Phase: corev1.PodFailed,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "executor", Image: "e6/exec:1", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, FinishedAt: metav1.Time{Time: start}},
		}}},
	})
	// Waiting for room on the pool: the scheduler's verdict on a pod no
	// node has room for (PodScheduled False, reason Unschedulable).
	createPod(t, c, "team-a", "sales-exec-pending", "", executorLabels("sales"), nil, corev1.PodStatus{Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, LastTransitionTime: metav1.Now()}}})
	createPod(t, c, "team-c", "rogue-exec-1", "node-2", executorLabels("rogue"), nil, running(start))
	createPod(t, c, "team-a", "warm-typo-1", "node-1",
		map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentWarmup},
		map[string]string{warmup.AnnotationImage: "e6/exec:typo"},
		corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: "pull", Image: "e6/exec:typo", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"},
		}}}})

	// One ProviderConfig for the provider's own cluster, and one that
	// reaches the same API server through a kubeconfig secret, as a remote
	// cluster would be reached.
	ensureLocalProviderConfig(t, c)
	createKubeconfigSecret(t, c, "remote-observer", "remote-kubeconfig")
	remote := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "remote"}}
	remote.Spec.Credentials.Source = xpv2.CredentialsSourceSecret
	remote.Spec.Credentials.SecretRef = &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "burstpool-system", Name: "remote-kubeconfig"}, Key: "kubeconfig"}
	if err := c.Create(ctx, remote); err != nil {
		t.Fatal(err)
	}

	if err := c.Create(ctx, poolCapacity("analytics", "default")); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, poolCapacity("analytics-remote", "remote")); err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	p := startProvider(t, watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})

	want := summary{
		Total: 4, Available: 1, Occupied: 3, Pending: 1, Ready: 2, NotReady: 1,
		Allocations:    []string{"team-a/sales pool=2 regular=3 allocated=true"},
		Failures:       []string{"team-a/sales-exec-oom OOMKilled 137"},
		Unauthorized:   []string{"team-c/rogue-exec-1 rogue"},
		WarmupFailures: []string{"e6/exec:typo ImagePullBackOff nodes=1"},
		ReadyReason:    string(xpv2.ReasonAvailable),
	}
	var first *v1alpha1.PoolCapacity
	t.Run("Converges", func(t *testing.T) {
		first = converges(t, c, "analytics", want)
		if got := first.Status.AtProvider.Allocations[0].AllocatedAt.Time; !got.Equal(start) {
			t.Errorf("allocatedAt = %s, want the first executor's start %s", got, start)
		}
		t.Logf("converged %s after the provider started", time.Since(began).Round(time.Millisecond))
	})
	if t.Failed() {
		p.stop(t)
		return
	}

	t.Run("RemoteClusterThroughKubeconfigSecret", func(t *testing.T) {
		converges(t, c, "analytics-remote", want)
	})

	t.Run("Metrics", func(t *testing.T) {
		eventually(t, "pool gauges", func() error {
			const exp = `
# HELP burstpool_pool_executors Executor slots of a pool by state: total, available, occupied, pending or draining.
# TYPE burstpool_pool_executors gauge
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="available"} 1
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="draining"} 0
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="occupied"} 3
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="pending"} 1
burstpool_pool_executors{pool="analytics",pool_namespace="team-a",state="total"} 4
`
			return testutil.GatherAndCompare(p.metrics, strings.NewReader(exp), "burstpool_pool_executors")
		})
	})

	t.Run("PodChurn", func(t *testing.T) {
		for i := 0; i < 12; i++ {
			createPod(t, c, "team-a", fmt.Sprintf("sales-churn-%02d", i), "node-2", executorLabels("sales"), nil, running(time.Now()))
		}
		for i := 0; i < 12; i += 2 {
			deletePod(t, c, "team-a", fmt.Sprintf("sales-churn-%02d", i))
		}
		for i := 1; i < 12; i += 4 {
			deletePod(t, c, "team-a", fmt.Sprintf("sales-churn-%02d", i))
		}
		w := want
		w.Occupied, w.Available = 3+3, 0
		w.Allocations = []string{"team-a/sales pool=5 regular=3 allocated=true"}
		converges(t, c, "analytics", w)
		for _, i := range []int{3, 7, 11} {
			deletePod(t, c, "team-a", fmt.Sprintf("sales-churn-%02d", i))
		}
		converges(t, c, "analytics", want)
	})

	t.Run("RestartKeepsAllocationsAndFailures", func(t *testing.T) {
		p.stop(t)
		createPod(t, c, "team-a", "sales-exec-3", "node-1", executorLabels("sales"), nil, running(time.Now()))
		p = startProvider(t, watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
		w := want
		w.Occupied, w.Available = 4, 0
		w.Allocations = []string{"team-a/sales pool=3 regular=3 allocated=true"}
		got := converges(t, c, "analytics", w)
		if diff := cmp.Diff(first.Status.AtProvider.Allocations[0].AllocatedAt, got.Status.AtProvider.Allocations[0].AllocatedAt); diff != "" {
			t.Errorf("allocatedAt changed across a restart: %s", diff)
		}
		if diff := cmp.Diff(first.Status.AtProvider.Failures, got.Status.AtProvider.Failures); diff != "" {
			t.Errorf("failures changed across a restart: %s", diff)
		}
		deletePod(t, c, "team-a", "sales-exec-3")
		converges(t, c, "analytics", want)
	})
	p.stop(t)

	// With the watch off the poller is the only source, as when the watch
	// is cut; the status must follow the cluster all the same.
	p = startProvider(t, watch.Options{Watch: false, PollInterval: 500 * time.Millisecond})
	defer p.stop(t)

	t.Run("PollingOnly", func(t *testing.T) {
		// The status is already converged from the earlier run; wait for
		// this run's own observation, which its gauges show.
		eventually(t, "the poller's first observation", func() error {
			return testutil.GatherAndCompare(p.metrics, strings.NewReader(`
# HELP burstpool_pool_nodes Nodes of a pool by state: ready or not_ready.
# TYPE burstpool_pool_nodes gauge
burstpool_pool_nodes{pool="analytics",pool_namespace="team-a",state="not_ready"} 1
burstpool_pool_nodes{pool="analytics",pool_namespace="team-a",state="ready"} 2
`), "burstpool_pool_nodes")
		})
		if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-2"}}); err != nil {
			t.Fatal(err)
		}
		w := want
		w.Total, w.Available, w.Occupied, w.Ready = 2, 1, 1, 1
		w.Allocations = []string{"team-a/sales pool=1 regular=3 allocated=true"}
		// The foreign pod on the deleted node is on the pool no more:
		// only the attached namespace's executor is lost with it.
		w.Failures = []string{"team-a/sales-exec-2 NodeLost 0", "team-a/sales-exec-oom OOMKilled 137"}
		w.Unauthorized = nil
		converges(t, c, "analytics", w)
		want = w
	})

	t.Run("DeleteFailedExecutors", func(t *testing.T) {
		createPod(t, c, "team-c", "rogue-exec-2", "node-1", executorLabels("rogue"), nil, running(start))
		update(t, c, "analytics", func(pc *v1alpha1.PoolCapacity) {
			pc.Spec.ForProvider.Policies.DeleteFailedExecutors = true
			pc.Spec.ForProvider.Policies.UnauthorizedExecutors = v1alpha1.UnauthorizedEvict
		})
		for _, k := range []client.ObjectKey{{Namespace: "team-a", Name: "sales-exec-oom"}, {Namespace: "team-c", Name: "rogue-exec-2"}} {
			eventually(t, "deleting pod "+k.String(), func() error {
				got := &corev1.Pod{}
				err := c.Get(ctx, k, got)
				if kerrors.IsNotFound(err) || (err == nil && got.DeletionTimestamp != nil) {
					return nil
				}
				return fmt.Errorf("pod %s is still there (err %v)", k, err)
			})
		}
		for _, reason := range []string{"DeletedFailedExecutor", "DeletedUnauthorizedExecutor"} {
			eventually(t, "an event "+reason, func() error {
				var l corev1.EventList
				if err := c.List(ctx, &l); err != nil {
					return err
				}
				for _, e := range l.Items {
					if e.Reason == reason && e.InvolvedObject.Name == "analytics" {
						return nil
					}
				}
				return fmt.Errorf("no %s event on PoolCapacity analytics", reason)
			})
		}
		w := want
		w.Unauthorized = nil // the terminating pod no longer counts.
		// Its eviction is recorded as the disruption it is.
		w.Failures = append(slices.Clone(w.Failures), "team-c/rogue-exec-2 Disrupted 0")
		converges(t, c, "analytics", w)
	})

	t.Run("DeletedPoolCapacityIsReleased", func(t *testing.T) {
		for _, name := range []string{"analytics", "analytics-remote"} {
			if err := c.Delete(ctx, &v1alpha1.PoolCapacity{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "PoolCapacity "+name+" going away", func() error {
				err := c.Get(ctx, client.ObjectKey{Name: name}, &v1alpha1.PoolCapacity{})
				if kerrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("still there: %v", err)
			})
		}
	})
}
