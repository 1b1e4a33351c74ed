package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	poolv1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/warmpolicy"
	testfixture "github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// Warm policies end to end: a Scheduled window raises a pool's warm slots
// before the window opens and its first burst, and lowers them once it
// closes; a learned recommendation reaches a pool's warm slots. Both show
// on the Pool's status.warmPolicy with their reason.

const (
	// warmLead is the settings' warmPolicy.leadTime: the default, 2m
	// (examples/environmentconfig.yaml sets none).
	warmLead = 2 * time.Minute
	// windowLength is the scenario window's duration: long enough for a
	// burst into its warm slots to run and end inside it.
	windowLength = 2 * time.Minute
	// windowExecutors is the window's warm level; the pool's minExecutors
	// is 1 and its maxExecutors windowExecutors+1.
	windowExecutors = 3
	// leadMargin is at least how long after the window is set the lead
	// before it begins, so that the level is seen at minExecutors first.
	leadMargin = time.Minute
	// warmPolicyImage is the scenarios' executor image.
	warmPolicyImage = "registry.example.com/e6data/executor:warm-policy"
)

// warmPool is a scenario's pool of one executor a node (m7i.xlarge, 4
// vCPU, executors of 2500m) and its QueryService, in the burst's
// namespaces.
type warmPool struct {
	burst
	s *devplane.Stack
	// buffer tells that a CapacityBuffer holds the warm slots (the plane
	// processes one), else placeholders.
	buffer bool
}

// apply creates or updates the pool with minExecutors 1 and warmPolicy
// (YAML of spec.warmPolicy, indented four spaces; empty: Static).
func (p warmPool) apply(t *testing.T, ctx context.Context, warmPolicy string) {
	t.Helper()
	if warmPolicy == "" {
		warmPolicy = "    type: Static\n"
	}
	mustApply(t, ctx, p.s.Cluster.Config, poolManifest(p.poolNS, p.pool, fmt.Sprintf(`
  minExecutors: 1
  maxExecutors: %d
  instanceConfig: {instanceType: m7i.xlarge}
  allowedQueryServices:
    - {name: %s, namespace: %s}
  warmPolicy:
%s`, windowExecutors+1, p.qs, p.qsNS, warmPolicy)))
}

// create creates the pool (Static) and its QueryService.
func (p warmPool) create(t *testing.T, ctx context.Context) {
	t.Helper()
	p.apply(t, ctx, "")
	qs := testfixture.QueryService(testfixture.QueryServiceOptions{Namespace: p.qsNS, Name: p.qs, Labels: map[string]string{qsv1.LabelPool: p.pool},
		Image: warmPolicyImage, CPU: "2500m", Memory: "8Gi", Replicas: ptr.To[int32](0), Pool: testfixture.Pool{Name: p.pool, Namespace: p.poolNS}})
	if err := p.s.Client.Create(ctx, testfixture.Unstructured(t, qs)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteExecutors(context.WithoutCancel(ctx), p.s.Client, p.qsNS, p.qs) })
}

// warmSeen is what the pool shows of its warm level.
type warmSeen struct {
	// Policy is status.warmPolicy.
	Policy poolv1.WarmPolicyStatus
	// Slots is the PoolCapacity's spec.forProvider.warmSlots.slots;
	// Holder the replicas of what holds the warm slots (the placeholder
	// Deployment or the CapacityBuffer).
	Slots, Holder int64
}

func (w warmSeen) String() string {
	return fmt.Sprintf("status.warmPolicy {type %s, executors %d, source %s, until %v, dollarsPerHour %q, reason %q}, PoolCapacity warm slots %d, holder replicas %d",
		w.Policy.Type, w.Policy.Executors, w.Policy.Source, w.Policy.Until, w.Policy.DollarsPerHour, w.Policy.Reason, w.Slots, w.Holder)
}

// see reads what the pool shows of its warm level.
func (p warmPool) see(ctx context.Context) (warmSeen, error) {
	var w warmSeen
	_, st, err := readPool(ctx, p.s, p.poolNS, p.pool)
	if err != nil {
		return w, err
	}
	if st.WarmPolicy == nil {
		return w, errors.New("no status.warmPolicy yet")
	}
	w.Policy = *st.WarmPolicy
	pc, err := p.s.Get(ctx, gvk(capacityAPI, "PoolCapacity"), "", p.pool+"-capacity")
	if err != nil {
		return w, err
	}
	w.Slots, _, _ = unstructured.NestedInt64(pc.Object, "spec", "forProvider", "warmSlots", "slots")
	if p.buffer {
		cb, err := buffer(ctx, p.s.Client, p.poolNS, p.pool+"-warm-slots")
		if err != nil {
			return w, err
		}
		w.Holder, _, _ = unstructured.NestedInt64(cb.Object, "spec", "replicas")
		return w, nil
	}
	d, err := placeholderDeployment(ctx, p.s.Client, p.poolNS, p.pool)
	if err != nil {
		return w, err
	}
	if d.Spec.Replicas != nil {
		w.Holder = int64(*d.Spec.Replicas)
	}
	return w, nil
}

// holding is a check that the pool holds level warm slots (no executor
// running) because of source, with a status reason that names what (a
// window's name, say).
func (p warmPool) holding(level int32, source, what string, seen *warmSeen) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		w, err := p.see(ctx)
		*seen = w
		if err != nil {
			return false, err
		}
		ok := w.Policy.Executors == level && w.Policy.Source == source && strings.Contains(w.Policy.Reason, what) &&
			w.Slots == int64(level) && w.Holder == int64(level)
		return ok, errors.New(w.String())
	}
}

// scenarioWarmWindow: a Scheduled window on a pool whose placeholders hold
// the warm slots.
func scenarioWarmWindow(t *testing.T, ctx context.Context, e *env) {
	warmWindow(t, ctx, e, false)
}

// scenarioWarmWindowBuffer: the same on a plane whose Karpenter processes
// CapacityBuffers, so the pool's buffer holds the warm slots.
func scenarioWarmWindowBuffer(t *testing.T, ctx context.Context, e *env) {
	warmWindow(t, ctx, e, true)
}

// warmWindow creates a pool of 1 warm slot (Static) and waits until the
// slot is held (by its CapacityBuffer when buffer is set); then gives it a
// window, in UTC, that opens at the first minute at least the lead time
// and leadMargin ahead, for windowLength, at windowExecutors. It checks
// that the status says minExecutors holds the level until the lead before
// the window; that from the lead, before the window opens, the claim says
// the window holds windowExecutors, the PoolCapacity's warm slots and
// their holder rise, and warm nodes are launched for them; that a burst of
// windowExecutors executors at the window's opening runs on those nodes
// without a node launched; and that once the window closes, not before,
// the level falls back to minExecutors.
func warmWindow(t *testing.T, ctx context.Context, e *env, buffer bool) {
	s, c := e.Stack, e.Client
	p := warmPool{burst: newBurst(t, ctx, e), s: s, buffer: buffer}
	p.create(t, ctx)
	if buffer {
		eventually(t, waitSlow, "the pool's CapacityBuffer holds the warm slot", func(ctx context.Context) (bool, error) {
			_, st, err := readPool(ctx, s, p.poolNS, p.pool)
			if err != nil || st.WarmCapacity == nil {
				return false, fmt.Errorf("status.warmCapacity: %v", err)
			}
			return st.WarmCapacity.Method == "CapacityBuffer", fmt.Errorf("status.warmCapacity %+v", *st.WarmCapacity)
		})
	}
	var seen warmSeen
	eventually(t, waitSlow, "the pool holds its one warm slot (Static)", p.holding(1, poolv1.WarmFromMinExecutors, "minExecutors", &seen))
	launched := recordNodeClaims(t, ctx, c, p.pool+"-nodepool")

	// The window opens on a whole minute, UTC.
	open := time.Now().UTC().Add(warmLead + leadMargin).Truncate(time.Minute).Add(time.Minute)
	lead, closes := open.Add(-warmLead), open.Add(windowLength)
	const window = "e2e-burst"
	p.apply(t, ctx, fmt.Sprintf(`    type: Scheduled
    windows:
    - {name: %s, schedule: "%d %d * * *", duration: %s, executors: %d}
`, window, open.Minute(), open.Hour(), windowLength, windowExecutors))
	t.Logf("window %s opens at %s (lead from %s), closes at %s", window, open.Format(time.TimeOnly), lead.Format(time.TimeOnly), closes.Format(time.TimeOnly))

	// Before the lead: minExecutors, until the lead.
	eventually(t, max(time.Until(lead), time.Second), "before the lead, the claim says minExecutors holds the level until the lead", func(ctx context.Context) (bool, error) {
		w, err := p.see(ctx)
		if err != nil {
			return false, err
		}
		ok := w.Policy.Type == poolv1.WarmScheduled && w.Policy.Source == poolv1.WarmFromMinExecutors && w.Policy.Executors == 1 &&
			w.Policy.Until != nil && w.Policy.Until.Equal(&metav1.Time{Time: lead}) && w.Slots == 1 && w.Holder == 1
		return ok, errors.New(w.String())
	})

	// From the lead, before the window opens: the window's level.
	rose := eventually(t, time.Until(open), "before the window opens, its warm slots are held", p.holding(windowExecutors, poolv1.WarmFromWindow, window, &seen))
	at := time.Now()
	if at.Before(lead) {
		t.Errorf("the warm slots rose at %s, before the lead began at %s", at.Format(time.TimeOnly), lead.Format(time.TimeOnly))
	}
	t.Logf("warm slots %d -> %d at %s, %s before the window opens (after %s): %s", 1, windowExecutors, at.Format(time.TimeOnly), open.Sub(at).Round(time.Second), rose.Round(time.Second), seen)
	if u := seen.Policy.Until; u == nil || !u.Equal(&metav1.Time{Time: closes}) {
		t.Errorf("status.warmPolicy.until %v, want the window's close %s", u, closes.Format(time.RFC3339))
	}
	if seen.Policy.DollarsPerHour == "" {
		t.Errorf("status.warmPolicy.dollarsPerHour is empty: the warm slots' cost is not shown")
	}
	if ev := strings.Join(eventsOf(ctx, c, p.poolNS, "Pool", p.pool), "\n"); !strings.Contains(ev, "WarmLevelChanged") {
		t.Errorf("no WarmLevelChanged event on the claim; its events:\n%s", ev)
	}
	var warm []string
	eventually(t, waitNodes, "a Ready pool node for each warm slot", func(ctx context.Context) (bool, error) {
		warm = nodeNames(readyNodes(poolNodes(t, ctx, c, p.pool)))
		return len(warm) == windowExecutors, fmt.Errorf("ready pool nodes %v", warm)
	})
	t.Logf("%d warm nodes Ready %s before the window opens", len(warm), time.Until(open).Round(time.Second))

	// The window's first burst, at its opening, into the warm slots.
	time.Sleep(time.Until(open))
	before := launched()
	sched := executorScheduling(t, c, p.poolNS, p.pool)
	if err := c.Create(ctx, devplane.ExecutorDeployment(p.qsNS, p.qs, warmPolicyImage, windowExecutors, "2500m", "8Gi", sched)); err != nil {
		t.Fatal(err)
	}
	took := waitExecutors(t, waitWarmBurst, "the window's burst Running in its warm slots", c, p.qsNS, p.pool, windowExecutors)
	t.Logf("burst of %d executors at the window's opening -> Running: %s", windowExecutors, took.Round(10*time.Millisecond))
	burstOnWarmNodes(t, ctx, c, p.qsNS, p.qs, warm, before, launched)
	scaleExecutors(t, ctx, c, p.qsNS, p.qs, 0)

	// Once the window closes, and not before, minExecutors again.
	var fell time.Time
	eventually(t, time.Until(closes)+waitStatus, "after the window closes, the level falls back to minExecutors", func(ctx context.Context) (bool, error) {
		ok, err := p.holding(1, poolv1.WarmFromMinExecutors, "minExecutors", &seen)(ctx)
		if seen.Policy.Source != poolv1.WarmFromWindow && fell.IsZero() {
			fell = time.Now()
		}
		return ok, err
	})
	if fell.Before(closes) {
		t.Errorf("the level left the window at %s, before it closed at %s: %s", fell.Format(time.TimeOnly), closes.Format(time.TimeOnly), seen)
	}
	t.Logf("window closed at %s -> %s", closes.Format(time.TimeOnly), seen)
}

// learnedWeeks are the weeks of demand history the learned scenario
// seeds, and learnedExecutors the executors each of them wanted (and
// started cold) around this time of the week.
const (
	learnedWeeks     = 3
	learnedExecutors = 3
)

// seededHistory is a demand history of learnedWeeks weeks in which the
// pool's QueryServices wanted learnedExecutors executors, all started on
// new nodes, in every slot from a slot before now to 45 minutes after it
// at this time of the week, as the capacity provider would have recorded
// them (internal/warmpolicy).
func seededHistory(now time.Time) *warmpolicy.History {
	h := &warmpolicy.History{}
	for w := learnedWeeks; w >= 1; w-- {
		week := now.Add(-time.Duration(w) * 7 * 24 * time.Hour)
		for t := week.Add(-warmpolicy.SlotLength); t.Before(week.Add(45 * time.Minute)); t = t.Add(warmpolicy.SlotLength) {
			h.Observe(t, learnedExecutors, learnedExecutors, learnedExecutors)
		}
	}
	return h
}

// scenarioLearnedWarmLevel: a Learned pool's PoolCapacity asks the
// capacity provider for a learned level with the settings' target and
// lead; its demand history, seeded into status.atProvider.demand as the
// provider keeps it across restarts, says that learnedExecutors
// executors start cold around now each week; the provider publishes a
// recommendation from it, which reaches the pool's warm slots (the
// PoolCapacity's and the placeholders') and its status, with source
// Learned and the recommendation's reason.
func scenarioLearnedWarmLevel(t *testing.T, ctx context.Context, e *env) {
	s, c := e.Stack, e.Client
	p := warmPool{burst: newBurst(t, ctx, e), s: s}
	p.create(t, ctx)
	p.apply(t, ctx, "    type: Learned\n")
	var seen warmSeen
	eventually(t, waitStatus, "the Learned pool holds minExecutors until a level is learned", p.holding(1, poolv1.WarmFromMinExecutors, "", &seen))
	name := p.pool + "-capacity"
	// The claim may show the Static pool's minExecutors a moment before
	// Crossplane applies the Learned one's PoolCapacity.
	var pc *unstructured.Unstructured
	eventually(t, waitStatus, "the PoolCapacity asks for the settings' learned goal", func(ctx context.Context) (bool, error) {
		var err error
		pc, err = s.Get(ctx, gvk(capacityAPI, "PoolCapacity"), "", name)
		if err != nil {
			return false, err
		}
		goal, _, _ := unstructured.NestedMap(pc.Object, "spec", "forProvider", "warmPolicy", "learned")
		return goal["targetWarmPercent"] == int64(90) && goal["lead"] == warmLead.String(),
			fmt.Errorf("PoolCapacity %s asks for the learned goal %v, want the settings' default target 90 and lead %s", name, goal, warmLead)
	})

	// The history, as the provider would have recorded it, once the
	// provider keeps one for the pool (so that its first write does not
	// replace the seed).
	eventually(t, waitStatus, "the provider keeps the pool's demand history", func(ctx context.Context) (bool, error) {
		o, err := observation(ctx, c, name)
		return err == nil && o.Demand != nil, fmt.Errorf("status.atProvider.demand %+v (%v)", o.Demand, err)
	})
	now := time.Now().UTC()
	seed := seededHistory(now)
	patch := fmt.Sprintf(`{"status":{"atProvider":{"demand":{"encoded":%q,"since":%q,"weeks":%d}}}}`,
		seed.Encode(), now.Add(-learnedWeeks*7*24*time.Hour).Truncate(time.Second).Format(time.RFC3339), learnedWeeks)
	pc.SetAPIVersion(capacityAPI)
	if err := c.Status().Patch(ctx, pc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("cannot seed the demand history of PoolCapacity %s: %v", name, err)
	}
	t.Logf("seeded %d weeks of demand history (%d executors wanted and started cold around %s each week)", learnedWeeks, learnedExecutors, now.Format("Mon 15:04"))

	var rec string
	took := eventually(t, waitStatus, "the provider's recommendation reaches the pool's warm slots and status", func(ctx context.Context) (bool, error) {
		o, err := observation(ctx, c, name)
		if err != nil {
			return false, err
		}
		if r := o.WarmRecommendation; r != nil {
			rec = fmt.Sprintf("%d executors until %s (%d weeks, expected %d%% warm): %s", r.Executors, r.Until.Format(time.TimeOnly), r.Weeks, r.ExpectedWarmPercent, r.Reason)
		}
		return p.holding(learnedExecutors, poolv1.WarmFromLearned, "of history", &seen)(ctx)
	})
	t.Logf("recommendation %s -> the pool's warm slots after %s: %s", rec, took.Round(time.Second), seen)
	if seen.Policy.Until == nil {
		t.Errorf("status.warmPolicy.until is empty: it should say when the learned level is revised")
	}
	eventually(t, waitNodes, "a Ready pool node for each learned warm slot", func(ctx context.Context) (bool, error) {
		nodes := nodeNames(readyNodes(poolNodes(t, ctx, c, p.pool)))
		return len(nodes) == learnedExecutors, fmt.Errorf("ready pool nodes %v", nodes)
	})
}
