package capacity

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// extraSelector adds to an executor's node selector a label no pool node
// carries: it asks for the pool's nodes and could run on none of them.
func extraSelector(p *Pod) { p.Aim.NodeSelector["e6data.io/x"] = "y" }

// requires gives an executor the required node-affinity terms ts.
func requires(ts ...Term) podOpt { return func(p *Pod) { p.Aim.Affinity = ts } }

// tolerating gives an executor the tolerations tols.
func tolerating(tols ...corev1.Toleration) podOpt {
	return func(p *Pod) { p.Aim.Tolerations = tols }
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) Requirement {
	return Requirement{Key: key, Operator: op, Values: values}
}

// zoned is a Ready pool node in zone z.
func zoned(name, z string, taints ...Taint) *Node {
	n := node(name, "analytics", true)
	n.Labels["topology.kubernetes.io/zone"], n.Labels["cpu-count"] = z, "16"
	n.Taints = taints
	return n
}

// TestUnplaceable checks which pending executors that ask for the pool's
// nodes could run on one of them were there room, and so wait for the
// pool: their node selector, required node affinity and tolerations, on
// the pool's current nodes (their startup taint aside), or on the labels
// every pool node carries while it has none.
func TestUnplaceable(t *testing.T) {
	dedicated := Taint{Key: "dedicated", Value: "gpu", Effect: string(corev1.TaintEffectNoSchedule)}
	nodes := []*Node{zoned("n1", "a"), zoned("n2", "b")}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.PoolCapacityParameters
		nodes  []*Node
		opts   []podOpt
		// want is the reason the executor is listed for; empty when it
		// waits for the pool.
		want string
	}{
		"PoolSelectorOnly": {
			reason: "An executor that asks for the pool's labels alone could run on any pool node.",
			nodes:  nodes,
		},
		"ExtraSelector": {
			reason: "Hostile tenant: a node selector label no pool node carries.",
			nodes:  nodes, opts: []podOpt{extraSelector},
			want: "nodeSelector e6data.io/x=y matches no pool node",
		},
		"SelectorOfOneNode": {
			reason: "A node selector one pool node matches.",
			nodes:  nodes, opts: []podOpt{func(p *Pod) { p.Aim.NodeSelector["topology.kubernetes.io/zone"] = "b" }},
		},
		"AffinityIn": {
			reason: "Hostile tenant: a required In on a zone no pool node is in.",
			nodes:  nodes, opts: []podOpt{requires(Term{req("topology.kubernetes.io/zone", corev1.NodeSelectorOpIn, "c", "d")})},
			want: "required node affinity topology.kubernetes.io/zone In [c,d] matches no pool node",
		},
		"AffinityNotInEveryZone": {
			reason: "Hostile tenant: NotIn every zone the pool's nodes are in.",
			nodes:  nodes, opts: []podOpt{requires(Term{req("topology.kubernetes.io/zone", corev1.NodeSelectorOpNotIn, "a", "b")})},
			want: "required node affinity topology.kubernetes.io/zone NotIn [a,b] matches no pool node",
		},
		"AffinityDoesNotExist": {
			reason: "Hostile tenant: requires that the pool label be absent, which the node selector requires present.",
			nodes:  nodes, opts: []podOpt{requires(Term{req(qsv1alpha1.LabelPool, corev1.NodeSelectorOpDoesNotExist)})},
			want: "required node affinity e6data.io/pool DoesNotExist matches no pool node",
		},
		"AffinityExists": {
			reason: "Exists on a label pool nodes carry.",
			nodes:  nodes, opts: []podOpt{requires(Term{req("topology.kubernetes.io/zone", corev1.NodeSelectorOpExists)})},
		},
		"AffinityGt": {
			reason: "Gt compares integers: 16 > 8 holds, 16 > 32 does not.",
			nodes:  nodes, opts: []podOpt{requires(Term{req("cpu-count", corev1.NodeSelectorOpGt, "8")})},
		},
		"AffinityGtTooLarge": {
			reason: "No pool node has more than 32 CPUs.",
			nodes:  nodes, opts: []podOpt{requires(Term{req("cpu-count", corev1.NodeSelectorOpGt, "32")})},
			want: "required node affinity cpu-count Gt [32] matches no pool node",
		},
		"TermsOred": {
			reason: "Terms are ORed: one that a pool node matches is enough.",
			nodes:  nodes, opts: []podOpt{requires(Term{req("topology.kubernetes.io/zone", corev1.NodeSelectorOpIn, "c")}, Term{req("topology.kubernetes.io/zone", corev1.NodeSelectorOpIn, "b")})},
		},
		"NoTermMatches": {
			reason: "Hostile tenant: two terms, neither of which a pool node matches.",
			nodes:  nodes, opts: []podOpt{requires(Term{req("topology.kubernetes.io/zone", corev1.NodeSelectorOpIn, "c")}, Term{req("e6data.io/x", corev1.NodeSelectorOpExists)})},
			want: "required node affinity matches no pool node",
		},
		"EmptyTerm": {
			reason: "A term without requirements matches no node.",
			nodes:  nodes, opts: []podOpt{requires(Term{})},
			want: "required node affinity matches no pool node",
		},
		"FieldName": {
			reason: "matchFields metadata.name In a pool node's name.",
			nodes:  nodes, opts: []podOpt{requires(Term{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}, Field: true}})},
		},
		"FieldNameElsewhere": {
			reason: "Hostile tenant: matchFields metadata.name In a node that is not the pool's.",
			nodes:  nodes, opts: []podOpt{requires(Term{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"other"}, Field: true}})},
			want: "required node affinity metadata.name In [other] matches no pool node",
		},
		"UntoleratedTaint": {
			reason: "Hostile tenant: every pool node carries a taint of the pool's own (spec.tolerations) that the pod does not tolerate.",
			nodes:  []*Node{zoned("n1", "a", dedicated), zoned("n2", "b", dedicated)},
			want:   "does not tolerate the taint dedicated=gpu:NoSchedule of the pool nodes it selects",
		},
		"ToleratedTaint": {
			reason: "The pod tolerates the pool nodes' taint.",
			nodes:  []*Node{zoned("n1", "a", dedicated)},
			opts:   []podOpt{tolerating(corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu"})},
		},
		"OneNodeTakesIt": {
			reason: "Of the nodes it selects, one has no taint it fails to tolerate.",
			nodes:  []*Node{zoned("n1", "a", dedicated), zoned("n2", "b")},
		},
		"StartupTaintIsTemporary": {
			reason: "The startup taint leaves a node once it is warm: a pod that does not tolerate it waits for the node.",
			spec:   params(withStartup),
			nodes:  []*Node{warming("n1", t0)},
		},
		"NoNodeYet": {
			reason: "A pool without nodes: the labels every pool node carries (its node selector) decide, and the pool's selector alone fits.",
		},
		"NoNodeYetExtraSelector": {
			reason: "Hostile tenant: a pool without nodes, and a node selector label beyond the pool's.",
			opts:   []podOpt{extraSelector},
			want:   "nodeSelector e6data.io/x=y matches no pool node",
		},
		"NoNodeYetNotIn": {
			reason: "A pool without nodes: NotIn a label the pool's nodes are not known to carry holds.",
			opts:   []podOpt{requires(Term{req("topology.kubernetes.io/zone", corev1.NodeSelectorOpNotIn, "a")})},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := tc.spec
			if spec.NodeSelector == nil {
				spec = params()
			}
			p := executor("team-a", "e1", "analytics", "sales", tc.opts...)
			res := Compute(spec, NewSnapshot([]*Pod{p}, tc.nodes), v1alpha1.PoolCapacityObservation{}, t0)
			var want []v1alpha1.UnplaceableExecutor
			var pending, count int32 = 1, 0
			if tc.want != "" {
				want = []v1alpha1.UnplaceableExecutor{{Pod: "e1", Namespace: "team-a", QueryService: "sales", Reason: tc.want}}
				pending, count = 0, 1
			}
			o := res.Observation
			if diff := cmp.Diff(want, o.UnplaceableExecutors, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nunplaceableExecutors -want, +got:\n%s", tc.reason, diff)
			}
			if o.UnplaceableCount != count || o.PendingExecutors != pending {
				t.Errorf("%s\nunplaceableCount %d, pendingExecutors %d; want %d and %d", tc.reason, o.UnplaceableCount, o.PendingExecutors, count, pending)
			}
		})
	}
}

// TestUnplaceableCountForNothing replays a hostile tenant attached to a
// shared pool: 25 pending executors that ask for the pool with a node
// selector no pool node matches. They are listed (at most
// MaxUnplaceable) and counted, and move nothing else: no pending, no
// request, no allocation, no eviction, no warm slot.
func TestUnplaceableCountForNothing(t *testing.T) {
	pods := []*Pod{
		executor("team-a", "s0", "analytics", "sales", running("n0")),
		executor("team-a", "s1", "analytics", "sales", running("n0")),
		executor("team-a", "s2", "analytics", "sales", running("n1")),
		executor("team-a", "s3", "analytics", "sales", running("n1")),
	}
	for i := range 25 {
		pods = append(pods, executor("team-b", fmt.Sprintf("a%02d", i), "analytics", "ads", extraSelector, func(p *Pod) { p.CPUMillis = 64000 }))
	}
	spec := params(shares(2, 2), withWarmSlots(4), withBuffer(true))
	res := Compute(spec, NewSnapshot(pods, []*Node{node("n0", "analytics", true), node("n1", "analytics", true)}), v1alpha1.PoolCapacityObservation{}, t0)
	o := res.Observation
	if len(o.UnplaceableExecutors) != MaxUnplaceable || o.UnplaceableCount != 25 {
		t.Errorf("%d unplaceable listed, %d counted; want %d and 25", len(o.UnplaceableExecutors), o.UnplaceableCount, MaxUnplaceable)
	}
	if got := o.UnplaceableExecutors[0]; got.Namespace != "team-b" || got.Pod != "a00" {
		t.Errorf("first listed %s/%s, want team-b/a00 (sorted)", got.Namespace, got.Pod)
	}
	if o.PendingExecutors != 0 || o.Requested != nil {
		t.Errorf("pendingExecutors %d, requested %+v; want 0 and nothing", o.PendingExecutors, o.Requested)
	}
	for _, a := range o.Allocations {
		if a.PendingExecutors != 0 {
			t.Errorf("allocation %s/%s pending %d, want 0", a.Namespace, a.QueryService, a.PendingExecutors)
		}
	}
	if len(res.Evict) != 0 {
		t.Errorf("evicts %v, want nobody", res.Evict)
	}
	if res.Buffer == nil || res.Buffer.Replicas != 0 {
		t.Errorf("buffer %+v, want 0 replicas: the 4 running executors hold the 4 warm slots", res.Buffer)
	}
}
