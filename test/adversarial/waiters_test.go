package adversarial

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/fixture"
)

// The attached tenant whose waiters can never be placed: its QueryService
// shares the victim pool with the victim's tenant.
const (
	sharedNS = "workspace-ads"
	sharedQS = "ads-cluster"
)

// nowhere is the label the waiters' node selector adds to the pool's: no
// pool node carries it.
const nowhere = "e6data.io/x"

// unplaceableWaiters creates n pending executors of QueryService qs in ns
// that aim at the victim pool (its node selector, tolerations and executor
// labels) and ask besides for a label no pool node carries, each marked
// unschedulable as kube-scheduler marks it.
func (cc countingCluster) unplaceableWaiters(t *testing.T, ns, qs string, n int) {
	t.Helper()
	sel := maps.Clone(victim.NodeLabels())
	sel[nowhere] = "y"
	for i := range n {
		cc.pod(t, fixture.PodOptions{Namespace: ns, Name: fmt.Sprintf("waiter-%d", i), Labels: victim.ExecutorLabels(qs), NodeSelector: sel, CPU: "8", Status: fixture.Unschedulable()})
	}
}

// reportsUnplaceable waits until the PoolCapacity pc lists the n waiters
// of ns as unplaceable, and counts none of them as pending.
func (cc countingCluster) reportsUnplaceable(t *testing.T, pc, ns, qs string, n int) {
	t.Helper()
	var want []v1alpha1.UnplaceableExecutor
	for i := range n {
		want = append(want, v1alpha1.UnplaceableExecutor{Pod: fmt.Sprintf("waiter-%d", i), Namespace: ns, QueryService: qs, Reason: "nodeSelector " + nowhere + "=y matches no pool node"})
	}
	fixture.Eventually(t, fixture.ObserverSync, fmt.Sprintf("%d unplaceable executors reported", n), func() error {
		o := cc.capacity(t, pc).Status.AtProvider
		if diff := cmp.Diff(want, o.UnplaceableExecutors); diff != "" || o.UnplaceableCount != int32(n) || o.PendingExecutors != 0 {
			return fmt.Errorf("unplaceableCount %d, pendingExecutors %d; listed (-want +got):\n%s", o.UnplaceableCount, o.PendingExecutors, diff)
		}
		return nil
	})
}

// sharedPool fills the victim pool's two nodes (four slots) with four
// running executors of the victim's tenant, and creates its PoolCapacity
// attaching that tenant and the shared tenant, shares of two each,
// enforced; change adjusts it first. It returns the executors' names.
func (cc countingCluster) sharedPool(t *testing.T, change func(*v1alpha1.PoolCapacityParameters)) (*v1alpha1.PoolCapacity, []string) {
	t.Helper()
	cc.poolNode(t, "burst-1", nil)
	cc.poolNode(t, "burst-2", nil)
	start := time.Now().Add(-time.Hour)
	var running []string
	for i := range 4 {
		name := fmt.Sprintf("analytics-exec-%d", i)
		cc.pod(t, fixture.PodOptions{Namespace: tenantNS, Name: name, Labels: victim.ExecutorLabels(tenantQS), NodeName: fmt.Sprintf("burst-%d", i%2+1), Status: fixture.Running(start.Add(time.Duration(i) * time.Minute))})
		running = append(running, name)
	}
	pc := victimCapacity(4)
	fp := &pc.Spec.ForProvider
	fp.QueryServices = []v1alpha1.AttachedQueryService{{Name: tenantQS, Namespace: tenantNS, MaxPoolExecutors: 2}, {Name: sharedQS, Namespace: sharedNS, MaxPoolExecutors: 2}}
	fp.Policies.EnforceShares = true
	if change != nil {
		change(fp)
	}
	fixture.Create(t, cc.c, pc)
	return pc, running
}

// TestUnplaceableWaitersEvictNobody replays "waiters that can never be
// placed": with shares enforced, an attached tenant (ads-cluster, below
// its share of two) creates two pending executors that aim at the pool
// (its node selector, tolerations and executor labels) but ask besides
// for a label no pool node carries. The pool's four slots are full with
// analytics-cluster's executors, above its share of two. The waiters
// could never take a freed slot, so no round evicts anything, and the
// pool lists them as unplaceable.
func TestUnplaceableWaitersEvictNobody(t *testing.T) {
	cc := startCountingCluster(t, sharedNS)
	pc, running := cc.sharedPool(t, nil)
	cc.unplaceableWaiters(t, sharedNS, sharedQS, 2)
	cc.runPolicyRounds(t, pc.Name)
	cc.noneEvicted(t, tenantNS, running, "waiters no pool node would take")
	cc.reportsUnplaceable(t, pc.Name, sharedNS, sharedQS, 2)
}

// TestUnplaceableWaitersHoldNobody replays the same waiters against the
// executor gate: analytics-cluster, at its share, creates a new executor,
// admitted with the gate. A PodDisruptionBudget keeps its running
// executors from eviction, so nothing ever places the waiters. They wait
// for nothing the pool can give, so the new executor is released from
// the gate at once rather than held for them without end.
func TestUnplaceableWaitersHoldNobody(t *testing.T) {
	cc := startCountingCluster(t, sharedNS)
	pc, _ := cc.sharedPool(t, func(fp *v1alpha1.PoolCapacityParameters) { fp.ExecutorGate = qsv1alpha1.GateExecutor })
	fixture.Create(t, cc.c, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: "analytics-executors"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &intstr.IntOrString{IntVal: 0}, Selector: &metav1.LabelSelector{MatchLabels: victim.ExecutorLabels(tenantQS)}}})
	cc.unplaceableWaiters(t, sharedNS, sharedQS, 2)
	const fresh = "analytics-exec-4"
	cc.pod(t, fixture.PodOptions{Namespace: tenantNS, Name: fresh, Labels: victim.ExecutorLabels(tenantQS), NodeSelector: victim.NodeLabels(), SchedulingGates: []string{qsv1alpha1.GateExecutor},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated, LastTransitionTime: metav1.Now()}}}})
	cc.runProvider(t)
	fixture.Eventually(t, fixture.ObserverSync, fresh+" released from the executor gate", func() error {
		p := &corev1.Pod{}
		if err := cc.c.Get(context.Background(), client.ObjectKey{Namespace: tenantNS, Name: fresh}, p); err != nil {
			return err
		}
		if len(p.Spec.SchedulingGates) > 0 {
			return fmt.Errorf("still gated: %v", p.Spec.SchedulingGates)
		}
		return nil
	})
	cc.reportsUnplaceable(t, pc.Name, sharedNS, sharedQS, 2)
}

// TestUnplaceableWaitersLeaveTheBuffer replays the same waiters against a
// pool whose CapacityBuffer holds its four warm slots: the pool runs no
// executor, and the attached tenant's two waiters that no pool node would
// take lowered the buffer's replicas by two, so that an autoscaler gave
// up warm capacity for executors that never come. The buffer keeps its
// four replicas.
func TestUnplaceableWaitersLeaveTheBuffer(t *testing.T) {
	const buffer = victimPool + "-warm-slots"
	cc := startCountingCluster(t, sharedNS)
	ctx := context.Background()
	cc.poolNode(t, "burst-1", nil)
	cc.poolNode(t, "burst-2", nil)
	// The composition creates the buffer; the provider owns its replicas.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
		"metadata": map[string]any{"namespace": victimNS, "name": buffer},
		"spec":     map[string]any{"podTemplateRef": map[string]any{"name": buffer}, "replicas": int64(1)},
	}}
	fixture.Create(t, cc.c, u)
	pc := victimCapacity(4)
	pc.Spec.ForProvider.QueryServices = append(pc.Spec.ForProvider.QueryServices, v1alpha1.AttachedQueryService{Name: sharedQS, Namespace: sharedNS})
	pc.Spec.ForProvider.WarmSlots = &v1alpha1.WarmSlots{
		Selector: map[string]string{qsv1alpha1.LabelPool: victimPool, qsv1alpha1.LabelPoolNamespace: victimNS, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder},
		Gate:     qsv1alpha1.GateWarmSlot, Slots: 4, CapacityBuffer: &v1alpha1.WarmBuffer{Name: buffer, Holds: true},
	}
	fixture.Create(t, cc.c, pc)
	cc.unplaceableWaiters(t, sharedNS, sharedQS, 2)
	cc.runProvider(t)
	replicas := func() (int64, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := cc.c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return 0, err
		}
		n, _, err := unstructured.NestedInt64(got.Object, "spec", "replicas")
		return n, err
	}
	check := func() error {
		n, err := replicas()
		if err == nil && n != 4 {
			err = fmt.Errorf("CapacityBuffer %s/%s has %d replicas, want 4", victimNS, buffer, n)
		}
		return err
	}
	fixture.Eventually(t, fixture.ObserverSync, "the buffer scaled to the pool's warm slots", check)
	cc.reportsUnplaceable(t, pc.Name, sharedNS, sharedQS, 2)
	time.Sleep(policyRounds)
	if err := check(); err != nil {
		t.Error(err)
	}
}
