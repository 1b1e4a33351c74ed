package capacity

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// TestOverdue: executors still at the executor gate past its bound plus
// the slack, and Ready pool nodes still closed past openAfter plus the
// slack, are counted in status.atProvider.overdue; those within their
// bound, those the pool holds back on purpose, and pods anyone may create
// elsewhere are not.
func TestOverdue(t *testing.T) {
	now := t0
	pastDue := ExecutorGateBound + OverdueSlack + time.Second
	nodePastDue := 5*time.Minute + OverdueSlack + time.Second
	ready := []*Node{node("n1", "analytics", true), node("n2", "analytics", true)}
	deleting := func(n *Node) *Node { n.Deleting = true; return n }
	notReady := func(n *Node) *Node { n.Ready = false; return n }
	many := func(n int) []*Node {
		var out []*Node
		for i := range n {
			out = append(out, warming(fmt.Sprintf("w%02d", i), now.Add(-nodePastDue-time.Duration(i)*time.Second)))
		}
		return out
	}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.PoolCapacityParameters
		pods   []*Pod
		nodes  []*Node
		want   *v1alpha1.Overdue
	}{
		"NothingWaits": {
			reason: "No executor at the gate and no node closed: nothing is overdue.",
			spec:   params(withWarmSlots(2), withBuffer(true), withExecutorGate, withStartup),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", running("n1"))},
			nodes:  ready,
		},
		"GatedWithinBound": {
			reason: "An executor waiting for the buffer's autoscaler within ExecutorGateBound is on time.",
			spec:   params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", gatedAt(now.Add(-5*time.Second)))},
			nodes:  ready,
		},
		"GatedWithinSlack": {
			reason: "Past the bound but within the slack, the release is still on its way: not overdue.",
			spec:   params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", gatedAt(now.Add(-ExecutorGateBound-OverdueSlack)))},
			nodes:  ready,
		},
		"GatedPastBoundAndSlack": {
			reason: "Executors of both attached namespaces still gated past the bound and the slack: the release is failing.",
			spec:   params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			pods: []*Pod{executor("team-a", "e1", "analytics", "sales", gatedAt(now.Add(-pastDue))),
				executor("team-b", "e2", "analytics", "ads", gatedAt(now.Add(-time.Hour))),
				executor("team-a", "e3", "analytics", "sales", gatedAt(now.Add(-time.Second)))},
			nodes: ready,
			want:  &v1alpha1.Overdue{Executors: 2},
		},
		"GatedAfterTheBufferStoppedHolding": {
			reason: "The buffer no longer holds the slots, so the executor goes at once; still gated long after: overdue.",
			spec:   params(withWarmSlots(2), withBuffer(false)),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", gatedAt(now.Add(-pastDue)))},
			nodes:  ready,
			want:   &v1alpha1.Overdue{Executors: 1},
		},
		"HeldForShares": {
			reason: "An executor held back for another QueryService's share waits on purpose, with no bound: not overdue.",
			spec:   params(shares(1, 1), withExecutorGate, maxExecutors(2)),
			pods: []*Pod{executor("team-a", "e0", "analytics", "sales", running("n1")), executor("team-a", "e1", "analytics", "sales", running("n1")),
				executor("team-a", "e2", "analytics", "sales", gatedAt(now.Add(-time.Hour))), executor("team-b", "w1", "analytics", "ads")},
			nodes: ready,
		},
		"ForeignNamespaceCountsForNothing": {
			reason: "Hostile tenant: a gated pod with the pool's labels in a namespace no attached QueryService is in moves no counter.",
			spec:   params(withWarmSlots(2), withBuffer(true), withExecutorGate),
			pods:   []*Pod{executor("intruder", "e1", "analytics", "sales", gatedAt(now.Add(-time.Hour)))},
			nodes:  ready,
		},
		"NodeWithinOpenAfter": {
			reason: "A node warming within openAfter is on time.",
			spec:   params(withStartup),
			nodes:  []*Node{warming("n1", now.Add(-4*time.Minute))},
		},
		"NodeWithinSlack": {
			reason: "A node just past openAfter is opened on this reconcile: not overdue yet.",
			spec:   params(withStartup),
			nodes:  []*Node{warming("n1", now.Add(-5*time.Minute-OverdueSlack))},
		},
		"NodePastOpenAfterAndSlack": {
			reason: "Ready nodes still tainted past openAfter and the slack, cold or warm, are overdue, longest closed first.",
			spec:   params(withStartup),
			pods:   []*Pod{warmPod("a", "analytics", imgA, "n2"), warmPod("b", "analytics", imgB, "n2")},
			nodes:  []*Node{warming("n1", now.Add(-nodePastDue)), warming("n2", now.Add(-time.Hour)), warming("n3", now.Add(-time.Minute))},
			want:   &v1alpha1.Overdue{Nodes: 2, NodeNames: []string{"n2", "n1"}},
		},
		"NodeNotReadyOrGoing": {
			reason: "A node not Ready, or being deleted, cannot take executors whatever its taint: not overdue.",
			spec:   params(withStartup),
			nodes:  []*Node{notReady(warming("n1", now.Add(-time.Hour))), deleting(warming("n2", now.Add(-time.Hour)))},
		},
		"NoStartup": {
			reason: "A pool without startup settings opens nothing, so nothing of it is overdue.",
			spec:   params(),
			nodes:  []*Node{warming("n1", now.Add(-time.Hour))},
		},
		"NodeNamesBounded": {
			reason: "Twelve overdue nodes: all counted, the ten closed longest named.",
			spec:   params(withStartup),
			nodes:  many(12),
			want:   &v1alpha1.Overdue{Nodes: 12, NodeNames: []string{"w11", "w10", "w09", "w08", "w07", "w06", "w05", "w04", "w03", "w02"}},
		},
		"Both": {
			reason: "An executor and a node overdue at once are both counted.",
			spec:   params(withWarmSlots(2), withBuffer(true), withExecutorGate, withStartup),
			pods:   []*Pod{executor("team-a", "e1", "analytics", "sales", gatedAt(now.Add(-pastDue)))},
			nodes:  append(ready, warming("n3", now.Add(-nodePastDue))),
			want:   &v1alpha1.Overdue{Executors: 1, Nodes: 1, NodeNames: []string{"n3"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := Compute(tc.spec, NewSnapshot(tc.pods, tc.nodes), v1alpha1.PoolCapacityObservation{}, now)
			if diff := cmp.Diff(tc.want, res.Observation.Overdue); diff != "" {
				t.Errorf("%s\noverdue -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
