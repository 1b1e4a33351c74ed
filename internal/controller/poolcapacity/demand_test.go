package poolcapacity_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/controller/poolcapacity"
	"github.com/burstpool/burstpool/internal/warmpolicy"
	"github.com/burstpool/burstpool/internal/watch"
	"github.com/burstpool/burstpool/test/fixture"
)

// demandWatch is how the demand tests' providers observe: a watch, and a
// relist every second.
var demandWatch = watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond}

// inOneSlot is how long of one slot of the demand history a demand test
// needs: what it records then falls in one slot, whose figures it can
// compare with a history that recorded them.
const inOneSlot = 3 * time.Minute

// withinSlot waits until at least inOneSlot is left of the current slot
// of the demand history: at most inOneSlot.
func withinSlot(t *testing.T) {
	t.Helper()
	now := time.Now()
	if left := now.Truncate(warmpolicy.SlotLength).Add(warmpolicy.SlotLength).Sub(now); left < inOneSlot {
		t.Logf("waiting %s for the next slot of the demand history", left.Round(time.Second))
		time.Sleep(left + time.Second)
	}
}

// recorded is the encoding of a history that recorded, in the slot of
// now, a peak of wanted executors and starts, cold of them.
func recorded(now time.Time, wanted, starts, cold int32) string {
	h := &warmpolicy.History{}
	h.Observe(now, wanted, starts, cold)
	return h.Encode()
}

// demandCapacity is the PoolCapacity of pool, whose nodes hold four
// executors and which QueryService team-a/sales is attached to.
func demandCapacity(pool string) *v1alpha1.PoolCapacity {
	pc := &v1alpha1.PoolCapacity{
		ObjectMeta: metav1.ObjectMeta{Name: pool},
		Spec: v1alpha1.PoolCapacitySpec{ForProvider: v1alpha1.PoolCapacityParameters{
			Pool:             v1alpha1.PoolRef{Name: pool, Namespace: "platform"},
			NodeSelector:     map[string]string{qsv1alpha1.LabelPool: pool},
			ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
			ExecutorsPerNode: 4, MaxExecutors: 8,
			QueryServices: []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: "team-a"}},
		}},
	}
	pc.SetProviderConfigReference(&xpv2.Reference{Name: "default"})
	return pc
}

// observe creates pc, through the local ProviderConfig, and starts a
// provider that observes it.
func observe(t *testing.T, c client.Client, pc *v1alpha1.PoolCapacity) *provider {
	t.Helper()
	ensureLocalProviderConfig(t, c)
	if err := c.Create(context.Background(), pc); err != nil {
		t.Fatal(err)
	}
	return startProvider(t, demandWatch)
}

// waitingExecutor creates an executor of QueryService sales in ns that
// waits for room on pool: unbound, Unschedulable.
func waitingExecutor(t *testing.T, c client.Client, pool, ns, name string) {
	t.Helper()
	l := executorLabels("sales")
	l[qsv1alpha1.LabelPool] = pool
	createPod(t, c, ns, name, "", l, nil, fixture.Unschedulable())
}

// demandEvents counts the DemandHistoryReset events of PoolCapacity name.
func demandEvents(t *testing.T, c client.Client, name string) int {
	t.Helper()
	var l corev1.EventList
	if err := c.List(context.Background(), &l); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range l.Items {
		if e.InvolvedObject.Name == name && e.Reason == string(poolcapacity.ReasonDemandHistoryReset) {
			n++
		}
	}
	return n
}

// gauge returns the value of the provider's gauge name for pool, and
// whether the series exists.
func gauge(t *testing.T, p *provider, name, pool string) (float64, bool) {
	t.Helper()
	mfs, err := p.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "pool" && l.GetValue() == pool {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// TestDemandHistory runs the provider on a pool whose attached
// QueryService starts two executors on a node that was there before them
// and has a third waiting for room, beside an executor of a namespace
// that is not attached, waiting too; then restarts the provider and
// starts a fourth. The history in status records, in the slot of the
// test, the executors wanted by the attached QueryService alone (three,
// then four) and every start, once: the restarted provider decodes it
// from status and carries its counts on, begun at the same time.
func TestDemandHistory(t *testing.T) {
	const pool = "demanding"
	withinSlot(t)
	c := newClient(t, "team-a", "team-x")
	ctx := context.Background()
	createNodeOf(t, c, pool, "demanding-1")
	p := observe(t, c, demandCapacity(pool))
	defer func() {
		deletePCs(t, c, pool)
		p.stop(t)
		for _, k := range []client.ObjectKey{{Namespace: "team-a", Name: "demanding-0"}, {Namespace: "team-a", Name: "demanding-1"},
			{Namespace: "team-a", Name: "demanding-2"}, {Namespace: "team-a", Name: "demanding-3"}, {Namespace: "team-x", Name: "foreign-0"}} {
			deletePod(t, c, k.Namespace, k.Name)
		}
		if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "demanding-1"}}); err != nil {
			t.Errorf("cannot delete node demanding-1: %v", err)
		}
	}()
	// history waits until status counts starts and its history is the
	// one that recorded wanted and starts in this slot.
	history := func(starts string, wanted, n int32) *v1alpha1.PoolCapacity {
		var got *v1alpha1.PoolCapacity
		eventually(t, fmt.Sprintf("a history of %d executors wanted and %d started", wanted, n), func() error {
			pc := getPC(t, c, pool)
			got = pc
			o := pc.Status.AtProvider
			if s := startCounts(o.ExecutorStarts); s != starts {
				return fmt.Errorf("executor starts %s, want %q", s, starts)
			}
			if o.Demand == nil {
				return fmt.Errorf("no demand history in status")
			}
			if o.Demand.Encoded != recorded(time.Now(), wanted, n, 0) {
				return fmt.Errorf("the history in status is not one of %d executors wanted and %d started (allocations %v)", wanted, n, o.Allocations)
			}
			return nil
		})
		return got
	}
	// Counting begins at the first observation.
	history("", 0, 0)

	time.Sleep(secondApart)
	createExecutorOf(t, c, pool, "demanding-0", "demanding-1")
	createExecutorOf(t, c, pool, "demanding-1", "demanding-1")
	waitingExecutor(t, c, pool, "team-a", "demanding-2")
	waitingExecutor(t, c, pool, "team-x", "foreign-0")
	runExecutor(t, c, "demanding-0")
	runExecutor(t, c, "demanding-1")
	before := history("ExistingNode=2", 3, 2)
	if w := before.Status.AtProvider.Demand.Weeks; w != 1 {
		t.Errorf("status.atProvider.demand.weeks is %d, want 1", w)
	}

	p.stop(t)
	p = startProvider(t, demandWatch)
	createExecutorOf(t, c, pool, "demanding-3", "demanding-1")
	runExecutor(t, c, "demanding-3")
	after := history("ExistingNode=3", 4, 3)
	if b, a := before.Status.AtProvider.Demand.Since, after.Status.AtProvider.Demand.Since; !a.Equal(&b) {
		t.Errorf("the restarted provider began the history again at %s; it began at %s", a, b)
	}
	if n := demandEvents(t, c, pool); n != 0 {
		t.Errorf("%d DemandHistoryReset events on a history that could be read", n)
	}
	eventually(t, "the restarted provider's burstpool_pool_demand_history_weeks", func() error {
		if v, ok := gauge(t, p, "burstpool_pool_demand_history_weeks", pool); !ok || v != 1 {
			return fmt.Errorf("burstpool_pool_demand_history_weeks is %v (exported: %t), want 1", v, ok)
		}
		return nil
	})
}

// TestDemandHistoryReplaced writes into a pool's status, while the
// provider is stopped, a history it cannot read: garbage, and one longer
// than any encoding. The provider starts, replaces it with a history
// begun then, says so in an event, and goes on running.
func TestDemandHistoryReplaced(t *testing.T) {
	const pool = "demand-replaced"
	c := newClient(t)
	ctx := context.Background()
	p := observe(t, c, demandCapacity(pool))
	defer func() {
		deletePCs(t, c, pool)
		p.stop(t)
	}()
	recordedOnce := func() *v1alpha1.PoolCapacity {
		var got *v1alpha1.PoolCapacity
		eventually(t, "a demand history in status", func() error {
			pc := getPC(t, c, pool)
			got = pc
			if d := pc.Status.AtProvider.Demand; d == nil {
				return fmt.Errorf("no demand history in status")
			} else if _, err := warmpolicy.Decode(d.Encoded); err != nil {
				return err
			}
			return nil
		})
		return got
	}
	recordedOnce()
	cases := []struct {
		name, encoded string
	}{
		{name: "Garbage", encoded: "not a demand history"},
		{name: "Oversized", encoded: strings.Repeat("A", warmpolicy.MaxEncodedBytes+1)},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.stop(t)
			eventually(t, "writing "+tc.name+" into status.atProvider.demand", func() error {
				pc := getPC(t, c, pool)
				pc.Status.AtProvider.Demand = &v1alpha1.DemandHistory{Encoded: tc.encoded, Since: metav1.NewTime(time.Now().Add(-time.Hour)), Weeks: 3}
				return c.Status().Update(ctx, pc)
			})
			restarted := metav1.NewTime(time.Now().Truncate(time.Second))
			p = startProvider(t, demandWatch)
			got := recordedOnce()
			if d := got.Status.AtProvider.Demand; d.Since.Before(&restarted) {
				t.Errorf("the history that replaced %s began at %s, before the provider started again at %s", tc.name, d.Since, restarted)
			}
			eventually(t, "a DemandHistoryReset event", func() error {
				if n := demandEvents(t, c, pool); n != i+1 {
					return fmt.Errorf("%d DemandHistoryReset events, want %d", n, i+1)
				}
				return nil
			})
		})
	}
}

// TestWarmRecommendation runs the provider on a pool whose spec asks for
// a learned warm level, starts two executors, and changes the goal: the
// recommendation in status and its gauge follow, bound by the platform's
// cap in slots, then in dollars (a slot is a quarter of an r7gd.4xlarge
// at the aws catalog's 1.16109 USD/h), and go when the spec stops asking.
func TestWarmRecommendation(t *testing.T) {
	const pool = "learning"
	withinSlot(t)
	c := newClient(t, "team-a")
	ctx := context.Background()
	createNodeOf(t, c, pool, "learning-1")
	pc := demandCapacity(pool)
	goal := v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: metav1.Duration{Duration: 5 * time.Minute}}
	pc.Spec.ForProvider.WarmPolicy = &v1alpha1.WarmPolicy{Learned: &goal}
	p := observe(t, c, pc)
	defer func() {
		deletePCs(t, c, pool)
		p.stop(t)
		for _, name := range []string{"learning-0", "learning-1"} {
			deletePod(t, c, "team-a", name)
		}
		if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "learning-1"}}); err != nil {
			t.Errorf("cannot delete node learning-1: %v", err)
		}
	}()
	// Every recommendation of the test is due again by the end of its
	// slot, when not sooner (its lead reaching the next slot).
	slotEnd := metav1.NewTime(time.Now().Truncate(warmpolicy.SlotLength).Add(warmpolicy.SlotLength))
	// recommends waits until status recommends executors, capped by
	// capped, at dollars an hour (within a millionth; < 0: unknown).
	recommends := func(executors int32, capped string, dollars float64) {
		t.Helper()
		eventually(t, fmt.Sprintf("a learned warm level of %d executors (%q)", executors, capped), func() error {
			got := getPC(t, c, pool)
			r := got.Status.AtProvider.WarmRecommendation
			if r == nil {
				return fmt.Errorf("no warm recommendation in status")
			}
			if r.Executors != executors || r.Capped != capped || slotEnd.Before(&r.Until) || r.Weeks != 1 || r.Reason == "" {
				return fmt.Errorf("recommendation %+v", *r)
			}
			if f, err := strconv.ParseFloat(r.DollarsPerHour, 64); err != nil || math.Abs(f-dollars) > 1e-6 {
				return fmt.Errorf("recommended warm slots cost %q an hour, want %v", r.DollarsPerHour, dollars)
			}
			if v, ok := gauge(t, p, "burstpool_pool_warm_recommended_executors", pool); !ok || v != float64(executors) {
				return fmt.Errorf("burstpool_pool_warm_recommended_executors is %v (exported: %t)", v, ok)
			}
			return nil
		})
	}
	const slot = 1.16109 / 4
	// No start recorded yet: nothing to warm.
	recommends(0, "", 0)

	time.Sleep(secondApart)
	createExecutorOf(t, c, pool, "learning-0", "learning-1")
	createExecutorOf(t, c, pool, "learning-1", "learning-1")
	runExecutor(t, c, "learning-0")
	runExecutor(t, c, "learning-1")
	eventually(t, "two starts counted", func() error {
		got := getPC(t, c, pool)
		if s := startCounts(got.Status.AtProvider.ExecutorStarts); s != "ExistingNode=2" {
			return fmt.Errorf("executor starts %s", s)
		}
		return nil
	})
	// The level is asked again when the goal changes.
	setGoal := func(g *v1alpha1.LearnedGoal) {
		update(t, c, pool, func(pc *v1alpha1.PoolCapacity) {
			pc.Spec.ForProvider.WarmPolicy = nil
			if g != nil {
				pc.Spec.ForProvider.WarmPolicy = &v1alpha1.WarmPolicy{Learned: g}
			}
		})
	}
	capSlots := goal
	capSlots.MaxSlots = 1
	setGoal(&capSlots)
	recommends(1, warmpolicy.CapMaxSlots, slot)

	capDollars := goal
	capDollars.MaxDollarsPerHour = "0.5"
	setGoal(&capDollars)
	recommends(1, warmpolicy.CapMaxDollarsPerHour, slot)

	uncapped := goal
	uncapped.TargetWarmPercent = 100
	setGoal(&uncapped)
	recommends(2, "", 2*slot)

	setGoal(nil)
	eventually(t, "the warm recommendation gone", func() error {
		got := getPC(t, c, pool)
		if r := got.Status.AtProvider.WarmRecommendation; r != nil {
			return fmt.Errorf("recommendation %+v", *r)
		}
		if v, ok := gauge(t, p, "burstpool_pool_warm_recommended_executors", pool); ok {
			return fmt.Errorf("burstpool_pool_warm_recommended_executors is still exported: %v", v)
		}
		return nil
	})
}
