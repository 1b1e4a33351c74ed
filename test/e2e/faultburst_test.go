package e2e

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	capv1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	testfixture "github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// A burst through a fault, as every scenario of TestFaults runs it: a pool
// with one executor Running, the fault, the executors scaled to
// faultBurst (which needs new nodes: one such executor fills a node), the
// fault mended; then what the row records.
const (
	faultBase  = 1
	faultBurst = burstReplicas
)

// fault is how a scenario of TestFaults breaks one component on the burst
// path, and mends it.
type fault struct {
	// name is the fault's row in the fault table.
	name string
	// begin breaks the component; it returns once the fault holds.
	begin func(t *testing.T, ctx context.Context, b burst)
	// end mends the component; it returns once it serves again. It is
	// called once, from a cleanup when the scenario fails first.
	end func(t *testing.T, ctx context.Context, b burst)
	// beforeScale begins the fault before the executors are scaled up, so
	// the burst runs into it; otherwise it begins right after, while the
	// burst is under way (the API server, without which there is no
	// scale-up).
	beforeScale bool
	// hold is how long the fault holds at least, from its beginning.
	hold time.Duration
	// untilRunning holds the fault until the burst's executors all run
	// as well: the burst does not wait on the component.
	untilRunning bool
	// countBound bounds how soon after the fault's end the claim counts
	// what runs; statusBound when zero.
	countBound time.Duration
	// apiOutage says the fault takes the API server down: every watch of
	// every component (the provider's, Crossplane's for the composite and
	// the claim) fails until it is back, and the count may wait on their
	// reconnect as well (reflectorCatchUp).
	apiOutage bool
	// proof, when not nil, says what shows the fault happened; it runs
	// once the fault has ended and fails t when the fault did not happen.
	proof func(t *testing.T, ctx context.Context, b burst, began time.Time) string
}

// burstThrough bursts a pool of its own through f and records the row:
// the time from the scale-up to all executors Running; the executors and
// composed objects lost (each must be 0); the claim counting what runs
// within statusBound of the fault's end; the cost advancing past it and
// attributing the burst's QueryService.
func burstThrough(t *testing.T, ctx context.Context, e *env, f fault) {
	s, c := e.Stack, e.Client
	countBound := statusBound
	if f.countBound > 0 {
		countBound = f.countBound
	}
	row := newFaultRow(t, f.name, countBound)

	b := newBurst(t, ctx, e)
	b.start(t, ctx, s, faultBase)
	composedBefore := mustComposedObjects(t, ctx, e.Stack, b.poolNS, b.pool)
	pc := capacityOf(t, composedBefore)
	ran := mustRunningExecutors(t, ctx, c, b.qsNS, b.pool)
	costBefore := eventuallyCost(t, ctx, c, pc, "the PoolCapacity counts the cost before the fault", func(capv1.CostObservation) error { return nil })

	var began, ended time.Time
	mended := false
	endFault := func() {
		if mended {
			return
		}
		mended = true
		f.end(t, ctx, b)
		ended = time.Now()
		row.Held = ended.Sub(began)
		t.Logf("%s: mended after %s", f.name, row.Held.Round(100*time.Millisecond))
	}
	beginFault := func() {
		began = time.Now()
		t.Cleanup(endFault)
		f.begin(t, ctx, b)
		t.Logf("%s: begun", f.name)
	}
	if f.beforeScale {
		beginFault()
	}
	scaled := time.Now()
	b.scale(t, ctx, s, faultBurst)
	if !f.beforeScale {
		beginFault()
	}
	allRunning := func() {
		running := func() (bool, error) {
			n, err := runningExecutors(ctx, c, b.qsNS, b.pool)
			return n == faultBurst, fmt.Errorf("%d of %d executors Running (%v)", n, faultBurst, err)
		}
		if ok, _ := testfixture.Within(t, waitNodes, running); !ok && f.apiOutage {
			if lost := lostVerdicts(t, ctx, c, b); len(lost) > 0 {
				t.Logf("%s: the scheduler's verdict on %v was lost to the outage (a FailedScheduling event, no PodScheduled condition, so Karpenter does not see them); waiting for the scheduler's own retry", f.name, lost)
				row.Note = fmt.Sprintf("verdict on %d executors lost to the outage, retried by the scheduler", len(lost))
				testfixture.Eventually(t, schedulerRetry, fmt.Sprintf("the burst's %d executors Running after the scheduler's retry", faultBurst), running)
			}
		}
		testfixture.Eventually(t, waitStatus, fmt.Sprintf("the burst's %d executors Running", faultBurst), running)
		row.Running = time.Since(scaled)
	}
	if f.untilRunning {
		allRunning()
	}
	time.Sleep(time.Until(began.Add(f.hold)))
	endFault()
	if !f.untilRunning {
		allRunning()
	}
	t.Logf("%s: burst %d -> %d executors Running in %s", f.name, faultBase, faultBurst, row.Running.Round(100*time.Millisecond))
	for uid, name := range mustRunningExecutors(t, ctx, c, b.qsNS, b.pool) {
		ran[uid] = name
	}
	// Counted: occupied and allocated are the executors Running, total
	// the Ready pool nodes (one slot each).
	if f.apiOutage {
		countBound = statusBound + reflectorCatchUp(row.Held)
		row.CountBound = countBound
	}
	h := hops{start: time.Now()}
	counted := testfixture.Eventually(t, waitStatus, "the claim counts what runs", func() (bool, error) {
		return h.counts(ctx, e, b, pc)
	})
	row.Counted = counted
	if counted > countBound {
		t.Errorf("%s: the claim counted what runs %s after the fault ended and the executors ran, beyond its bound (%s); %s", f.name, counted.Round(100*time.Millisecond), countBound, h)
	}
	eventuallyCost(t, ctx, c, pc, "the cost advances past the fault and attributes the burst's QueryService", func(o capv1.CostObservation) error {
		return costAfter(costBefore, o, ended, b.qsNS, b.qs)
	})
	row.Cost = "advancing, " + b.qs + " attributed"
	if f.proof != nil {
		row.Proof = f.proof(t, ctx, b, began)
	}

	lost := lostExecutors(ran, mustRunningExecutors(t, ctx, c, b.qsNS, b.pool))
	row.ExecutorsLost = len(lost)
	gone := lostComposed(ctx, c, composedBefore)
	row.ComposedLost = len(gone)
	if len(lost) > 0 {
		t.Errorf("%s: %d executors that ran no longer run: %v", f.name, len(lost), lost)
	}
	if len(gone) > 0 {
		t.Errorf("%s: %d of the %d objects the pool composed are gone or replaced: %v", f.name, len(gone), len(composedBefore), gone)
	}
	t.Logf("%s: %d executors and %d composed objects kept; counted %s after; proof: %s", f.name, len(ran), len(composedBefore), counted.Round(100*time.Millisecond), row.Proof)
}

// hops records when each object on the way from the capacity provider to
// the tenant first counted what runs: the PoolCapacity the provider
// writes, the composite the function writes from it, the claim Crossplane
// copies the composite's status to. A slow count names the slow hop.
type hops struct {
	start                      time.Time
	capacity, composite, claim time.Duration
}

func (h hops) String() string {
	at := func(d time.Duration) string {
		if d == 0 {
			return "not yet"
		}
		return d.Round(100 * time.Millisecond).String()
	}
	return fmt.Sprintf("counted by the PoolCapacity after %s, the composite after %s, the claim after %s", at(h.capacity), at(h.composite), at(h.claim))
}

// counts reports whether the claim of b's pool counts what runs:
// occupied and the QueryService's allocation are the Running executors,
// total the Ready pool nodes, one slot each. It records the first time
// the PoolCapacity pc, the composite and the claim each did.
func (h *hops) counts(ctx context.Context, e *env, b burst, pc string) (bool, error) {
	running, err := runningExecutors(ctx, e.Client, b.qsNS, b.pool)
	if err != nil {
		return false, err
	}
	nodes := &corev1.NodeList{}
	if err := e.Client.List(ctx, nodes, client.MatchingLabels{qsv1.LabelPool: b.pool}); err != nil {
		return false, err
	}
	ready := len(readyNodes(nodes.Items))
	want := fmt.Sprintf("occupied %d allocated %d total %d", running, running, ready)
	seen := func(d *time.Duration, got string) {
		if *d == 0 && got == want && running == faultBurst {
			*d = time.Since(h.start)
		}
	}
	if o, err := observation(ctx, e.Client, pc); err == nil {
		var allocated int32
		for _, a := range o.Allocations {
			if a.Namespace == b.qsNS && a.QueryService == b.qs {
				allocated = a.PoolExecutors
			}
		}
		seen(&h.capacity, fmt.Sprintf("occupied %d allocated %d total %d", o.OccupiedExecutors, allocated, o.TotalExecutors))
	}
	if xr, err := compositeIn(ctx, e.Stack, b.poolNS, b.pool); err == nil {
		occupied, _, _ := unstructured.NestedInt64(xr.Object, "status", "occupiedExecutors")
		total, _, _ := unstructured.NestedInt64(xr.Object, "status", "totalExecutors")
		seen(&h.composite, fmt.Sprintf("occupied %d allocated %d total %d", occupied, allocation(xr, b.qsNS, b.qs), total))
	}
	p, st, err := readPool(ctx, e.Stack, b.poolNS, b.pool)
	if err != nil {
		return false, err
	}
	got := fmt.Sprintf("occupied %d allocated %d total %d", st.OccupiedExecutors, allocation(p, b.qsNS, b.qs), st.TotalExecutors)
	seen(&h.claim, got)
	return h.claim != 0, fmt.Errorf("claim %s, want %s; %s", got, want, h)
}

// eventuallyCost waits until the cost of the PoolCapacity pc passes
// check, and returns it.
func eventuallyCost(t *testing.T, ctx context.Context, c client.Client, pc, what string, check func(capv1.CostObservation) error) capv1.CostObservation {
	t.Helper()
	var cost capv1.CostObservation
	testfixture.Eventually(t, waitStatus, what, func() error {
		o, err := observation(ctx, c, pc)
		if err != nil {
			return err
		}
		if o.Cost == nil {
			return fmt.Errorf("PoolCapacity %s counts no cost", pc)
		}
		cost = *o.Cost
		return check(cost)
	})
	return cost
}

// costAfter says what is wrong with the cost after a fault that ended at
// ended, given the cost before it (nil when right): counting goes on from
// the same start, past the fault's end, with no time unaccounted beyond
// what was before, its node time grew, and it attributes node time to
// QueryService qsNS/qs now.
func costAfter(before, after capv1.CostObservation, ended time.Time, qsNS, qs string) error {
	grew, err := decimalLess(before.NodeSeconds, after.NodeSeconds)
	if err != nil {
		return err
	}
	nodes := "none"
	for _, u := range after.ByUse {
		if u.Part == capv1.CostQueryService && u.Namespace == qsNS && u.QueryService == qs {
			nodes = u.Nodes
		}
	}
	attributed, err := decimalLess("0", nodes)
	if err != nil {
		attributed = false
	}
	if after.AccountedUntil.After(ended) && after.Since.Equal(&before.Since) && after.UnaccountedSeconds == before.UnaccountedSeconds && grew && attributed {
		return nil
	}
	return fmt.Errorf("accountedUntil %v (fault ended %v), since %v (was %v), unaccounted %d s (was %d), node-seconds %s (was %s), %s/%s holds %s nodes now",
		after.AccountedUntil, ended.Format(time.RFC3339Nano), after.Since, before.Since, after.UnaccountedSeconds, before.UnaccountedSeconds,
		after.NodeSeconds, before.NodeSeconds, qsNS, qs, nodes)
}

// capacityOf is the name of the PoolCapacity among composed, failing t
// when there is none.
func capacityOf(t *testing.T, composed []composedObject) string {
	t.Helper()
	for _, o := range composed {
		if o.kind == "PoolCapacity" {
			return o.name
		}
	}
	t.Fatalf("the pool composed no PoolCapacity: %v", composed)
	return ""
}

// decimalLess reports whether the status decimal a is less than b.
func decimalLess(a, b string) (bool, error) {
	x, err := strconv.ParseFloat(a, 64)
	if err != nil {
		return false, fmt.Errorf("status decimal %q: %w", a, err)
	}
	y, err := strconv.ParseFloat(b, 64)
	if err != nil {
		return false, fmt.Errorf("status decimal %q: %w", b, err)
	}
	return x < y, nil
}

// poolExecutors selects the pool executors of pool.
func poolExecutors(pool string) client.MatchingLabels {
	return client.MatchingLabels{qsv1.LabelPool: pool, qsv1.LabelExecutorType: qsv1.ExecutorTypePool}
}

// mustExecutorPods are the pods of pool's executors in ns.
func mustExecutorPods(t *testing.T, ctx context.Context, c client.Client, ns, pool string) []corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	mustList(t, ctx, c, pods, client.InNamespace(ns), poolExecutors(pool))
	return pods.Items
}

// mustRunningExecutors are the Running, not terminating pool executors of
// pool in ns, by UID.
func mustRunningExecutors(t *testing.T, ctx context.Context, c client.Client, ns, pool string) map[types.UID]string {
	t.Helper()
	out := map[types.UID]string{}
	for _, p := range mustExecutorPods(t, ctx, c, ns, pool) {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out[p.UID] = p.Name
		}
	}
	return out
}

// lostExecutors names the executors of ran that are not among now.
func lostExecutors(ran, now map[types.UID]string) []string {
	var lost []string
	for uid, name := range ran {
		if _, ok := now[uid]; !ok {
			lost = append(lost, name)
		}
	}
	slices.Sort(lost)
	return lost
}

// composedObject is an object a pool composed, as its composite's
// spec.resourceRefs names it, with its UID.
type composedObject struct {
	apiVersion, kind, namespace, name string
	uid                               types.UID
}

func (o composedObject) String() string {
	return path.Join(o.kind, o.namespace, o.name)
}

// mustComposedObjects reads every object the Pool claim ns/name's
// composite composed (its spec.resourceRefs) from the cluster, failing t
// when the composite or one of them cannot be read.
func mustComposedObjects(t *testing.T, ctx context.Context, s *devplane.Stack, ns, name string) []composedObject {
	t.Helper()
	xr, err := compositeIn(ctx, s, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	refs, _, _ := unstructured.NestedSlice(xr.Object, "spec", "resourceRefs")
	if len(refs) == 0 {
		t.Fatalf("the composite %s of pool %s/%s names no composed object", xr.GetName(), ns, name)
	}
	var out []composedObject
	for _, r := range refs {
		m, _ := r.(map[string]any)
		o := composedObject{}
		o.apiVersion, _ = m["apiVersion"].(string)
		o.kind, _ = m["kind"].(string)
		o.namespace, _ = m["namespace"].(string)
		o.name, _ = m["name"].(string)
		u, err := s.Get(ctx, schema.FromAPIVersionAndKind(o.apiVersion, o.kind), o.namespace, o.name)
		if err != nil {
			t.Fatalf("%s composed by pool %s/%s: %v", o, ns, name, err)
		}
		o.uid = u.GetUID()
		out = append(out, o)
	}
	return out
}

// lostComposed names the objects of before that c no longer finds, or
// finds under another UID.
func lostComposed(ctx context.Context, c client.Client, before []composedObject) []string {
	var lost []string
	for _, o := range before {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.FromAPIVersionAndKind(o.apiVersion, o.kind))
		err := c.Get(ctx, types.NamespacedName{Namespace: o.namespace, Name: o.name}, u)
		switch {
		case kerrors.IsNotFound(err):
			lost = append(lost, o.String()+" gone")
		case err != nil:
			lost = append(lost, fmt.Sprintf("%s unreadable: %v", o, err))
		case u.GetUID() != o.uid:
			lost = append(lost, fmt.Sprintf("%s replaced (UID %s, was %s)", o, u.GetUID(), o.uid))
		}
	}
	return lost
}

// metricSum sums the series of the capacity provider's metric name, as
// the replica that leads serves them (a standby observes nothing).
func metricSum(ctx context.Context, s *devplane.Stack, name string) (float64, error) {
	addr := s.MetricsAddr
	if len(s.Replicas) > 0 {
		r, err := s.LeaderReplica(ctx, takeoverBound)
		if err != nil {
			return 0, err
		}
		addr = r.MetricsAddr
	}
	m, err := devplane.Scrape(ctx, addr, name)
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, v := range m {
		sum += v
	}
	return sum, nil
}

// reflectorCatchUp is how long after an API server outage of held a
// client-go informer may still wait before it lists and watches again.
// Its reflector retries with a jittered exponential backoff
// (k8s.io/client-go/tools/cache/reflector.go: 800 ms doubling to 30 s,
// jitter 1.0, so each wait lies in [d, 2d)). The wait under way when the
// server returns began at the latest at held, so it ends at most 2d after,
// with d the longest step whose unjittered waits before it fit in held.
// Crossplane's watches of the composite and the claim back off the same
// way, so a count after an outage may wait this long on any of them.
func reflectorCatchUp(held time.Duration) time.Duration {
	const (
		first = 800 * time.Millisecond
		most  = 30 * time.Second
	)
	d, before := first, time.Duration(0)
	for before+d <= held && d < most {
		before += d
		d = min(2*d, most)
	}
	return 2 * d
}

// schedulerRetry is how long the scheduler keeps a pod it judged
// unschedulable before it tries it again with no cluster event to prompt
// it: podMaxInUnschedulablePodsDuration (5 min, kube-scheduler's
// pkg/scheduler/backend/queue), flushed every 30 s, plus the burst's own
// bound for the nodes it then needs.
const schedulerRetry = 5*time.Minute + 30*time.Second + waitNodes

// lostVerdicts names the burst's executors whose scheduling verdict the
// outage lost: Pending, not bound, not gated, with no PodScheduled
// condition although the scheduler recorded a FailedScheduling event for
// them. The scheduler's status write failed with the API server, so
// Karpenter, which provisions only for pods marked Unschedulable, never
// sees them, and the scheduler, holding them as unschedulable, tries them
// again only after schedulerRetry.
func lostVerdicts(t *testing.T, ctx context.Context, c client.Client, b burst) []string {
	t.Helper()
	pods := &corev1.PodList{}
	mustList(t, ctx, c, pods, client.InNamespace(b.qsNS), client.MatchingLabels{qsv1.LabelPool: b.pool})
	var lost []string
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" || len(p.Spec.SchedulingGates) > 0 ||
			slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodScheduled }) {
			continue
		}
		failed, err := hasEvents(ctx, c, b.qsNS, client.MatchingFields{"involvedObject.name": p.Name, "reason": "FailedScheduling"})
		if err != nil {
			t.Fatal(err)
		}
		if failed {
			lost = append(lost, p.Name)
		}
	}
	return lost
}
