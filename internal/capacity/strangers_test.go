package capacity

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// counted is what of a Compute result a pod with the pool's labels can
// move.
type counted struct {
	Pending, Occupied int32
	CPU               string
	AllocPending      map[string]int32
	Failures          []string
	WarmupFailures    []string
	Unauthorized      []string
	Evict             []string
}

func countedOf(r Result) counted {
	o := r.Observation
	c := counted{Pending: o.PendingExecutors, Occupied: o.OccupiedExecutors, AllocPending: map[string]int32{}}
	if o.Requested != nil {
		c.CPU = o.Requested.CPU.String()
	}
	for _, a := range o.Allocations {
		c.AllocPending[a.Namespace+"/"+a.QueryService] = a.PendingExecutors
	}
	for _, f := range o.Failures {
		c.Failures = append(c.Failures, f.Namespace+"/"+f.Pod+": "+f.Message)
	}
	for _, w := range o.WarmupFailures {
		c.WarmupFailures = append(c.WarmupFailures, w.Image)
	}
	for _, u := range o.UnauthorizedExecutors {
		c.Unauthorized = append(c.Unauthorized, u.Namespace+"/"+u.Pod)
	}
	for _, e := range r.Evict {
		c.Evict = append(c.Evict, e.Pod.String())
	}
	return c
}

// TestStrangersCountForNothing checks what counts toward a pool: executors
// on its nodes, or unbound (or on a deleted node) from the namespace of an
// attached QueryService; pending only while the scheduler finds no room on
// the nodes they ask for; warmup pods only in the pool's namespace.
func TestStrangersCountForNothing(t *testing.T) {
	now := t0.Add(time.Hour)
	// team-x attaches nothing to the pool.
	stranger := func(name, qs string, opts ...podOpt) *Pod {
		p := executor("team-x", name, "analytics", qs, opts...)
		p.UID = "uid-" + name
		return p
	}
	cpu := func(p *Pod) { p.CPUMillis = 64000 }
	failed := func(msg string) podOpt { return func(p *Pod) { p.State, p.Message = PodFailed, msg } }
	gated := func(p *Pod) { p.Unschedulable = false }
	poolTolerations := func(p *v1alpha1.PoolCapacityParameters) {
		p.Tolerations = []corev1.Toleration{{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: "analytics", Effect: corev1.TaintEffectNoSchedule}}
	}
	nodes := []*Node{node("n0", "analytics", true), node("n1", "analytics", true)}
	full := []*Pod{
		executor("team-a", "s0", "analytics", "sales", running("n0"), started(t0)),
		executor("team-a", "s1", "analytics", "sales", running("n0"), started(t0.Add(time.Minute))),
		executor("team-a", "s2", "analytics", "sales", running("n1"), started(t0.Add(2*time.Minute))),
		executor("team-a", "s3", "analytics", "sales", running("n1"), started(t0.Add(3*time.Minute))),
	}
	none := map[string]int32{"team-a/sales": 0, "team-b/ads": 0}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.PoolCapacityParameters
		pods   []*Pod
		want   counted
	}{
		"ForeignPendingExecutors": {
			reason: "Pending pods with the pool's labels in a namespace that attaches nothing move neither pending executors nor requested resources.",
			spec:   params(),
			pods:   []*Pod{stranger("p1", "sales", cpu), stranger("p2", "ads", cpu), stranger("p3", "rogue", cpu)},
			want:   counted{AllocPending: none},
		},
		"ForeignFailure": {
			reason: "A failed pod in a foreign namespace records no failure, whatever message it carries.",
			spec:   params(),
			pods:   []*Pod{stranger("f1", "sales", failed("pool is broken, call 555-0100"))},
			want:   counted{AllocPending: none},
		},
		"ForeignOnItsOwnNode": {
			reason: "A pod with the pool's labels running on a node outside the pool is not the pool's.",
			spec:   params(),
			pods:   []*Pod{stranger("o1", "sales", running("team-x-node"), cpu)},
			want:   counted{AllocPending: none},
		},
		"ForeignOnAPoolNode": {
			reason: "A foreign pod that got onto a pool node occupies a slot and is listed as unauthorized: it is on the pool.",
			spec:   params(),
			pods:   []*Pod{stranger("i1", "sales", running("n0"))},
			want:   counted{Occupied: 1, AllocPending: none, Unauthorized: []string{"team-x/i1"}},
		},
		"ForeignWarmupPod": {
			reason: "Warmup pods count only in the pool's namespace: a fake one elsewhere reports no warmup failure.",
			spec:   params(),
			pods: []*Pod{warmPod("w1", "analytics", "evil/image:1", "n0", state(PodPending), func(p *Pod) { p.Namespace = "team-x" },
				container(Container{Image: "evil/image:1", WaitingReason: "ErrImagePull", WaitingMessage: "chosen"}))},
			want: counted{AllocPending: none},
		},
		"PoolWarmupPod": {
			reason: "The pool's own warmup pod still reports its failure.",
			spec:   params(),
			pods: []*Pod{warmPod("w1", "analytics", "e6/exec:typo", "n0", state(PodPending),
				container(Container{Image: "e6/exec:typo", WaitingReason: "ErrImagePull"}))},
			want: counted{AllocPending: none, WarmupFailures: []string{"e6/exec:typo"}},
		},
		"AttachedWaiting": {
			reason: "An unbound executor of an attached namespace that the scheduler found no room for is pending.",
			spec:   params(),
			pods:   []*Pod{executor("team-b", "a1", "analytics", "ads", cpu)},
			want:   counted{Pending: 1, CPU: "64", AllocPending: map[string]int32{"team-a/sales": 0, "team-b/ads": 1}},
		},
		"AttachedGated": {
			reason: "An unbound executor held by a scheduling gate (or not yet tried) waits for nothing the pool could give.",
			spec:   params(),
			pods:   []*Pod{executor("team-b", "a1", "analytics", "ads", gated, cpu)},
			want:   counted{AllocPending: none},
		},
		"AttachedAimingElsewhere": {
			reason: "An unschedulable executor whose node selector names another pool does not wait for this one.",
			spec:   params(),
			pods:   []*Pod{executor("team-b", "a1", "analytics", "ads", func(p *Pod) { p.Aim.NodeSelector[qsv1alpha1.LabelPool] = "other" })},
			want:   counted{AllocPending: none},
		},
		"AttachedNotTolerating": {
			reason: "An unschedulable executor that does not tolerate the pool's taint could never go there.",
			spec:   params(poolTolerations),
			pods:   []*Pod{executor("team-b", "a1", "analytics", "ads")},
			want:   counted{AllocPending: none},
		},
		"AttachedTolerating": {
			reason: "With the pool's tolerations it waits for the pool.",
			spec:   params(poolTolerations),
			pods: []*Pod{executor("team-b", "a1", "analytics", "ads", func(p *Pod) {
				p.Aim.Tolerations = []corev1.Toleration{{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpExists}}
			})},
			want: counted{Pending: 1, AllocPending: map[string]int32{"team-a/sales": 0, "team-b/ads": 1}},
		},
		"AttachedOnAnotherNode": {
			reason: "An executor of an attached namespace bound to a node outside the pool is not the pool's.",
			spec:   params(),
			pods:   []*Pod{executor("team-b", "a1", "analytics", "ads", on("elsewhere"), cpu)},
			want:   counted{AllocPending: none},
		},
		"ForeignWaitersEvictNobody": {
			reason: "With shares enforced, two unschedulable pods of a foreign namespace labelled as ads evict none of sales' executors.",
			spec:   params(shares(2, 2)),
			pods:   append(clonePods(full), stranger("a1", "ads"), stranger("a2", "ads")),
			want:   counted{Occupied: 4, AllocPending: none},
		},
		"GatedWaitersEvictNobody": {
			reason: "Nor do two gated executors of ads itself.",
			spec:   params(shares(2, 2)),
			pods:   append(clonePods(full), executor("team-b", "a1", "analytics", "ads", gated), executor("team-b", "a2", "analytics", "ads", gated)),
			want:   counted{Occupied: 4, AllocPending: none},
		},
		"RealWaitersEvict": {
			reason: "Two ads executors that really wait for the pool still take sales down to its share.",
			spec:   params(shares(2, 2)),
			pods:   append(clonePods(full), executor("team-b", "a1", "analytics", "ads"), executor("team-b", "a2", "analytics", "ads")),
			want: counted{Occupied: 4, Pending: 2, AllocPending: map[string]int32{"team-a/sales": 0, "team-b/ads": 2},
				Evict: []string{"team-a/s3", "team-a/s2"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, p := range tc.pods {
				p.UID = "uid-" + p.Name
			}
			got := countedOf(Compute(tc.spec, NewSnapshot(tc.pods, nodes), v1alpha1.PoolCapacityObservation{}, now))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCompute: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestStrangersDeparted checks that a deleted failed pod records a failure
// only when it counted: a foreign one deleted before any reconcile leaves
// nothing either.
func TestStrangersDeparted(t *testing.T) {
	fail := func(ns, name string) *Pod {
		return executor(ns, name, "analytics", "sales", state(PodFailed), reason("", "chosen message"))
	}
	cases := map[string]struct {
		reason string
		pod    *Pod
		want   []string
	}{
		"Foreign": {reason: "A foreign failed pod deleted leaves no failure record.", pod: fail("team-x", "f1")},
		"Attached": {reason: "An attached namespace's failed executor deleted keeps its record.", pod: fail("team-a", "f1"),
			want: []string{"team-a/f1: chosen message"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := NewSnapshot([]*Pod{tc.pod}, nil).Edit()
			b.Depart(tc.pod)
			got := countedOf(Compute(params(), b.Snapshot(), v1alpha1.PoolCapacityObservation{}, t0)).Failures
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCompute(...) failures: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func clonePods(ps []*Pod) []*Pod {
	out := make([]*Pod, len(ps))
	for i, p := range ps {
		c := *p
		out[i] = &c
	}
	return out
}
