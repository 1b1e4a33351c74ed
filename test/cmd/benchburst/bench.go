package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	poolv1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/burst"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

const (
	executorImage = "us-docker.pkg.dev/e6data-analytics/e6-engine/executor:3.0.218"
	instanceType  = "r7gd.4xlarge"
	executorCPU   = "8"
	executorMem   = "60Gi"
	qsNS          = "bench"
	// poolNS is the QueryServices' own: a pool attaches QueryServices of
	// its namespace unless the cluster's settings list others
	// (docs/tenants.md).
	poolNS = qsNS
	// coldLabel selects the nodes of the cold NodePool.
	coldLabel = "bench.burstpool.io/nodepool"
)

// scenario is one burst: onto a pool with warm slots, or (pool false) onto
// a Karpenter NodePool of the same instance type without burstpool.
type scenario struct {
	name      string
	pool      bool
	warm      int
	executors int
}

type bench struct {
	s  *devplane.Stack
	cs kubernetes.Interface
	// buffer: Karpenter processes CapacityBuffers, so the pools' warm
	// slots are one and no placeholder runs.
	buffer bool
}

func newBench(ctx context.Context, s *devplane.Stack, root string, cloud burst.Cloud, buffer bool) (*bench, error) {
	cs, err := kubernetes.NewForConfig(s.Cluster.Config)
	if err != nil {
		return nil, err
	}
	if buffer {
		// The static executor gate policies, as docs/install.md says for
		// such pools.
		raw, err := os.ReadFile(filepath.Join(root, "deploy", "provider", "executor-gate.yaml"))
		if err != nil {
			return nil, err
		}
		if err := localcp.Apply(ctx, s.Cluster.Config, raw); err != nil {
			return nil, err
		}
	}
	startKubelet(ctx, cs, cloud)
	for _, ns := range slices.Compact([]string{qsNS, poolNS}) {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	return &bench{s: s, cs: cs, buffer: buffer}, nil
}

// run prepares sc (the cold NodePool, or a QueryService and its pool with
// its warm slots Running and its images warm), bursts sc.executors
// executors and measures them.
func (b *bench) run(ctx context.Context, name string, sc scenario) (burst.Result, error) {
	sched, err := b.prepare(ctx, name, sc)
	if err != nil {
		return burst.Result{}, err
	}
	rec := recordExecutors(ctx, b.cs, name)
	began := time.Now()
	if err := b.s.Client.Create(ctx, devplane.ExecutorDeployment(qsNS, name, executorImage, int32(sc.executors), executorCPU, executorMem, sched)); err != nil { //nolint:gosec // a handful of executors
		return burst.Result{}, err
	}
	var res burst.Result
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Minute, false, func(context.Context) (bool, error) {
		var done bool
		res, done = rec.result(sc.executors, began)
		return done, nil
	})
	if err != nil {
		return burst.Result{}, fmt.Errorf("waiting for %d executors Running: %w", sc.executors, err)
	}
	res.Scenario, res.Executors, res.Warm = sc.name, sc.executors, sc.warm
	if b.buffer {
		say("  %d of %d executors admitted at the pool's executor gate (%s)", rec.gatedCount(), sc.executors, qsv1.GateExecutor)
	}
	return res, nil
}

func (b *bench) prepare(ctx context.Context, name string, sc scenario) (poolv1.ExecutorScheduling, error) {
	cfg := b.s.Cluster.Config
	if !sc.pool {
		say("  a Karpenter NodePool of %s without burstpool", instanceType)
		return poolv1.ExecutorScheduling{NodeSelector: map[string]string{coldLabel: name}},
			localcp.Apply(ctx, cfg, []byte(fmt.Sprintf(coldNodePool, name, coldLabel, instanceType)))
	}
	say("  QueryService %s/%s and Pool %s/%s (minExecutors %d, %s)", qsNS, name, poolNS, name, sc.warm, instanceType)
	if err := localcp.Apply(ctx, cfg, []byte(fmt.Sprintf(queryService, name, qsNS, name, executorImage, executorCPU, executorMem, instanceType, name, poolNS))); err != nil {
		return poolv1.ExecutorScheduling{}, err
	}
	if err := localcp.Apply(ctx, cfg, []byte(fmt.Sprintf(pool, name, poolNS, sc.warm, 3*sc.executors, instanceType, name, qsNS))); err != nil {
		return poolv1.ExecutorScheduling{}, err
	}
	start := time.Now()
	var sched poolv1.ExecutorScheduling
	err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if sched, err = devplane.PoolExecutorScheduling(ctx, b.s.Client, poolNS, name); err != nil {
			return false, nil //nolint:nilerr // not published yet
		}
		if sc.warm == 0 {
			return true, nil
		}
		return b.warm(ctx, name, sc.warm)
	})
	if err != nil {
		return sched, fmt.Errorf("waiting for pool %s to publish its executor scheduling and keep %d slots warm: %w", name, sc.warm, err)
	}
	say("  the pool is ready for the burst after %s", time.Since(start).Round(time.Second))
	return sched, nil
}

// warm tells whether pool name holds n warm slots (n placeholders Running,
// or, with a buffer, n open pool nodes and the buffer at n) and all its
// cached images are Ready.
func (b *bench) warm(ctx context.Context, name string, n int) (bool, error) {
	running, err := b.slots(ctx, name, n)
	if err != nil {
		return false, nil //nolint:nilerr // poll again
	}
	p := &unstructured.Unstructured{}
	p.SetAPIVersion("e6data.io/v1alpha1")
	p.SetKind("Pool")
	if err := b.s.Client.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: name}, p); err != nil {
		return false, nil //nolint:nilerr // poll again
	}
	imgs, _, _ := unstructured.NestedSlice(p.Object, "status", "cachedImages")
	ready := len(imgs) > 0
	for _, i := range imgs {
		if m, _ := i.(map[string]any); m["warmupStatus"] != string(poolv1.WarmupReady) {
			ready = false
		}
	}
	return running >= n && ready, nil
}

// slots counts pool name's warm slots: its placeholders Running, or, with
// a buffer, its Ready pool nodes open to executors (no startup taint)
// while the buffer asks for n.
func (b *bench) slots(ctx context.Context, name string, n int) (int, error) {
	if !b.buffer {
		pods, err := b.cs.CoreV1().Pods(poolNS).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(map[string]string{qsv1.LabelPool: name, qsv1.LabelComponent: qsv1.ComponentPlaceholder}).String()})
		if err != nil {
			return 0, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running, nil
	}
	cb := &unstructured.Unstructured{}
	cb.SetAPIVersion("autoscaling.x-k8s.io/v1beta1")
	cb.SetKind("CapacityBuffer")
	if err := b.s.Client.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: name + "-warm-slots"}, cb); err != nil {
		return 0, err
	}
	if r, _, _ := unstructured.NestedInt64(cb.Object, "status", "replicas"); r != int64(n) {
		return 0, nil
	}
	nodes, err := b.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(map[string]string{qsv1.LabelPool: name}).String()})
	if err != nil {
		return 0, err
	}
	open := 0
	for _, nd := range nodes.Items {
		ready := slices.ContainsFunc(nd.Status.Conditions, func(c corev1.NodeCondition) bool {
			return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		})
		warming := slices.ContainsFunc(nd.Spec.Taints, func(t corev1.Taint) bool { return t.Key == qsv1.TaintWarming })
		if ready && !warming && nd.DeletionTimestamp == nil {
			open++
		}
	}
	return open, nil
}

// recorder notes when each executor pod of a QueryService is first seen
// and first seen Running.
type recorder struct {
	mu      sync.Mutex
	created map[string]time.Time
	running map[string]time.Time
	// gated counts the executors first seen at the pool's executor gate.
	gated int
}

func recordExecutors(ctx context.Context, cs kubernetes.Interface, qs string) *recorder {
	r := &recorder{created: map[string]time.Time{}, running: map[string]time.Time{}}
	sel := labels.SelectorFromSet(map[string]string{qsv1.LabelQueryService: qs, qsv1.LabelComponent: qsv1.ComponentExecutor}).String()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(qsNS),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel }))
	see := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, ok := r.created[p.Name]; !ok {
			r.created[p.Name] = now
			if slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == qsv1.GateExecutor }) {
				r.gated++
			}
		}
		if _, ok := r.running[p.Name]; !ok && p.Status.Phase == corev1.PodRunning {
			r.running[p.Name] = now
		}
	}
	_, _ = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: see, UpdateFunc: func(_, obj any) { see(obj) },
	})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return r
}

// result is the measurement once n executors run.
func (r *recorder) gatedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gated
}

func (r *recorder) result(n int, began time.Time) (burst.Result, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.running) < n {
		return burst.Result{}, false
	}
	var res burst.Result
	for name, at := range r.running {
		res.ToRunning = append(res.ToRunning, at.Sub(r.created[name]))
		res.AllRunning = max(res.AllRunning, at.Sub(began))
	}
	return res, true
}
