package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// Bounds of the provider's faults, from the shipped timings.
const (
	// takeoverBound is how long a standby takes to act after the leader
	// was killed: the Lease's duration and one retry (the provider's
	// defaults, 8 s and 1 s), and a margin for a loaded machine.
	takeoverBound = 15 * time.Second
	// haOpenAfter is the settings' warmup.openAfter while every replica
	// is down: short, so that the fail-safe's bound (openAfter plus its
	// 30 s grace) fits a test.
	haOpenAfter = "20s"
	// burstTo is the executors a fault's burst scales to from
	// burstReplicas: more than the pool's nodes hold, so the burst needs
	// new nodes, which open only once their startup taint goes.
	burstTo = 6
)

// TestProviderFaults bursts while the capacity provider fails, on a plane
// that runs it as the shipped runtime config does.
func TestProviderFaults(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	su := newSuite(t, haPlane)
	if su.has(ownSettings) {
		applyFastComposition(t, ctx, su.Cluster.Config, su.root)
	}
	runScenarios(t, su, haScenarios)
}

// haPlane runs the provider as the shipped runtime config does, two
// replicas electing a leader (each restarted when it exits, as a
// Deployment's are), with the fail-safe of deploy/provider/failsafe.yaml
// beside them.
var haPlane = plane{
	configure: func(_ *testing.T, cfg *devplane.Config) { cfg.ProviderReplicas, cfg.Failsafe = 2, true },
	caps:      []capability{simulatedCloud, restartableRuntimes, ownSettings, highlyAvailable},
}

var haScenarios = []scenario{
	{name: "LeaderKilledMidBurst", needs: []capability{simulatedCloud, highlyAvailable}, exclusive: true, run: scenarioLeaderKilledMidBurst},
	{name: "AllProvidersDown", needs: []capability{simulatedCloud, highlyAvailable, ownSettings}, exclusive: true, run: scenarioAllProvidersDown},
}

// snapshot is what a fault must not lose: the UIDs of the executors
// Running and of the pool's composed objects.
type snapshot struct {
	executors map[types.UID]string
	composed  map[string]types.UID
}

func takeSnapshot(t *testing.T, ctx context.Context, s *devplane.Stack, b burst) snapshot {
	t.Helper()
	sn := snapshot{executors: map[types.UID]string{}, composed: map[string]types.UID{}}
	pl := &corev1.PodList{}
	if err := s.Client.List(ctx, pl, client.InNamespace(b.qsNS), client.MatchingLabels{qsv1.LabelPool: b.pool, qsv1.LabelExecutorType: qsv1.ExecutorTypePool}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pl.Items {
		if p.Status.Phase == corev1.PodRunning {
			sn.executors[p.UID] = p.Name
		}
	}
	for _, o := range composed(b.pool) {
		u, err := s.Get(ctx, gvk(o.api, o.kind), "", o.name)
		if err != nil {
			t.Fatalf("%s %s: %v", o.kind, o.name, err)
		}
		sn.composed[o.kind+"/"+o.name] = u.GetUID()
	}
	return sn
}

// lost counts the executors of before no longer Running and the composed
// objects gone or replaced.
func (before snapshot) lost(t *testing.T, ctx context.Context, s *devplane.Stack, b burst) (executors, objects int) {
	t.Helper()
	after := takeSnapshot(t, ctx, s, b)
	for uid, name := range before.executors {
		if _, ok := after.executors[uid]; !ok {
			t.Errorf("executor %s was Running before the fault and is not after it", name)
			executors++
		}
	}
	for k, uid := range before.composed {
		if after.composed[k] != uid {
			t.Errorf("%s was replaced or removed during the fault", k)
			objects++
		}
	}
	return executors, objects
}

// countsAndCost waits until the claim counts n occupied executors, all
// allocated to the burst's QueryService, and the PoolCapacity's cost has
// been accounted past since with nothing left unaccounted.
func countsAndCost(t *testing.T, s *devplane.Stack, b burst, n int, since time.Time) time.Duration {
	t.Helper()
	return eventually(t, waitStatus, fmt.Sprintf("the claim counts %d executors and the cost is accounted past the fault", n), func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		o, err := atProvider(ctx, s.Client, b.pool)
		if err != nil || o.Cost == nil {
			return false, fmt.Errorf("no cost (%v)", err)
		}
		ok := int(st.OccupiedExecutors) == n && allocation(p, b.qsNS, b.qs) == int64(n) &&
			o.Cost.AccountedUntil.After(since) && o.Cost.UnaccountedSeconds == 0
		return ok, fmt.Errorf("occupied %d, allocation %d, cost accounted until %v (fault ended %v), unaccounted %d s",
			st.OccupiedExecutors, allocation(p, b.qsNS, b.qs), o.Cost.AccountedUntil, since, o.Cost.UnaccountedSeconds)
	})
}

// scenarioLeaderKilledMidBurst: a burst onto new nodes starts, and the
// provider replica that leads is killed at once (SIGKILL: it gives no
// Lease up, as when its node is lost). The standby takes the Lease within
// takeoverBound and opens the new nodes; every executor runs, nothing is
// lost, and counts and cost are right afterwards.
func scenarioLeaderKilledMidBurst(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	b := newBurst(t, ctx, e)
	b.start(t, ctx, s, burstReplicas)
	before := takeSnapshot(t, ctx, s, b)
	leader, err := s.LeaderReplica(ctx, takeoverBound)
	if err != nil {
		t.Fatal(err)
	}
	burst := time.Now()
	b.scale(t, ctx, s, burstTo)
	if err := s.KillReplica(leader); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	next, err := s.LeaderReplica(ctx, takeoverBound)
	if err != nil {
		t.Fatalf("no standby took over within %s of the leader's kill: %v", takeoverBound, err)
	}
	takeover := time.Since(killed)
	if next == leader {
		t.Logf("the killed replica %d was restarted and took the Lease back", leader.Index)
	}
	waitExecutors(t, waitNodes, "the burst's executors Running after the leader was killed", s.Client, b.qsNS, b.pool, burstTo)
	running := time.Since(burst)
	execs, objs := before.lost(t, ctx, s, b)
	counted := countsAndCost(t, s, b, burstTo, killed)
	t.Logf("fault LeaderKilledMidBurst: takeover %s, burst to %d Running %s, executors lost %d, composed objects lost %d, counted and costed %s later",
		takeover.Round(100*time.Millisecond), burstTo, running.Round(100*time.Millisecond), execs, objs, counted.Round(100*time.Millisecond))
}

// scenarioAllProvidersDown: every provider replica is down, for longer
// than openAfter, while a burst needs new nodes. The fail-safe opens them
// once they have waited openAfter and its grace, so the executors run
// without any provider; started again, the provider counts them, and the
// cost of the time it was down is accounted, nothing left unaccounted.
func scenarioAllProvidersDown(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	applySettings(t, ctx, s.Cluster.Config, e.root, func(data map[string]any) {
		w, _ := data["warmup"].(map[string]any)
		if w == nil {
			w = map[string]any{}
		}
		w["openAfter"] = haOpenAfter
		data["warmup"] = w
	})
	t.Cleanup(func() { applyFastComposition(t, context.Background(), s.Cluster.Config, e.root) })
	b := newBurst(t, ctx, e)
	b.start(t, ctx, s, burstReplicas)
	eventually(t, waitStatus, "the pool's PoolCapacity opens nodes after "+haOpenAfter, func(ctx context.Context) (bool, error) {
		pc, err := s.Get(ctx, gvk(capacityAPI, "PoolCapacity"), "", b.pool+"-capacity")
		if err != nil {
			return false, err
		}
		got, _, _ := unstructured.NestedString(pc.Object, "spec", "forProvider", "startup", "openAfter")
		return got == haOpenAfter, fmt.Errorf("openAfter %q", got)
	})
	before := takeSnapshot(t, ctx, s, b)
	opened0, err := s.FailsafeCount(ctx, `burstpool_failsafe_nodes_opened_total{pool="`+b.pool+`",pool_namespace="`+b.poolNS+`"}`)
	if err != nil {
		t.Fatal(err)
	}

	if err := s.HoldReplicas(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	held := true
	t.Cleanup(func() {
		if held {
			_ = s.ReleaseReplicas()
		}
	})
	burst := time.Now()
	b.scale(t, ctx, s, burstTo)
	waitExecutors(t, waitNodes, "the burst's executors Running with every provider replica down", s.Client, b.qsNS, b.pool, burstTo)
	running := time.Since(burst)
	opened, err := s.FailsafeCount(ctx, `burstpool_failsafe_nodes_opened_total{pool="`+b.pool+`",pool_namespace="`+b.poolNS+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	if opened <= opened0 {
		t.Errorf("burstpool_failsafe_nodes_opened_total for the pool stayed %v: the burst ran without the fail-safe opening a node", opened)
	}
	if err := s.ReleaseReplicas(); err != nil {
		t.Fatal(err)
	}
	held = false
	up := time.Now()
	execs, objs := before.lost(t, ctx, s, b)
	counted := countsAndCost(t, s, b, burstTo, up)
	t.Logf("fault AllProvidersDown: down %s (openAfter %s), burst to %d Running %s, nodes opened by the fail-safe %v, executors lost %d, composed objects lost %d, counted and costed %s after the provider came back",
		up.Sub(down).Round(100*time.Millisecond), haOpenAfter, burstTo, running.Round(100*time.Millisecond), opened-opened0, execs, objs, counted.Round(100*time.Millisecond))
}
