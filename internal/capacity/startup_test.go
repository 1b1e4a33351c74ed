package capacity

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

const (
	imgA = "registry.example/engine:1"
	imgB = "registry.example/helper:2"
)

var warmingTaint = Taint{Key: qsv1alpha1.TaintWarming, Value: "analytics", Effect: string(corev1.TaintEffectNoSchedule)}

// withStartup asks for nodes to be opened once imgA and imgB are warm, or
// after 5 minutes.
func withStartup(p *v1alpha1.PoolCapacityParameters) {
	p.Startup = &v1alpha1.Startup{
		Taint:     corev1.Taint{Key: warmingTaint.Key, Value: warmingTaint.Value, Effect: corev1.TaintEffectNoSchedule},
		Images:    []string{imgA, imgB},
		OpenAfter: metav1.Duration{Duration: 5 * time.Minute},
	}
}

// warming is a Ready pool node created at created that still carries the
// startup taint, as the watch sees it (not Schedulable, the taint listed).
func warming(name string, created time.Time) *Node {
	n := node(name, "analytics", true)
	n.Schedulable, n.Taints, n.Created, n.ResourceVersion = false, []Taint{warmingTaint}, created, "rv-"+name
	return n
}

func TestOpenings(t *testing.T) {
	now := t0.Add(2 * time.Minute)
	type want struct {
		open    []Opening
		warming int32
	}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.PoolCapacityParameters
		pods   []*Pod
		nodes  []*Node
		want   want
	}{
		"NoStartup": {
			reason: "A pool without startup settings opens nothing, even a node that carries the taint.",
			spec:   params(),
			nodes:  []*Node{warming("n1", t0)},
		},
		"WarmNodeOpens": {
			reason: "A node with a running warmup pod of every warm image is opened.",
			spec:   params(withStartup),
			pods:   []*Pod{warmPod("w1", "analytics", imgA, "n1"), warmPod("w2", "analytics", imgB, "n1")},
			nodes:  []*Node{warming("n1", t0)},
			want:   want{open: []Opening{{Node: "n1", Taint: warmingTaint, Waited: 2 * time.Minute}}},
		},
		"PullingNodeWaits": {
			reason: "A warmup pod still pulling (Pending: its pull init container runs) leaves its image cold, so the node stays closed within the bound.",
			spec:   params(withStartup),
			pods:   []*Pod{warmPod("w1", "analytics", imgA, "n1"), warmPod("w2", "analytics", imgB, "n1", state(PodPending))},
			nodes:  []*Node{warming("n1", t0)},
			want:   want{warming: 1},
		},
		"WarmElsewhereIsNotWarmHere": {
			reason: "An image warm on another node does not warm this one.",
			spec:   params(withStartup),
			pods:   []*Pod{warmPod("w1", "analytics", imgA, "n1"), warmPod("w2", "analytics", imgB, "n2")},
			nodes:  []*Node{warming("n1", t0)},
			want:   want{warming: 1},
		},
		"ForeignWarmupPodDoesNotCount": {
			reason: "A pod with the warmup labels outside the pool's namespace is anyone's: it warms nothing.",
			spec:   params(withStartup),
			pods:   []*Pod{warmPod("w1", "analytics", imgA, "n1"), warmPod("w2", "analytics", imgB, "n1", func(p *Pod) { p.Namespace = "intruder" })},
			nodes:  []*Node{warming("n1", t0)},
			want:   want{warming: 1},
		},
		"BoundOpensCold": {
			reason: "A node older than openAfter is opened whatever is warm, naming the images that are not.",
			spec:   params(withStartup),
			pods:   []*Pod{warmPod("w1", "analytics", imgA, "n1")},
			nodes:  []*Node{warming("n1", now.Add(-5*time.Minute))},
			want:   want{open: []Opening{{Node: "n1", Taint: warmingTaint, Waited: 5 * time.Minute, Cold: []string{imgB}}}},
		},
		"NotReadyNodeWaits": {
			reason: "A node that is not Ready runs no pods yet: it stays closed, past the bound too, and counts as warming.",
			spec:   params(withStartup),
			nodes:  []*Node{func() *Node { n := warming("n1", now.Add(-time.Hour)); n.Ready = false; return n }()},
			want:   want{warming: 1},
		},
		"OpenNodeIsLeftAlone": {
			reason: "A node without the startup taint is open already.",
			spec:   params(withStartup),
			nodes:  []*Node{node("n1", "analytics", true)},
		},
		"OtherTaintIsNotTheStartupTaint": {
			reason: "A taint with the startup key but another pool's value is not this pool's to remove.",
			spec:   params(withStartup),
			pods:   []*Pod{warmPod("w1", "analytics", imgA, "n1"), warmPod("w2", "analytics", imgB, "n1")},
			nodes: []*Node{func() *Node {
				n := warming("n1", t0)
				n.Taints = []Taint{{Key: qsv1alpha1.TaintWarming, Value: "other", Effect: "NoSchedule"}}
				return n
			}()},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			got.open, got.warming = openings(tc.spec, NewSnapshot(tc.pods, tc.nodes), "analytics", now)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// placeholder is a pool placeholder pod, gated unless opts say otherwise.
func placeholder(name string, opts ...podOpt) *Pod {
	p := &Pod{
		Namespace: "team-a", Name: name, UID: "uid-" + name, Pool: "analytics", ResourceVersion: "rv-" + name,
		Labels: map[string]string{
			qsv1alpha1.LabelPool:      "analytics",
			qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder,
		},
		State: PodPending, Started: t0, Gates: []string{qsv1alpha1.GateWarmSlot},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func ungated(p *Pod) { p.Gates = nil }

// withWarmSlots holds n warm slots.
func withWarmSlots(n int32) func(*v1alpha1.PoolCapacityParameters) {
	return func(p *v1alpha1.PoolCapacityParameters) {
		p.WarmSlots = &v1alpha1.WarmSlots{
			Selector: map[string]string{qsv1alpha1.LabelPool: "analytics", qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder},
			Gate:     qsv1alpha1.GateWarmSlot, Slots: n,
		}
	}
}

func release(name string) Ungate {
	return Ungate{Pod: PodKey{Namespace: "team-a", Name: name}, UID: "uid-" + name, Gate: qsv1alpha1.GateWarmSlot}
}

func TestUngates(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   v1alpha1.PoolCapacityParameters
		pods   []*Pod
		want   []Ungate
	}{
		"NoWarmSlots": {
			reason: "A pool without warmSlots releases nothing.",
			spec:   params(),
			pods:   []*Pod{placeholder("p1")},
		},
		"ReleaseUpToSlots": {
			reason: "Two warm slots and three gated placeholders: the two oldest are released.",
			spec:   params(withWarmSlots(2)),
			pods: []*Pod{placeholder("p3", started(t0.Add(2*time.Second))), placeholder("p1"),
				placeholder("p2", started(t0.Add(time.Second)))},
			want: []Ungate{release("p1"), release("p2")},
		},
		"HeldSlotsCount": {
			reason: "A bound placeholder and an ungated pending one hold two of three slots: one more is released.",
			spec:   params(withWarmSlots(3)),
			pods:   []*Pod{placeholder("p1", ungated, running("n1")), placeholder("p2", ungated), placeholder("p3"), placeholder("p4")},
			want:   []Ungate{release("p3")},
		},
		"PreemptedSlotStaysGated": {
			reason: "An executor preempted a placeholder and runs in its slot; the ReplicaSet's replacement stays gated, since the pool is giving that slot back.",
			spec:   params(withWarmSlots(2)),
			pods: []*Pod{executor("team-a", "e1", "analytics", "sales", running("n1")),
				placeholder("p1", ungated, running("n2")), placeholder("p2")},
		},
		"ExecutorAboutToBindCounts": {
			reason: "The preemptor is still unbound while its victim goes: it counts as holding the slot, so the replacement stays gated.",
			spec:   params(withWarmSlots(2)),
			pods: []*Pod{executor("team-a", "e1", "analytics", "sales"),
				placeholder("p0", ungated, running("n1"), state(PodDeleted)), placeholder("p1", ungated, running("n2")), placeholder("p2")},
		},
		"RefillAfterBurst": {
			reason: "Once the executors are gone, gated placeholders are released to refill every slot.",
			spec:   params(withWarmSlots(2)),
			pods:   []*Pod{placeholder("p1"), placeholder("p2")},
			want:   []Ungate{release("p1"), release("p2")},
		},
		"Suspended": {
			reason: "A suspended pool holds no warm slots.",
			spec:   params(withWarmSlots(2), func(p *v1alpha1.PoolCapacityParameters) { p.Suspend = true }),
			pods:   []*Pod{placeholder("p1")},
		},
		"ForeignWaitingExecutorTakesNoSlot": {
			reason: "A pod with the pool's executor labels, aimed at its nodes, in a namespace no attached QueryService is in, is anyone's: it does not lower the slots the pool wants.",
			spec:   params(withWarmSlots(1)),
			pods:   []*Pod{executor("intruder", "e1", "analytics", "sales"), placeholder("p1")},
			want:   []Ungate{release("p1")},
		},
		"ForeignPlaceholder": {
			reason: "A pod with the placeholder labels outside the pool's namespace is not the pool's.",
			spec:   params(withWarmSlots(1)),
			pods:   []*Pod{placeholder("p1", func(p *Pod) { p.Namespace = "intruder" })},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := NewSnapshot(tc.pods, []*Node{node("n1", "analytics", true), node("n2", "analytics", true)})
			res := Compute(tc.spec, snap, v1alpha1.PoolCapacityObservation{}, t0)
			if diff := cmp.Diff(tc.want, res.Ungate, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// withBuffer names the pool's CapacityBuffer, holding the slots or not.
func withBuffer(holds bool) func(*v1alpha1.PoolCapacityParameters) {
	return func(p *v1alpha1.PoolCapacityParameters) {
		p.WarmSlots.CapacityBuffer = &v1alpha1.WarmBuffer{Name: "analytics-warm-slots", Holds: holds}
	}
}

func TestBufferScale(t *testing.T) {
	scale := func(n int32) *BufferScale {
		return &BufferScale{Namespace: "team-a", Name: "analytics-warm-slots", Replicas: n}
	}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.PoolCapacityParameters
		pods   []*Pod
		want   *BufferScale
	}{
		"NoBuffer": {
			reason: "Placeholders hold the slots: no buffer to scale.",
			spec:   params(withWarmSlots(2)),
		},
		"IdleHoldsEverySlot": {
			reason: "No executor: the buffer asks for every slot.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
			want:   scale(2),
		},
		"ExecutorCreatedLowersAtOnce": {
			reason: "An executor just created, not yet bound, is about to take a slot: the buffer gives it up now, before an autoscaler restores it on a new node.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", func(p *Pod) { p.Unschedulable = false })},
			want:   scale(1),
		},
		"RunningExecutorsHoldTheirSlots": {
			reason: "Two executors run on the pool: the buffer asks for nothing.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", running("n1")), executor("team-b", "e2", "analytics", "ads", running("n2"))},
			want:   scale(0),
		},
		"BurstBeyondSlots": {
			reason: "More executors than slots: never below 0.",
			spec:   params(withWarmSlots(1), withBuffer(true)),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", running("n1")), executor("team-a", "e2", "analytics", "sales")},
			want:   scale(0),
		},
		"ForeignWaitingExecutor": {
			reason: "A pending pod with the pool's executor labels in a namespace no attached QueryService is in does not empty the buffer.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
			pods:   []*Pod{executor("intruder", "e1", "analytics", "sales"), executor("intruder", "e2", "analytics", "sales")},
			want:   scale(2),
		},
		"UnplaceableWaitersLeaveTheBuffer": {
			reason: "Hostile tenant: executors of an attached QueryService that ask for the pool with a node selector no pool node matches will never take a slot, so the buffer keeps every slot.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", extraSelector), executor("team-a", "e2", "analytics", "sales", extraSelector, gatedAt(t0))},
			want:   scale(2),
		},
		"PlaceholdersStillHoldSlots": {
			reason: "The buffer takes over from placeholders: one still runs, so the buffer asks for the other slot only, and no node is launched for a slot a placeholder holds.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
			pods:   []*Pod{placeholder("p1", ungated, running("n1"))},
			want:   scale(1),
		},
		"PlaceholdersLeavingStillTakeRoom": {
			reason: "At the switch the placeholders terminate: until they are gone their nodes have no room, so the buffer does not ask for it yet.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
			pods:   []*Pod{placeholder("p1", ungated, running("n1"), state(PodDeleted)), placeholder("p2", ungated, running("n2"))},
			want:   scale(0),
		},
		"ExecutorsLeavingStillTakeRoom": {
			reason: "The burst ends: executors terminating on pool nodes hold no slot, but the buffer asks for their room only once they are gone.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", running("n1"), state(PodDeleted)), executor("team-a", "e2", "analytics", "sales", running("n2"))},
			want:   scale(0),
		},
		"LeavingElsewhereTakesNoRoom": {
			reason: "An executor terminating on a node that is not the pool's takes none of its room.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", running("other"), state(PodDeleted))},
			want:   scale(2),
		},
		"ProbeAsksForNothing": {
			reason: "A buffer that does not hold the slots (placeholders do) is kept at 0.",
			spec:   params(withWarmSlots(2), withBuffer(false)),
			want:   scale(0),
		},
		"Suspended": {
			reason: "A suspended pool holds no warm slots.",
			spec:   params(withWarmSlots(2), withBuffer(true), func(p *v1alpha1.PoolCapacityParameters) { p.Suspend = true }),
			want:   scale(0),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := NewSnapshot(tc.pods, []*Node{node("n1", "analytics", true), node("n2", "analytics", true)})
			res := Compute(tc.spec, snap, v1alpha1.PoolCapacityObservation{}, t0)
			if diff := cmp.Diff(tc.want, res.Buffer); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestOpenedCold(t *testing.T) {
	now := t0.Add(time.Hour)
	old := v1alpha1.ColdNode{Node: "n1", Images: []string{imgA}, OpenedAt: mt(t0)}
	gone := v1alpha1.ColdNode{Node: "gone", Images: []string{imgA}, OpenedAt: mt(t0)}
	cases := map[string]struct {
		reason string
		open   []Opening
		prev   []v1alpha1.ColdNode
		want   []v1alpha1.ColdNode
	}{
		"WarmOpeningIsNotListed": {
			reason: "A node opened warm is not listed.",
			open:   []Opening{{Node: "n2"}},
			prev:   []v1alpha1.ColdNode{old},
			want:   []v1alpha1.ColdNode{old},
		},
		"ColdOpeningFirst": {
			reason: "A node opened cold now is listed first; a listed node that is gone is dropped.",
			open:   []Opening{{Node: "n2", Cold: []string{imgB}}},
			prev:   []v1alpha1.ColdNode{old, gone},
			want:   []v1alpha1.ColdNode{{Node: "n2", Images: []string{imgB}, OpenedAt: mt(now)}, old},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := NewSnapshot(nil, []*Node{node("n1", "analytics", true), node("n2", "analytics", true)})
			got := openedCold(tc.open, tc.prev, snap, "analytics", now)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// gatedAt has the executor wait at the buffer's executor gate since at.
func gatedAt(at time.Time) podOpt {
	return func(p *Pod) {
		p.Gates = append(p.Gates, qsv1alpha1.GateExecutor)
		p.Created, p.Unschedulable = at, false
	}
}

// withExecutorGate names the buffer's executor gate.
func withExecutorGate(p *v1alpha1.PoolCapacityParameters) {
	p.ExecutorGate = qsv1alpha1.GateExecutor
}

func TestExecutorGate(t *testing.T) {
	scale := func(n int32) *BufferScale {
		return &BufferScale{Namespace: "team-a", Name: "analytics-warm-slots", Replicas: n}
	}
	let := func(ns, name string) Ungate {
		return Ungate{Pod: PodKey{Namespace: ns, Name: name}, UID: "uid-" + name, Gate: qsv1alpha1.GateExecutor}
	}
	sel := map[string]string{qsv1alpha1.LabelPool: "analytics", qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool}
	bound := &ExecutorGate{Gate: qsv1alpha1.GateExecutor, Namespaces: []string{"team-a", "team-b"}, Selector: sel}
	cases := map[string]struct {
		reason      string
		spec        v1alpha1.PoolCapacityParameters
		pods        []*Pod
		wantGate    *ExecutorGate
		wantRelease *Release
	}{
		"NoGateNamed": {
			reason: "A buffer that names no executor gate binds none.",
			spec:   params(withWarmSlots(2), withBuffer(true)),
		},
		"BoundForAttachedNamespaces": {
			reason:   "The buffer holds the slots: executors created in the attached QueryServices' namespaces are gated, and none waits yet.",
			spec:     params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			wantGate: bound,
		},
		"WaitsForTheAutoscaler": {
			reason:   "An executor just created waits until the buffer's autoscaler reports the count that leaves its slot (1), or the bound after its creation.",
			spec:     params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			pods:     []*Pod{executor("team-a", "e1", "analytics", "sales", gatedAt(t0.Add(-time.Second)))},
			wantGate: bound,
			wantRelease: &Release{Buffered: []Ungate{let("team-a", "e1")}, Buffer: scale(1),
				Until: t0.Add(-time.Second).Add(ExecutorGateBound)},
		},
		"BurstWaitsTogether": {
			reason:   "A burst of both slots: both wait for the autoscaler to report 0; the first of them to reach the bound sets when.",
			spec:     params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			pods:     []*Pod{executor("team-b", "e2", "analytics", "ads", gatedAt(t0)), executor("team-a", "e1", "analytics", "sales", gatedAt(t0.Add(-3*time.Second)))},
			wantGate: bound,
			wantRelease: &Release{Buffered: []Ungate{let("team-a", "e1"), let("team-b", "e2")}, Buffer: scale(0),
				Until: t0.Add(-3 * time.Second).Add(ExecutorGateBound)},
		},
		"BoundReached": {
			reason:      "An executor that has waited the bound goes, whatever the autoscaler reports.",
			spec:        params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			pods:        []*Pod{executor("team-a", "e1", "analytics", "sales", gatedAt(t0.Add(-ExecutorGateBound)))},
			wantGate:    bound,
			wantRelease: &Release{Now: []Ungate{let("team-a", "e1")}},
		},
		"ForeignNamespaceGoesAtOnce": {
			reason:      "A gated pod of a namespace no attached QueryService is in takes no warm slot: it goes at once (a QueryService detached while its executor waited).",
			spec:        params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			pods:        []*Pod{executor("intruder", "e1", "analytics", "sales", gatedAt(t0))},
			wantGate:    bound,
			wantRelease: &Release{Now: []Ungate{let("intruder", "e1")}},
		},
		"BufferStoppedHolding": {
			reason:      "Placeholders hold the slots again: no gate, and executors still gated go at once.",
			spec:        params(withWarmSlots(2), withBuffer(false)),
			pods:        []*Pod{executor("team-a", "e1", "analytics", "sales", gatedAt(t0))},
			wantRelease: &Release{Now: []Ungate{let("team-a", "e1")}},
		},
		"Suspended": {
			reason:      "A suspended pool holds no warm slots: no gate, nobody waits.",
			spec:        params(withWarmSlots(2), withBuffer(true), withExecutorGate, func(p *v1alpha1.PoolCapacityParameters) { p.Suspend = true }),
			pods:        []*Pod{executor("team-a", "e1", "analytics", "sales", gatedAt(t0))},
			wantRelease: &Release{Now: []Ungate{let("team-a", "e1")}},
		},
		"ShareHoldsTheReplacement": {
			reason: "Shares are enforced and the pool is full: sales is at its share while ads waits below its own, so sales' new executor (the replacement of one evicted for ads) stays at the gate, or it would take the slot the eviction freed.",
			spec:   params(shares(1, 1), withExecutorGate, maxExecutors(2)),
			pods: []*Pod{executor("team-a", "e0", "analytics", "sales", running("n1")), executor("team-a", "e1", "analytics", "sales", running("n1")),
				executor("team-a", "e2", "analytics", "sales", gatedAt(t0)), executor("team-b", "w1", "analytics", "ads")},
			wantGate: bound,
		},
		"ForeignWaiterHoldsNobody": {
			reason: "Hostile tenant: a pending pod with ads' labels in a namespace no attached QueryService is in is not ads waiting, so sales' new executor is not held back for it.",
			spec:   params(shares(1, 1), withExecutorGate, maxExecutors(2)),
			pods: []*Pod{executor("team-a", "e0", "analytics", "sales", running("n1")), executor("team-a", "e1", "analytics", "sales", running("n1")),
				executor("team-a", "e2", "analytics", "sales", gatedAt(t0)), executor("intruder", "w1", "analytics", "ads")},
			wantGate:    bound,
			wantRelease: &Release{Now: []Ungate{let("team-a", "e2")}},
		},
		"UnplaceableWaiterHoldsNobody": {
			reason: "Hostile tenant: ads' waiting executors ask for the pool with a node selector no pool node matches; they wait for nothing the pool can give, so sales' new executor is not held back for them.",
			spec:   params(shares(1, 1), withExecutorGate, maxExecutors(2)),
			pods: []*Pod{executor("team-a", "e0", "analytics", "sales", running("n1")), executor("team-a", "e1", "analytics", "sales", running("n1")),
				executor("team-a", "e2", "analytics", "sales", gatedAt(t0)), executor("team-b", "w1", "analytics", "ads", extraSelector), executor("team-b", "w2", "analytics", "ads", extraSelector)},
			wantGate:    bound,
			wantRelease: &Release{Now: []Ungate{let("team-a", "e2")}},
		},
		"ShareReleasedOnceTheWaiterIsPlaced": {
			reason:      "ads' executor took the freed slot: nobody below its share waits, sales' replacement goes (and waits for a slot as any executor).",
			spec:        params(shares(1, 1), withExecutorGate, maxExecutors(2)),
			pods:        []*Pod{executor("team-a", "e1", "analytics", "sales", running("n1")), executor("team-a", "e2", "analytics", "sales", gatedAt(t0)), executor("team-b", "w1", "analytics", "ads", running("n2"))},
			wantGate:    bound,
			wantRelease: &Release{Now: []Ungate{let("team-a", "e2")}},
		},
		"ShareBelowGoesAtOnce": {
			reason:      "ads is below its share: its new executor goes at once, whoever waits.",
			spec:        params(shares(1, 1), withExecutorGate, maxExecutors(2)),
			pods:        []*Pod{executor("team-a", "e1", "analytics", "sales", running("n1")), executor("team-a", "e2", "analytics", "sales", running("n2")), executor("team-b", "w1", "analytics", "ads", gatedAt(t0))},
			wantGate:    bound,
			wantRelease: &Release{Now: []Ungate{let("team-b", "w1")}},
		},
		"ShareRoomForEveryone": {
			reason:      "The pool has free slots for the waiter: nobody is evicted for it, and sales' new executor goes.",
			spec:        params(shares(1, 1), withExecutorGate),
			pods:        []*Pod{executor("team-a", "e1", "analytics", "sales", running("n1")), executor("team-a", "e2", "analytics", "sales", gatedAt(t0)), executor("team-b", "w1", "analytics", "ads")},
			wantGate:    bound,
			wantRelease: &Release{Now: []Ungate{let("team-a", "e2")}},
		},
		"SharesWithoutGate": {
			reason: "Shares enforced, but the spec names no executor gate: none is bound.",
			spec:   params(shares(1, 1)),
		},
		"BoundExecutorIsNotWaiting": {
			reason:   "A running executor is past the gate.",
			spec:     params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			pods:     []*Pod{executor("team-a", "e1", "analytics", "sales", running("n1"))},
			wantGate: bound,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			snap := NewSnapshot(tc.pods, []*Node{node("n1", "analytics", true), node("n2", "analytics", true)})
			res := Compute(tc.spec, snap, v1alpha1.PoolCapacityObservation{}, t0)
			if diff := cmp.Diff(tc.wantGate, res.Gate); diff != "" {
				t.Errorf("%s\ngate -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantRelease, res.Release); diff != "" {
				t.Errorf("%s\nrelease -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func maxExecutors(n int32) func(*v1alpha1.PoolCapacityParameters) {
	return func(p *v1alpha1.PoolCapacityParameters) { p.MaxExecutors = n }
}
