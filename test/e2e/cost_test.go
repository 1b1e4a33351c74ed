package e2e

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// idleQS is a QueryService the e2e pool allows that runs no executor.
const idleQS = "idle-analytics"

// testCost checks, after the burst, that the Pool's status.cost and the
// provider's counters charge the QueryService that burst and the pool's
// warm slots (minExecutors above the burst, so a placeholder holds a
// node), and nothing to an allowed QueryService that ran nothing.
func testCost(t *testing.T, ctx context.Context, s *devplane.Stack, b burst) {
	c, cfg := s.Client, s.Cluster.Config
	idle := b.queryService(t, idleQS)
	if err := c.Create(ctx, idle); err != nil {
		t.Fatal(err)
	}
	// One warm slot beyond the burst: minExecutors is the burst's
	// executors and one, so one placeholder holds a node.
	mustApply(t, ctx, cfg, strings.Replace(b.manifest(burstReplicas+1, false), "  allowedQueryServices:\n",
		"  allowedQueryServices:\n    - {name: "+idleQS+", namespace: "+b.qsNS+"}\n", 1))
	defer func() {
		mustApply(t, ctx, cfg, b.manifest(1, false))
		if err := c.Delete(ctx, idle); err != nil {
			t.Errorf("cannot delete QueryService %s: %v", idleQS, err)
		}
	}()

	var cost *poolv1.PoolCost
	seen := ""
	// see logs each new state of what the test waits for, so that a
	// timeout shows what was there.
	see := func(format string, args ...any) error {
		if msg := fmt.Sprintf(format, args...); msg != seen {
			seen = msg
			t.Log(msg)
		}
		return errors.New(seen)
	}
	took := eventually(t, waitNodes, "the Pool's status.cost charges the burst and warm slots, not the idle QueryService", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		cost = st.Cost
		if cost == nil {
			pc, _, _ := unstructured.NestedMap(p.Object, "status")
			return false, see("no status.cost; status: %v", pc)
		}
		rates := map[string]string{}
		for _, q := range cost.QueryServices {
			rates[q.QueryService.Name] = q.DollarsPerHour
		}
		ok := positive(rates[b.qs]) && rates[idleQS] == "0" && positive(cost.WarmDollarsPerHour)
		return ok, see("status.cost is %+v", *cost)
	})
	t.Logf("burst -> status.cost: %s/h in all, %s %s/h, %s %s/h, warm %s/h, waste %s/h (%s)", cost.DollarsPerHour,
		b.qs, rateOf(cost, b.qs), idleQS, rateOf(cost, idleQS), cost.WarmDollarsPerHour, cost.WasteDollarsPerHour, took.Round(10*time.Millisecond))

	// The counters move when the provider next counts: at a change of the
	// pool, or a minute after the last count (internal/cost Step).
	eventually(t, waitNodes, "the provider's cost counters charge the burst and warm slots, not the idle QueryService", func(ctx context.Context) (bool, error) {
		m, err := devplane.Scrape(ctx, s.MetricsAddr, "burstpool_pool_cost_dollars_total")
		if err != nil {
			return false, err
		}
		burst := m[fmt.Sprintf(`part="queryservice",pool="%s",pool_namespace="%s",query_service="%s",query_service_namespace="%s"`, b.pool, b.poolNS, b.qs, b.qsNS)]
		warm := m[fmt.Sprintf(`part="warm",pool="%s",pool_namespace="%s",query_service="",query_service_namespace=""`, b.pool, b.poolNS)]
		idle := m[fmt.Sprintf(`part="queryservice",pool="%s",pool_namespace="%s",query_service="%s",query_service_namespace="%s"`, b.pool, b.poolNS, idleQS, b.qsNS)]
		return burst > 0 && warm > 0 && idle == 0, see("burstpool_pool_cost_dollars_total: %s %v, warm %v, %s %v", b.qs, burst, warm, idleQS, idle)
	})

	// The provider exports crossplane-runtime's managed-resource metrics
	// beside its own, as every Crossplane provider does.
	m, err := devplane.Scrape(ctx, s.MetricsAddr, "crossplane_managed_resource_first_time_to_reconcile_seconds_count")
	if err != nil {
		t.Fatal(err)
	}
	var reconciled float64
	for _, v := range m {
		reconciled += v
	}
	if reconciled == 0 {
		t.Errorf("crossplane_managed_resource_first_time_to_reconcile_seconds counts no PoolCapacity: %v", m)
	}
	// And crossplane-runtime's state gauges, which the leader updates every
	// --poll-state-metric-interval (5 s): this pool's PoolCapacity exists,
	// is Ready and Synced.
	gvk := `gvk="capacity.e6data.io/v1alpha1, Kind=PoolCapacity"`
	eventually(t, waitQuick, "the provider exports crossplane_managed_resource_exists, _ready and _synced for PoolCapacities", func(ctx context.Context) (bool, error) {
		for _, series := range []string{"crossplane_managed_resource_exists", "crossplane_managed_resource_ready", "crossplane_managed_resource_synced"} {
			m, err := devplane.Scrape(ctx, s.MetricsAddr, series)
			if err != nil {
				return false, err
			}
			if m[gvk] < 1 {
				return false, fmt.Errorf("%s{%s} is %v (all series: %v)", series, gvk, m[gvk], m)
			}
		}
		return true, nil
	})
}

func positive(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f > 0
}

func rateOf(c *poolv1.PoolCost, qs string) string {
	for _, q := range c.QueryServices {
		if q.QueryService.Name == qs {
			return q.DollarsPerHour
		}
	}
	return ""
}
