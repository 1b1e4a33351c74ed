package poolcapacity_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/warmup"
	"github.com/burstpool/burstpool/internal/watch"
)

const (
	startupPool  = "warming"
	startupNS    = "team-w"
	startupImage = "e6/exec:warm"
)

var startupTaint = corev1.Taint{Key: qsv1alpha1.TaintWarming, Value: startupPool, Effect: corev1.TaintEffectNoSchedule}

// createWarmingNode creates a Ready pool node that carries the startup
// taint if warming, as Karpenter registers a node of a NodePool with
// startupTaints.
func createWarmingNode(t *testing.T, c client.Client, name string, warming bool) {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{qsv1alpha1.LabelPool: startupPool}}}
	n.Spec.Taints = []corev1.Taint{{Key: qsv1alpha1.TaintPool, Value: startupPool, Effect: corev1.TaintEffectNoSchedule}}
	if warming {
		n.Spec.Taints = append(n.Spec.Taints, startupTaint)
	}
	if err := c.Create(ctx, n); err != nil {
		t.Fatalf("cannot create node %s: %v", name, err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "Test", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(ctx, n); err != nil {
		t.Fatalf("cannot set the status of node %s: %v", name, err)
	}
}

// tainted reports whether node name still carries the startup taint.
func tainted(t *testing.T, c client.Client, name string) bool {
	t.Helper()
	n := &corev1.Node{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, n); err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.MatchTaint(&startupTaint) })
}

// createPlaceholder creates a placeholder pod of the pool, gated as the
// function's placeholder Deployment creates them.
func createPlaceholder(t *testing.T, c client.Client, name string) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: startupNS, Name: name, Labels: map[string]string{qsv1alpha1.LabelPool: startupPool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder}},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: qsv1alpha1.GateWarmSlot}},
			Containers:      []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if err := c.Create(context.Background(), p); err != nil {
		t.Fatalf("cannot create placeholder %s: %v", name, err)
	}
}

// gated returns the placeholders of names that still carry the gate.
func gated(t *testing.T, c client.Client, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		p := &corev1.Pod{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: startupNS, Name: n}, p); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == qsv1alpha1.GateWarmSlot }) {
			out = append(out, n)
		}
	}
	return out
}

func startupCapacity(openAfter time.Duration, slots int32) *v1alpha1.PoolCapacity {
	pc := poolCapacity("warming", "default")
	fp := &pc.Spec.ForProvider
	fp.Pool = v1alpha1.PoolRef{Name: startupPool, Namespace: startupNS}
	fp.NodeSelector = map[string]string{qsv1alpha1.LabelPool: startupPool}
	fp.ExecutorSelector = map[string]string{qsv1alpha1.LabelPool: startupPool, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool}
	fp.WarmupSelector = map[string]string{qsv1alpha1.LabelPool: startupPool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentWarmup}
	fp.QueryServices = []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: startupNS}}
	fp.Startup = &v1alpha1.Startup{Taint: startupTaint, Images: []string{startupImage}, OpenAfter: metav1.Duration{Duration: openAfter}}
	fp.WarmSlots = &v1alpha1.WarmSlots{
		Selector: map[string]string{qsv1alpha1.LabelPool: startupPool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder},
		Gate:     qsv1alpha1.GateWarmSlot, Slots: slots,
	}
	return pc
}

// TestStartup runs the provider on a real API server: it opens a warming
// node only once the warmup pod of the pool's image runs there, opens
// another at the bound and lists it in openedCold, and releases gated
// placeholders only for the warm slots the pool still wants.
func TestStartup(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, startupNS)
	ensureLocalProviderConfig(t, c)
	createWarmingNode(t, c, "open-1", false)
	createWarmingNode(t, c, "warming-1", true)
	warm := map[string]string{qsv1alpha1.LabelPool: startupPool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentWarmup}
	// The warmup pod's pull init container is still running: Pending.
	createPod(t, c, startupNS, "warmup-1", "warming-1", warm, map[string]string{warmup.AnnotationImage: startupImage}, corev1.PodStatus{Phase: corev1.PodPending})
	createPlaceholder(t, c, "placeholder-1")
	createPlaceholder(t, c, "placeholder-2")
	exec := executorLabels("sales")
	exec[qsv1alpha1.LabelPool] = startupPool
	createPod(t, c, startupNS, "sales-exec-1", "open-1", exec, nil, running(time.Now()))

	if err := c.Create(ctx, startupCapacity(time.Hour, 2)); err != nil {
		t.Fatal(err)
	}
	p := startProvider(t, watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
	defer p.stop(t)

	// Two warm slots, one executor running: one placeholder is released,
	// the other stays gated (the pool gives that slot back).
	eventually(t, "one placeholder released", func() error {
		if got := gated(t, c, "placeholder-1", "placeholder-2"); len(got) != 1 {
			return fmt.Errorf("gated placeholders: %v, want one", got)
		}
		return nil
	})
	eventually(t, "the warming node counted", func() error {
		pc := getPC(t, c, "warming")
		if n := pc.Status.AtProvider.WarmingNodes; n != 1 {
			return fmt.Errorf("warmingNodes %d, want 1", n)
		}
		return nil
	})
	if !tainted(t, c, "warming-1") {
		t.Fatal("node warming-1 was opened while its warmup pod was still pulling")
	}
	stillGated := gated(t, c, "placeholder-1", "placeholder-2")

	// The pull ends: the warmup pod runs, and the node is opened.
	setStatus(t, c, startupNS, "warmup-1", running(time.Now()))
	eventually(t, "node warming-1 opened", func() error {
		if tainted(t, c, "warming-1") {
			return fmt.Errorf("node warming-1 still carries %s", startupTaint.ToString())
		}
		return nil
	})
	// The node in the provider's own cluster carries the event too, named
	// as kubectl describe node looks events up (UID = the node's name).
	eventually(t, "a NodeOpened event on node warming-1", func() error {
		l := &corev1.EventList{}
		if err := c.List(ctx, l, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return err
		}
		for _, e := range l.Items {
			o := e.InvolvedObject
			if o.Kind == "Node" && o.Name == "warming-1" && string(o.UID) == "warming-1" && e.Reason == "NodeOpened" {
				return nil
			}
		}
		return fmt.Errorf("no NodeOpened event on node warming-1 among %d events", len(l.Items))
	})
	if diff := cmp.Diff(stillGated, gated(t, c, "placeholder-1", "placeholder-2")); diff != "" {
		t.Errorf("a placeholder for a slot the pool gives back was released while the executor runs: -want, +got:\n%s", diff)
	}

	// A node whose image never arrives is opened at the bound, and named.
	createWarmingNode(t, c, "warming-2", true)
	update(t, c, "warming", func(pc *v1alpha1.PoolCapacity) {
		pc.Spec.ForProvider.Startup.OpenAfter = metav1.Duration{Duration: time.Second}
	})
	eventually(t, "node warming-2 opened cold and listed", func() error {
		if tainted(t, c, "warming-2") {
			return fmt.Errorf("node warming-2 still carries %s", startupTaint.ToString())
		}
		got := getPC(t, c, "warming").Status.AtProvider.OpenedCold
		if len(got) != 1 || got[0].Node != "warming-2" || !slices.Equal(got[0].Images, []string{startupImage}) {
			return fmt.Errorf("openedCold %+v, want warming-2 without %s", got, startupImage)
		}
		return nil
	})

	// The executor leaves: the pool wants both warm slots again.
	deletePod(t, c, startupNS, "sales-exec-1")
	eventually(t, "both placeholders released", func() error {
		if got := gated(t, c, "placeholder-1", "placeholder-2"); len(got) != 0 {
			return fmt.Errorf("gated placeholders: %v, want none", got)
		}
		return nil
	})
}

// setStatus replaces the status of pod ns/name.
func setStatus(t *testing.T, c client.Client, ns, name string, s corev1.PodStatus) {
	t.Helper()
	eventually(t, "setting the status of pod "+ns+"/"+name, func() error {
		p := &corev1.Pod{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return err
		}
		p.Status = s
		return c.Status().Update(context.Background(), p)
	})
}

// createBuffer creates a CapacityBuffer as the composition does, by
// server-side apply as Crossplane's field manager, with 3 replicas that the
// provider then takes over.
func createBuffer(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "autoscaling.x-k8s.io/v1beta1",
		"kind":       "CapacityBuffer",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec":       map[string]any{"podTemplateRef": map[string]any{"name": name}, "replicas": int64(3)},
	}}
	if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(crossplaneOwner), client.ForceOwnership); err != nil {
		t.Fatalf("cannot create CapacityBuffer %s/%s: %v", ns, name, err)
	}
}

// crossplaneOwner is the field manager Crossplane applies composed
// resources as (crossplane v2 internal/controller/apiextensions/composite
// ComposedFieldOwnerName: a prefix and the composite's UID).
const crossplaneOwner = "apiextensions.crossplane.io/composed/0c1e8a7e-0000-4000-8000-000000000001"

// bufferReplicas returns the CapacityBuffer's spec.replicas, -1 when unset.
func bufferReplicas(t *testing.T, c client.Client, ns, name string) int64 {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("autoscaling.x-k8s.io/v1beta1")
	u.SetKind("CapacityBuffer")
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !ok {
		return -1
	}
	return n
}

// bufferedPoolCapacity is the PoolCapacity name of pool in ns, with 2 warm
// slots, QueryService sales of ns attached, and the CapacityBuffer b.
func bufferedPoolCapacity(name, ns, pool string, b v1alpha1.WarmBuffer) *v1alpha1.PoolCapacity {
	pc := poolCapacity(name, "default")
	fp := &pc.Spec.ForProvider
	fp.Pool = v1alpha1.PoolRef{Name: pool, Namespace: ns}
	fp.NodeSelector = map[string]string{qsv1alpha1.LabelPool: pool}
	fp.ExecutorSelector = map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool}
	fp.WarmupSelector = nil
	fp.QueryServices = []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: ns}}
	fp.WarmSlots = &v1alpha1.WarmSlots{
		Selector: map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder},
		Gate:     qsv1alpha1.GateWarmSlot, Slots: 2,
		CapacityBuffer: &b,
	}
	return pc
}

// TestBufferScale runs the provider on a real API server: it keeps the
// pool's CapacityBuffer at the warm slots the pool still wants, lowering
// it for an executor created and not yet bound (an autoscaler that sees
// the buffer short restores its room on a new node) and
// raising it when executors leave; a buffer that does not hold the slots
// is kept at 0, and a pod of an unattached namespace changes nothing.
func TestBufferScale(t *testing.T) {
	const (
		ns, bufPool, buffer = "team-buf", "buffered", "buffered-warm-slots"
	)
	c := newClient(t, ns, "intruder-buf")
	ensureLocalProviderConfig(t, c)
	createBuffer(t, c, ns, buffer)
	pc := bufferedPoolCapacity("buffered", ns, bufPool, v1alpha1.WarmBuffer{Name: buffer, Holds: true})
	if err := c.Create(context.Background(), pc); err != nil {
		t.Fatal(err)
	}
	p := startProvider(t, watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
	defer p.stop(t)

	wantReplicas := func(what string, n int64) {
		t.Helper()
		eventually(t, what, func() error {
			if got := bufferReplicas(t, c, ns, buffer); got != n {
				return fmt.Errorf("CapacityBuffer %s/%s has replicas %d, want %d", ns, buffer, got, n)
			}
			return nil
		})
	}
	wantReplicas("the buffer holds both slots", 2)

	exec := executorLabels("sales")
	exec[qsv1alpha1.LabelPool] = bufPool
	// Created, not yet bound: the buffer gives its slot up at once.
	createPod(t, c, ns, "sales-exec-1", "", exec, nil, corev1.PodStatus{Phase: corev1.PodPending})
	wantReplicas("one slot given up for an executor not yet bound", 1)

	// Pods of a namespace no attached QueryService is in are anyone's.
	createPod(t, c, "intruder-buf", "fake-1", "", exec, nil, corev1.PodStatus{Phase: corev1.PodPending})
	createPod(t, c, "intruder-buf", "fake-2", "", exec, nil, corev1.PodStatus{Phase: corev1.PodPending})
	time.Sleep(quietShort)
	if got := bufferReplicas(t, c, ns, buffer); got != 1 {
		t.Errorf("pending pods of an unattached namespace moved the buffer to %d replicas, want 1", got)
	}

	// The composition, seeing the annotation, applies the buffer without
	// replicas: the provider's value stays (an applier that drops a field
	// it no longer owns changes nothing), and the object stays valid
	// (the CRD requires replicas or limits beside podTemplateRef: its
	// x-kubernetes-validations rule in karpenter v1.14.1
	// pkg/apis/crds/autoscaling.x-k8s.io_capacitybuffers.yaml, vendored in
	// test/crds/upstream, which this API server enforces). An applier
	// that stops sending a field it shares gives up only its own claim
	// (https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management).
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "autoscaling.x-k8s.io/v1beta1",
		"kind":       "CapacityBuffer",
		"metadata":   map[string]any{"namespace": ns, "name": buffer},
		"spec":       map[string]any{"podTemplateRef": map[string]any{"name": buffer}},
	}}
	if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(crossplaneOwner), client.ForceOwnership); err != nil {
		t.Fatalf("the composition's apply without replicas failed: %v", err)
	}
	if got := bufferReplicas(t, c, ns, buffer); got != 1 {
		t.Errorf("after the composition's apply without replicas the buffer has %d replicas, want the provider's 1", got)
	}

	deletePod(t, c, ns, "sales-exec-1")
	wantReplicas("both slots held again once the executor left", 2)

	// Placeholders hold the slots (the autoscaler did not process the
	// buffer): the buffer asks for none.
	update(t, c, "buffered", func(pc *v1alpha1.PoolCapacity) { pc.Spec.ForProvider.WarmSlots.CapacityBuffer.Holds = false })
	wantReplicas("a buffer that holds no slot asks for none", 0)
}

// setBufferStatus sets the CapacityBuffer's status.replicas, as the
// buffer's autoscaler does when it has seen spec.replicas (Karpenter
// v1.14.1 pkg/controllers/capacitybuffer/controller.go); no autoscaler
// runs here.
func setBufferStatus(t *testing.T, c client.Client, ns, name string, n int64) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("autoscaling.x-k8s.io/v1beta1")
	u.SetKind("CapacityBuffer")
	u.SetNamespace(ns)
	u.SetName(name)
	patch := fmt.Appendf(nil, `{"status":{"replicas":%d}}`, n)
	if err := c.Status().Patch(context.Background(), u, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("cannot set the status of CapacityBuffer %s/%s: %v", ns, name, err)
	}
}

// createExecutor creates an unbound executor pod as a QueryService's
// operator does, and returns the scheduling gates it was admitted with.
func createExecutor(t *testing.T, c client.Client, ns, name string, labels map[string]string, node string) []string {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:     node,
			NodeSelector: map[string]string{qsv1alpha1.LabelPool: labels[qsv1alpha1.LabelPool]},
			Containers:   []corev1.Container{{Name: "executor", Image: "e6/exec:1"}},
			Tolerations:  []corev1.Toleration{{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpExists}},
		},
	}
	if err := c.Create(context.Background(), p); err != nil {
		t.Fatalf("cannot create pod %s/%s: %v", ns, name, err)
	}
	return gateNames(p)
}

func gateNames(p *corev1.Pod) []string {
	var out []string
	for _, g := range p.Spec.SchedulingGates {
		out = append(out, g.Name)
	}
	return out
}

func podGates(t *testing.T, c client.Client, ns, name string) []string {
	t.Helper()
	p := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return gateNames(p)
}

// TestExecutorGate runs the provider on a real API server, which applies
// the static MutatingAdmissionPolicy of deploy/provider/executor-gate.yaml
// (Kubernetes 1.36 serves admissionregistration.k8s.io/v1
// MutatingAdmissionPolicy, on by default) with the ExecutorGate the
// provider writes as its parameter. Until the platform applies the static
// policies the PoolCapacity says so in an ExecutorGateUnavailable event.
// While the pool's CapacityBuffer holds its warm slots, an executor created
// in an attached QueryService's namespace is admitted with the gate, and
// released only once the buffer's autoscaler reports the lower count
// (status.replicas), or at the bound: an executor that took a warm slot
// before the autoscaler saw the buffer lowered would have it restore the
// slot's room on a new node. Pods of other namespaces are admitted as they
// are, and an executor created bound is refused; when the buffer stops
// holding the slots the ExecutorGate goes.
func TestExecutorGate(t *testing.T) {
	const (
		ns, stranger, gatePool, buffer = "team-gate", "intruder-gate", "gated", "gated-warm-slots"
	)
	ctx := context.Background()
	c := newClient(t, ns, stranger)
	ensureLocalProviderConfig(t, c)
	// The platform has not applied the static policies yet.
	deleteExecutorGatePolicies(t, c)
	createBuffer(t, c, ns, buffer)
	pc := bufferedPoolCapacity("gated", ns, gatePool, v1alpha1.WarmBuffer{Name: buffer, Holds: true})
	pc.Spec.ForProvider.ExecutorGate = qsv1alpha1.GateExecutor
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	// The provider runs under its service account's name, which the
	// static guard lets release executors (with an administrator's rights:
	// TestLeastPrivilege runs it with the shipped roles).
	p := startProviderAs(t, providerIdentity(t), watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
	defer p.stop(t)

	eventually(t, "an ExecutorGateUnavailable event naming the missing static policy", func() error {
		l := &corev1.EventList{}
		if err := c.List(ctx, l); err != nil {
			return err
		}
		for _, e := range l.Items {
			if e.InvolvedObject.Name == "gated" && e.Reason == "ExecutorGateUnavailable" && strings.Contains(e.Message, "MutatingAdmissionPolicy burstpool-executor-gate is missing") {
				return nil
			}
		}
		var seen []string
		for _, e := range l.Items {
			seen = append(seen, e.InvolvedObject.Name+" "+e.Reason+": "+e.Message)
		}
		return fmt.Errorf("no ExecutorGateUnavailable event on PoolCapacity gated among %q", seen)
	})
	applyExecutorGatePolicies(t, c)

	exec := executorLabels("sales")
	exec[qsv1alpha1.LabelPool] = gatePool
	gated := []string{qsv1alpha1.GateExecutor}

	// The policy is in effect once the API server has loaded it: probe
	// until a new executor comes gated, then keep that one.
	name := ""
	for i := 0; name == ""; i++ {
		probe := fmt.Sprintf("sales-exec-%d", i)
		if cmp.Equal(createExecutor(t, c, ns, probe, exec, ""), gated) {
			name = probe
			break
		}
		deletePod(t, c, ns, probe)
		if i > 300 {
			t.Fatalf("no executor was admitted with the gate %s in 30 s", qsv1alpha1.GateExecutor)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The ExecutorGate carries the pool's identity and is the
	// PoolCapacity's dependent, for the garbage collector.
	eg := &v1alpha1.ExecutorGate{}
	if err := c.Get(ctx, client.ObjectKey{Name: "gated"}, eg); err != nil {
		t.Fatal(err)
	}
	if got := eg.Labels[qsv1alpha1.LabelPool]; got != gatePool {
		t.Errorf("the ExecutorGate's label %s is %q, want %q", qsv1alpha1.LabelPool, got, gatePool)
	}
	if refs := eg.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "PoolCapacity" || refs[0].Name != "gated" {
		t.Errorf("the ExecutorGate's owners are %v, want PoolCapacity gated", refs)
	}
	wantSpec := v1alpha1.ExecutorGateSpec{Pool: pc.Spec.ForProvider.Pool, Gate: qsv1alpha1.GateExecutor, Namespaces: []string{ns},
		Selector: pc.Spec.ForProvider.ExecutorSelector, ProviderNamespace: v1alpha1.DefaultProviderNamespace}
	if diff := cmp.Diff(wantSpec, eg.Spec); diff != "" {
		t.Errorf("the ExecutorGate's spec: -want, +got:\n%s", diff)
	}
	eventually(t, "the buffer lowered for the gated executor", func() error {
		if got := bufferReplicas(t, c, ns, buffer); got != 1 {
			return fmt.Errorf("CapacityBuffer %s/%s has replicas %d, want 1", ns, buffer, got)
		}
		return nil
	})
	// The autoscaler has not reported 1 yet (status.replicas is unset):
	// the executor waits.
	time.Sleep(quietShort)
	if got := podGates(t, c, ns, name); !cmp.Equal(got, gated) {
		t.Fatalf("executor %s has gates %v before the buffer's autoscaler saw the lower count, want %v", name, got, gated)
	}
	setBufferStatus(t, c, ns, buffer, 1)
	eventually(t, "executor released once the autoscaler saw the buffer at 1", func() error {
		if got := podGates(t, c, ns, name); len(got) > 0 {
			return fmt.Errorf("executor %s still has gates %v", name, got)
		}
		return nil
	})

	// A pod with the executor's labels in a namespace no attached
	// QueryService is in takes no warm slot: admitted as it is. An
	// executor created bound would skip the gate: refused.
	if got := createExecutor(t, c, stranger, "fake-1", exec, ""); len(got) > 0 {
		t.Errorf("a pod of unattached namespace %s was admitted with gates %v", stranger, got)
	}
	bound := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bound-1", Labels: exec},
		Spec:       corev1.PodSpec{NodeName: "some-node", Containers: []corev1.Container{{Name: "executor", Image: "e6/exec:1"}}},
	}
	if err := c.Create(ctx, bound); err == nil || !strings.Contains(err.Error(), "cannot be created bound to a node") {
		t.Errorf("an executor created bound: %v, want refused as created bound", err)
	}

	// The autoscaler never reports the next count: the executor goes at
	// the bound all the same.
	if got := createExecutor(t, c, ns, "sales-late", exec, ""); !cmp.Equal(got, gated) {
		t.Fatalf("executor sales-late was admitted with gates %v, want %v", got, gated)
	}
	time.Sleep(quietShort)
	if got := podGates(t, c, ns, "sales-late"); !cmp.Equal(got, gated) {
		t.Fatalf("executor sales-late has gates %v 2 s after its creation, with the autoscaler behind, want %v", got, gated)
	}
	eventually(t, "executor released at the bound", func() error {
		if got := podGates(t, c, ns, "sales-late"); len(got) > 0 {
			return fmt.Errorf("executor sales-late still has gates %v", got)
		}
		return nil
	})

	// Placeholders hold the slots: the ExecutorGate goes, and executors
	// are admitted ungated.
	update(t, c, "gated", func(pc *v1alpha1.PoolCapacity) {
		pc.Spec.ForProvider.WarmSlots.CapacityBuffer.Holds = false
		pc.Spec.ForProvider.ExecutorGate = ""
	})
	eventually(t, "the ExecutorGate removed", func() error {
		err := c.Get(ctx, client.ObjectKey{Name: "gated"}, &v1alpha1.ExecutorGate{})
		if err == nil {
			return fmt.Errorf("ExecutorGate gated is still there")
		}
		if !kerrors.IsNotFound(err) {
			return err
		}
		return nil
	})
	eventually(t, "an executor admitted ungated", func() error {
		n := fmt.Sprintf("sales-free-%d", time.Now().UnixNano())
		if got := createExecutor(t, c, ns, n, exec, ""); len(got) > 0 {
			deletePod(t, c, ns, n)
			return fmt.Errorf("executor %s admitted with gates %v", n, got)
		}
		return nil
	})
}
