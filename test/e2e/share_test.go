package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/gomod"
)

const (
	sharePool  = "share-pool"
	shareMax   = 4
	shareEach  = 2
	shareFirst = "share-a"
	shareNext  = "share-b"
	// shareBound is the longest the first QueryService may take to come
	// down to its share once the second bursts: the provider sees the
	// waiting executors on its next observation (a watch event) and evicts
	// at once; the evicted executors then terminate within their grace
	// period (30s by default), and the scheduler places the waiters on the
	// freed nodes.
	shareBound = 90 * time.Second
)

// runningOf lists the Running, not terminating pool executors of
// QueryService qs on the share pool.
func runningOf(ctx context.Context, c client.Client, qs string) ([]string, error) {
	return runningPods(ctx, c, analyticsNS, map[string]string{qsv1.LabelPool: sharePool, qsv1.LabelQueryService: qs}, "")
}

// testFairShare: a pool of four executors with a share of two for each of
// two QueryServices, enforced. The first fills the pool; when the second
// bursts, the first is brought down to its share (never below) within
// shareBound, the second reaches its share, and no other pool's executors
// move.
func testFairShare(t *testing.T, ctx context.Context, s *devplane.Stack) {
	cfg := s.Cluster.Config
	// Enforced shares evict pods: the opt-in eviction role of
	// deploy/provider, applied as docs/install.md says for such pools.
	mustApplyFile(t, ctx, cfg, gomod.RootForTest(t), "deploy", "provider", "rbac-evictions.yaml")
	// And the executor gate, with which the provider holds back share-a's
	// replacements while share-b waits below its share (docs/tenants.md).
	mustApplyFile(t, ctx, cfg, gomod.RootForTest(t), "deploy", "provider", "executor-gate.yaml")
	c := s.Client
	mustApply(t, ctx, cfg, qsManifest(shareFirst, sharePool, "2", "4Gi"))
	mustApply(t, ctx, cfg, qsManifest(shareNext, sharePool, "2", "4Gi"))
	mustApply(t, ctx, cfg, poolManifest(poolNS, sharePool, fmt.Sprintf(`
  maxExecutors: %d
  queryServiceLimits: {maxPoolExecutors: %d, enforce: true}
  queryServiceSelector:
    matchLabels: {e2e.burstpool.io/pool: %s}
`, shareMax, shareEach, sharePool)))
	for _, qs := range []string{shareFirst, shareNext} {
		waitAttached(t, s, poolNS, sharePool, analyticsNS, qs)
	}
	es := executorScheduling(t, c, poolNS, sharePool)

	if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, shareFirst, "registry.example.com/e6data/executor:share", shareMax, "2", "4Gi", es)); err != nil {
		t.Fatal(err)
	}
	took := eventually(t, waitNodes, "share-a fills the pool", func(ctx context.Context) (bool, error) {
		r, err := runningOf(ctx, c, shareFirst)
		return len(r) == shareMax, fmt.Errorf("%d of %d Running (%v)", len(r), shareMax, err)
	})
	t.Logf("share-a fills the pool's %d slots: %s", shareMax, took.Round(100*time.Millisecond))
	_, others := placement(t, ctx, c, poolNS, "burst-pool")

	admitted := recordAdmittedGates(t, ctx, cfg, analyticsNS, map[string]string{qsv1.LabelPool: sharePool})
	if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, shareNext, "registry.example.com/e6data/executor:share", shareEach, "2", "4Gi", es)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	lowest := shareMax
	took = eventually(t, shareBound, "share-a down to its share, share-b at its share", func(ctx context.Context) (bool, error) {
		a, err := runningOf(ctx, c, shareFirst)
		if err != nil {
			return false, err
		}
		b, err := runningOf(ctx, c, shareNext)
		if err != nil {
			return false, err
		}
		lowest = min(lowest, len(a))
		return len(a) == shareEach && len(b) == shareEach, fmt.Errorf("share-a %d Running, share-b %d Running", len(a), len(b))
	})
	t.Logf("fair share: share-a %d -> %d and share-b 0 -> %d Running in %s (bound %s)", shareMax, shareEach, shareEach, took.Round(100*time.Millisecond), shareBound)
	if lowest < shareEach {
		t.Errorf("share-a went down to %d Running executors, below its share of %d", lowest, shareEach)
	}

	// Settled: nobody is evicted any more (share-a's replacements wait,
	// but share-a is at its share), and nothing else moved.
	a0, _ := runningOf(ctx, c, shareFirst)
	time.Sleep(quietWindow)
	a1, _ := runningOf(ctx, c, shareFirst)
	b1, _ := runningOf(ctx, c, shareNext)
	if strings.Join(a0, ",") != strings.Join(a1, ",") || len(b1) != shareEach {
		t.Errorf("not settled: share-a %v then %v, share-b %v", a0, a1, b1)
	}
	// Every executor created since share-b burst (share-b's, and
	// share-a's replacements of those evicted) was admitted with the
	// executor gate.
	replacements := 0
	for pod, gates := range admitted() {
		if !slices.Contains(gates, qsv1.GateExecutor) {
			t.Errorf("executor %s was admitted with scheduling gates %v, want the pool's executor gate %s", pod, gates, qsv1.GateExecutor)
		}
		if strings.HasPrefix(pod, shareFirst) {
			replacements++
		}
	}
	t.Logf("share-pool: %d executors admitted since share-b burst, %d of them share-a's replacements", len(admitted()), replacements)
	_, after := placement(t, ctx, c, poolNS, "burst-pool")
	if moved := executorsMoved(others, after); len(moved) > 0 {
		t.Errorf("burst-pool's executors moved while share-pool enforced its shares: %v", moved)
	}
	evicted := 0
	for _, e := range capacityEvents(t, ctx, c, sharePool) {
		if e.Reason == "EvictedOverShareExecutor" {
			evicted += int(max(e.Count, 1))
			if !strings.Contains(e.Message, analyticsNS+"/"+shareFirst) {
				t.Errorf("evicted a pod not of share-a: %s", e.Message)
			}
		}
	}
	// Events are best effort: under load the provider's event recorder
	// may still hold one, or drop it. The provider's counter of the
	// evictions it made is what it did.
	counted, err := evictionsCounted(ctx, s, sharePool, "OverShareExecutor")
	if err != nil {
		t.Errorf("reading the provider's eviction counter: %v", err)
	}
	t.Logf("share-pool evicted %d of share-a's executors by its events, %v by burstpool_pool_evictions_total (%s since share-b burst)", evicted, counted, time.Since(start).Round(100*time.Millisecond))
	if evicted < shareMax-shareEach && counted < float64(shareMax-shareEach) {
		t.Errorf("share-pool recorded %d evictions in events and %v in burstpool_pool_evictions_total, want at least %d", evicted, counted, shareMax-shareEach)
	}
	p, err := claim(ctx, s, sharePool)
	if err != nil {
		t.Fatal(err)
	}
	qss, _, _ := unstructured.NestedSlice(p.Object, "status", "attachedQueryServices")
	for _, q := range qss {
		m := q.(map[string]any)
		if n, _ := m["maxPoolExecutors"].(int64); n != shareEach {
			t.Errorf("status.attachedQueryServices reports %v with share %v, want %d", qsName(m), m["maxPoolExecutors"], shareEach)
		}
	}
	for _, qs := range []string{shareFirst, shareNext} {
		if err := deleteExecutors(ctx, c, analyticsNS, qs); err != nil {
			t.Error(err)
		}
	}
}

// evictionsCounted is the provider's burstpool_pool_evictions_total for
// the claim pool and reason.
func evictionsCounted(ctx context.Context, s *devplane.Stack, pool, reason string) (float64, error) {
	m, err := devplane.Scrape(ctx, s.MetricsAddr, "burstpool_pool_evictions_total")
	if err != nil {
		return 0, err
	}
	var n float64
	for labels, v := range m {
		if strings.Contains(labels, `pool="`+pool+`"`) && strings.Contains(labels, `reason="`+reason+`"`) {
			n += v
		}
	}
	return n, nil
}
