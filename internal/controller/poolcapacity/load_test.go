package poolcapacity_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/watch"
	"github.com/burstpool/burstpool/test/harness/apiserver"
)

// loadParam reads a positive integer from the environment, or def.
func loadParam(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func rssKiB(t *testing.T) int {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("cannot read the process's memory use: %v", err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

// parallel runs fn for 0..n-1 on workers goroutines.
func parallel(t *testing.T, n, workers int, fn func(i int) error) {
	t.Helper()
	apiserver.Parallel(t, n, workers, fn)
}

// TestLoad puts BURSTPOOL_LOADTEST_PODS executor pods (default 10,000) on
// BURSTPOOL_LOADTEST_NODES nodes (1,000) in BURSTPOOL_LOADTEST_POOLS pools
// (40) on the real API server, runs the provider, and reports how long every
// PoolCapacity takes to converge, after start and after churn, and the
// memory the provider adds. It runs only with BURSTPOOL_LOADTEST=1.
func TestLoad(t *testing.T) {
	switch v := os.Getenv("BURSTPOOL_LOADTEST"); v {
	case "":
		t.Skip("set BURSTPOOL_LOADTEST=1 to run the load test")
	case "1":
	default:
		t.Fatalf("BURSTPOOL_LOADTEST=%q: set it to 1 to run the load test, or unset it", v)
	}
	pods := loadParam(t, "BURSTPOOL_LOADTEST_PODS", 10000)
	nodes := loadParam(t, "BURSTPOOL_LOADTEST_NODES", 1000)
	pools := loadParam(t, "BURSTPOOL_LOADTEST_POOLS", 40)
	if nodes < pools || pods < pools {
		t.Fatalf("BURSTPOOL_LOADTEST_NODES (%d) and _PODS (%d) must be at least _POOLS (%d)", nodes, pods, pools)
	}
	ctx := context.Background()
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = 2000, 4000
	c, err := client.New(fast, client.Options{Scheme: scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, c, "load")
	pool := func(i int) string { return fmt.Sprintf("load-%03d", i%pools) }

	began := time.Now()
	parallel(t, nodes, 16, func(i int) error {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("load-node-%05d", i), Labels: map[string]string{qsv1alpha1.LabelPool: pool(i)}}}
		if err := c.Create(ctx, n); err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		return c.Status().Update(ctx, n)
	})
	parallel(t, pods, 16, func(i int) error {
		l := executorLabels(fmt.Sprintf("qs-%d", i%5))
		l[qsv1alpha1.LabelPool] = pool(i)
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: fmt.Sprintf("exec-%06d", i), Labels: l},
			Spec: corev1.PodSpec{
				NodeName:   fmt.Sprintf("load-node-%05d", i%nodes),
				Containers: []corev1.Container{{Name: "executor", Image: "e6/exec:1"}},
			},
		}
		if err := c.Create(ctx, p); err != nil {
			return err
		}
		p.Status = running(time.Now())
		return c.Status().Update(ctx, p)
	})
	t.Logf("created %d nodes and %d running pods in %d pools in %s", nodes, pods, pools, time.Since(began).Round(time.Millisecond))

	if err := c.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "load"},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int32{}
	for i := 0; i < pods; i++ {
		want[pool(i)]++
	}
	for i := 0; i < pools; i++ {
		pc := poolCapacity(pool(i), "load")
		pc.Spec.ForProvider.Pool.Name = pool(i)
		pc.Spec.ForProvider.NodeSelector = map[string]string{qsv1alpha1.LabelPool: pool(i)}
		pc.Spec.ForProvider.ExecutorSelector = map[string]string{qsv1alpha1.LabelPool: pool(i)}
		pc.Spec.ForProvider.WarmupSelector = nil
		pc.Spec.ForProvider.ExecutorsPerNode = 1000
		pc.Spec.ForProvider.MaxExecutors = 1000000
		pc.Spec.ForProvider.QueryServices = nil
		for q := 0; q < 5; q++ {
			pc.Spec.ForProvider.QueryServices = append(pc.Spec.ForProvider.QueryServices, v1alpha1.AttachedQueryService{Name: fmt.Sprintf("qs-%d", q), Namespace: "load"})
		}
		if err := c.Create(ctx, pc); err != nil {
			t.Fatal(err)
		}
	}

	allConverged := func(what string) time.Duration {
		start := time.Now()
		deadline := start.Add(5 * time.Minute)
		for {
			var l v1alpha1.PoolCapacityList
			if err := c.List(ctx, &l); err != nil {
				t.Fatal(err)
			}
			ok := 0
			for _, pc := range l.Items {
				if w, in := want[pc.Name]; in && pc.Status.AtProvider.OccupiedExecutors == w {
					ok++
				}
			}
			if ok == pools {
				return time.Since(start)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: only %d of %d PoolCapacities converged within 5m", what, ok, pools)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	rss0, heap0 := rssKiB(t), heapMiB()
	p := startProviderAs(t, fast, watch.Options{Watch: true, PollInterval: time.Minute, BatchWindow: 100 * time.Millisecond})
	defer p.stop(t)
	d := allConverged("start")
	rss1, heap1 := rssKiB(t), heapMiB()
	t.Logf("all %d PoolCapacities converged %s after the provider started", pools, d.Round(time.Millisecond))
	t.Logf("memory: RSS %d -> %d MiB (+%d MiB), Go heap in use %.1f -> %.1f MiB (+%.1f MiB) for %d pods and %d nodes",
		rss0/1024, rss1/1024, (rss1-rss0)/1024, heap0, heap1, heap1-heap0, pods, nodes)

	churn := pods / 10
	began = time.Now()
	parallel(t, churn, 16, func(i int) error {
		return client.IgnoreNotFound(c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: fmt.Sprintf("exec-%06d", i)}}, client.GracePeriodSeconds(0)))
	})
	for i := 0; i < churn; i++ {
		want[pool(i)]--
	}
	d = allConverged("churn")
	t.Logf("deleted %d pods in %s; all PoolCapacities converged %s after the last delete", churn, time.Since(began).Round(time.Millisecond)-d.Round(time.Millisecond), d.Round(time.Millisecond))
}
