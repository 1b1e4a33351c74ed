package e2e

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	capv1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// scenarioCostAcrossRestart restarts the capacity provider while a pool of
// one node runs an executor, as the suite runs it (a process on the local
// control plane, stopped and started again), and checks what
// docs/capacity.md promises survives: the node time from before the
// restart to after it is counted once, to the node-second (the node was
// there throughout, so its node-seconds grow by exactly the seconds the
// watermark moved, with nothing unaccounted), the counters go on from the
// status's totals rather than from zero, and an executor counted before
// the restart is not counted again. It also checks the start
// measurements end to end: the first executor waited for a node launched
// for it (NewNode), the second, after the restart, started on that node
// (ExistingNode), in the PoolCapacity, the metrics and the Pool's
// status.cost.
func scenarioCostAcrossRestart(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	const ns, pool, qs = "cost-restart", "cost-restart", "cost-restart-qs"
	c, cfg := s.Client, s.Cluster.Config
	if err := ensureNamespace(ctx, c, ns); err != nil {
		t.Fatal(err)
	}
	mustApply(t, ctx, cfg, poolManifest(ns, pool, `
  maxExecutors: 2
  imageConfig: {autoCollectImages: false}
  instanceConfig: {instanceType: m7i.xlarge}
  queryServiceSelector:
    matchLabels: {e2e.burstpool.io/pool: `+pool+`}
`))
	mustApply(t, ctx, cfg, fmt.Sprintf(`apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata: {name: %s, namespace: %s, labels: {e2e.burstpool.io/pool: %s}}
spec:
  executor:
    image: registry.example.com/e6data/executor:%s
    resources: {cpu: "1", memory: 2Gi}
    poolRef: {name: %s, namespace: %s}
`, qs, ns, pool, qs, pool, ns))
	defer func() {
		if err := deleteExecutors(ctx, c, ns, qs); err != nil {
			t.Errorf("cannot delete the executors: %v", err)
		}
		if err := deleteClaim(ctx, c, ns, pool); err != nil {
			t.Errorf("cannot delete pool %s/%s: %v", ns, pool, err)
		}
	}()
	sched := executorScheduling(t, c, ns, pool)
	if err := c.Create(ctx, devplane.ExecutorDeployment(ns, qs, "registry.example.com/e6data/executor:"+qs, 1, "1", "2Gi", sched)); err != nil {
		t.Fatal(err)
	}
	waitExecutors(t, waitNodes, "one executor Running", c, ns, pool, 1)

	// Before: the executor's start is counted (StartSettle after it ran)
	// and the cost counts the pool's one node.
	var before capv1.PoolCapacityObservation
	first := "NewNode"
	eventually(t, waitStatus, "the provider counts the first executor's start, on a new node", func(ctx context.Context) (bool, error) {
		var err error
		before, err = atProvider(ctx, c, pool)
		if starts(before) == "ExistingNode=1" && replacedByTaintEviction(ctx, c, ns) {
			// kube-controller-manager's taint eviction evicted the first
			// executor as it was bound, its cache still holding the node's
			// karpenter.sh/unregistered taint (kubernetes/kubernetes#139992);
			// its replacement started on the node that was there by then.
			first = "ExistingNode"
		}
		return err == nil && starts(before) == first+"=1" && before.Cost != nil && before.Cost.NodeSeconds != "0",
			fmt.Errorf("executorStarts %s, cost %v (%v)", starts(before), before.Cost != nil, err)
	})
	if first != "NewNode" {
		t.Logf("the first executor was evicted by the taint eviction controller as it was bound (kubernetes/kubernetes#139992) and replaced on the node launched for it: its start counts on ExistingNode")
	}
	node := onlyNode(t, ctx, c, pool)
	countersBefore := nodeSecondsCounted(t, ctx, s, pool, ns)

	restarted := time.Now()
	if err := s.RestartProvider(); err != nil {
		t.Fatal(err)
	}
	// A second executor changes the rates, so the restarted provider
	// writes at once; it fits beside the first on the same node.
	scaleExecutors(t, ctx, c, ns, qs, 2)
	waitExecutors(t, waitNodes, "two executors Running", c, ns, pool, 2)
	var after capv1.PoolCapacityObservation
	took := eventually(t, waitStatus, "the restarted provider counts past the restart and the second executor's start, on the existing node", func(ctx context.Context) (bool, error) {
		var err error
		after, err = atProvider(ctx, c, pool)
		if err != nil || after.Cost == nil {
			return false, fmt.Errorf("no cost (%v)", err)
		}
		want := "ExistingNode=1 NewNode=1"
		if first == "ExistingNode" {
			want = "ExistingNode=2"
		}
		return starts(after) == want && after.Cost.AccountedUntil.After(restarted),
			fmt.Errorf("executorStarts %s, accountedUntil %v (restarted %v)", starts(after), after.Cost.AccountedUntil, restarted)
	})
	if n := onlyNode(t, ctx, c, pool); n != node {
		t.Fatalf("pool node %s replaced by %s: the node-seconds check needs one node throughout", node, n)
	}

	// Counted once: the one node's seconds grew by the seconds the
	// watermark moved, no more (counted twice) and no less (lost).
	moved := after.Cost.AccountedUntil.Sub(before.Cost.AccountedUntil.Time).Seconds()
	grew := decimalOf(t, after.Cost.NodeSeconds) - decimalOf(t, before.Cost.NodeSeconds)
	if math.Abs(grew-moved) > 1e-5 || after.Cost.UnaccountedSeconds != 0 || after.Cost.Since != before.Cost.Since {
		t.Errorf("across the restart, node-seconds grew by %v over %v s of one node (unaccounted %d s, since %v then %v): want equal, none unaccounted, same since",
			grew, moved, after.Cost.UnaccountedSeconds, before.Cost.Since, after.Cost.Since)
	}
	t.Logf("provider restart -> node-seconds %s then %s (+%v over %v s of one node), starts %s: %s",
		before.Cost.NodeSeconds, after.Cost.NodeSeconds, grew, moved, starts(after), took.Round(10*time.Millisecond))

	// The counters are the status's totals: after the restart they
	// resume from them, not from zero.
	eventually(t, waitStatus, "the restarted provider's counters equal the status's totals", func(ctx context.Context) (bool, error) {
		o, err := atProvider(ctx, c, pool)
		if err != nil || o.Cost == nil {
			return false, fmt.Errorf("no cost (%v)", err)
		}
		got := nodeSecondsCounted(t, ctx, s, pool, ns)
		want := decimalOf(t, o.Cost.NodeSeconds)
		return math.Abs(got-want) < 1e-5 && got >= countersBefore,
			fmt.Errorf("burstpool_pool_node_seconds_total %v (before the restart %v), status %v", got, countersBefore, want)
	})
	eventually(t, waitReconcile, "burstpool_executor_start_seconds counts one start on each placement", func(ctx context.Context) (bool, error) {
		m, err := devplane.Scrape(ctx, s.MetricsAddr, "burstpool_executor_start_seconds_count")
		if err != nil {
			return false, err
		}
		l := func(pl string) string {
			return fmt.Sprintf(`placement="%s",pool="%s",pool_namespace="%s"`, pl, pool, ns)
		}
		if first == "ExistingNode" {
			return m[l("existing_node")] == 2 && m[l("new_node")] == 0, fmt.Errorf("counts %v", m)
		}
		return m[l("existing_node")] == 1 && m[l("new_node")] == 1, fmt.Errorf("counts %v", m)
	})
	var cost *poolv1.PoolCost
	eventually(t, waitStatus, "the Pool's status.cost shows the starts beside the warm slots' rate", func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, ns, pool)
		if err != nil || st.Cost == nil {
			return false, fmt.Errorf("no status.cost (%v)", err)
		}
		cost = st.Cost
		placements := 2
		if first == "ExistingNode" {
			placements = 1
		}
		return len(cost.ExecutorStarts) == placements, fmt.Errorf("status.cost.executorStarts %+v", cost.ExecutorStarts)
	})
	t.Logf("status.cost: warm %s/h, executor starts %+v", cost.WarmDollarsPerHour, cost.ExecutorStarts)
}

// atProvider reads the status.atProvider of pool's PoolCapacity.
func atProvider(ctx context.Context, c client.Client, pool string) (capv1.PoolCapacityObservation, error) {
	return observation(ctx, c, pool+"-capacity")
}

// observation reads the status.atProvider of the PoolCapacity name.
func observation(ctx context.Context, c client.Client, name string) (capv1.PoolCapacityObservation, error) {
	return devplane.CapacityObservation(ctx, c, name)
}

// starts says how many executor starts o counts per placement.
func starts(o capv1.PoolCapacityObservation) string {
	if o.ExecutorStarts == nil {
		return "not counting"
	}
	out := ""
	for _, p := range o.ExecutorStarts.ByPlacement {
		if out != "" {
			out += " "
		}
		out += fmt.Sprintf("%s=%d", p.Placement, p.Count)
	}
	return out
}

// onlyNode returns the name of pool's one node, failing t when it has
// another number of them.
func onlyNode(t *testing.T, ctx context.Context, c client.Client, pool string) string {
	t.Helper()
	nodes := poolNodes(t, ctx, c, pool)
	if len(nodes) != 1 {
		t.Fatalf("%d nodes in pool %s, want 1", len(nodes), pool)
	}
	return nodes[0].Name
}

// nodeSecondsCounted sums the pool's burstpool_pool_node_seconds_total
// over its parts.
func nodeSecondsCounted(t *testing.T, ctx context.Context, s *devplane.Stack, pool, ns string) float64 {
	t.Helper()
	m, err := devplane.Scrape(ctx, s.MetricsAddr, "burstpool_pool_node_seconds_total")
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for labels, v := range m {
		// The text format sorts labels: part, pool, pool_namespace, ...
		if strings.Contains(labels, fmt.Sprintf(`,pool="%s",pool_namespace="%s"`, pool, ns)) {
			sum += v
		}
	}
	return sum
}

func decimalOf(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("status decimal %q: %v", s, err)
	}
	return f
}

// replacedByTaintEviction reports whether the taint eviction controller
// evicted a pool executor in ns (a TaintManagerEviction event).
func replacedByTaintEviction(ctx context.Context, c client.Client, ns string) bool {
	evicted, err := hasEvents(ctx, c, ns, client.MatchingFields{"reason": "TaintManagerEviction", "involvedObject.kind": "Pod"})
	return err == nil && evicted
}
