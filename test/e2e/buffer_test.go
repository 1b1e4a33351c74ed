package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// warmAutoscalerTimeout is the e2e settings' warmCapacity.autoscalerTimeout.
const warmAutoscalerTimeout = "30s"

// warmSlots is the scenario pool's minExecutors, and the burst.
const warmSlots = 2

// TestCapacityBuffer runs the warm-slot scenario on a plane of its own
// whose Karpenter has its CapacityBuffer feature gate on: the pool's warm
// slots are a CapacityBuffer that Karpenter provisions nodes for, and no
// placeholder pod runs. It needs its own Karpenter because the gate is
// process-wide and the shared plane's scenarios rely on placeholder pods
// (TestPool/WarmSlotPreempted, TestPool/Cost); TestPool/WarmSlotsGateOff
// runs the same scenario on the shared plane, gate off.
func TestCapacityBuffer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	su := newSuite(t, bufferPlane)
	if su.has(ownSettings) {
		applyFastComposition(t, ctx, su.Cluster.Config, su.root)
		// The static executor gate policies, as docs/install.md says for
		// pools whose warm slots a buffer holds.
		mustApplyFile(t, ctx, su.Cluster.Config, su.root, "deploy", "provider", "executor-gate.yaml")
	}
	runScenarios(t, su, bufferScenarios)
}

// bufferPlane is the shared plane's stack with Karpenter's CapacityBuffer
// gate on.
var bufferPlane = plane{
	configure: func(_ *testing.T, cfg *devplane.Config) {
		cfg.KarpenterEnv = []string{devplane.KarpenterGatesWithBuffer}
	},
	caps: []capability{simulatedCloud, capacityBufferGate, ownSettings},
}

// bufferScenarios are TestCapacityBuffer's scenarios.
var bufferScenarios = []scenario{
	{name: "WarmSlotsGateOn", needs: []capability{simulatedCloud, capacityBufferGate, ownSettings}, namespaces: []string{"warm-gate-on"}, pools: []string{"warm-gate-on-pool"}, run: scenarioWarmSlotsGateOn},
	// A Scheduled window's warm slots on the buffer (warmpolicy_test.go).
	{name: "WarmWindowBuffer", needs: []capability{simulatedCloud, capacityBufferGate}, run: scenarioWarmWindowBuffer},
}

// scenarioWarmSlots creates, in a namespace of its own named name, a
// QueryService and a Pool of minExecutors 2 sized by it, and checks what
// holds the warm slots: with Karpenter's CapacityBuffer gate on (gateOn),
// the Pool's CapacityBuffer, processed by Karpenter, and no placeholder
// pod; with it off, placeholders, and the claim says after the bound that
// no autoscaler processed the buffer. In both, a burst of minExecutors
// executors runs on the warm nodes without launching a node, and the warm
// slots are held again once the burst ends.
func scenarioWarmSlots(t *testing.T, ctx context.Context, s *devplane.Stack, name string, gateOn bool) {
	c, cfg := s.Client, s.Cluster.Config
	ns, pool, qs := name, name+"-pool", name+"-qs"
	start := time.Now()
	if err := ensureNamespace(ctx, c, ns); err != nil {
		t.Fatal(err)
	}
	mustApply(t, ctx, cfg, fmt.Sprintf(`apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {e6data.io/pool: %[3]s}
spec:
  executor:
    image: registry.example.com/e6data/executor:warm
    replicas: 0
    resources: {cpu: "8", memory: 60Gi}
    poolRef: {name: %[3]s, namespace: %[2]s}
`, qs, ns, pool))
	mustApply(t, ctx, cfg, poolManifest(ns, pool, fmt.Sprintf(`
  minExecutors: %d
  maxExecutors: 6
  allowedQueryServices:
    - {name: %s, namespace: %s}
`, warmSlots, qs, ns)))
	t.Cleanup(func() {
		// Leave nothing that holds nodes: the executors, then the claim.
		ctx := context.WithoutCancel(ctx)
		_ = deleteExecutors(ctx, c, ns, qs)
		if u, err := claimIn(ctx, s, ns, pool); err == nil {
			_ = c.Delete(ctx, u)
		}
	})

	// Every NodeClaim the pool's NodePool makes, even one consolidated
	// between two checks below.
	launched := recordNodeClaims(t, ctx, c, pool+"-nodepool")

	placeholderPods := func(ctx context.Context) (int, error) {
		return podsOn(ctx, c, ns, map[string]string{qsv1.LabelPool: pool, qsv1.LabelComponent: qsv1.ComponentPlaceholder}, "")
	}
	var seen string
	see := func(format string, args ...any) error {
		if msg := fmt.Sprintf(format, args...); msg != seen {
			seen = msg
			t.Log(msg)
		}
		return errors.New(seen)
	}
	// warmHeld: the claim says what holds warmSlots-occupied slots, and
	// that holder holds them.
	warmHeld := func(occupied int32) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			u, st, err := readPool(ctx, s, ns, pool)
			if err != nil {
				return false, err
			}
			w := st.WarmCapacity
			if w == nil {
				return false, see("no status.warmCapacity yet")
			}
			cond := objectCondition(u, "WarmCapacity")
			slots := warmSlots - occupied
			cb, err := buffer(ctx, c, ns, pool+"-warm-slots")
			if err != nil {
				return false, see("CapacityBuffer: %v", err)
			}
			replicas, _, _ := unstructured.NestedInt64(cb.Object, "spec", "replicas")
			pods, err := placeholderPods(ctx)
			if err != nil {
				return false, err
			}
			_, depErr := placeholderDeployment(ctx, c, ns, pool)
			if gateOn {
				ok := w.Method == "CapacityBuffer" && w.Slots == slots && cond == "True/CapacityBufferProcessed" &&
					replicas == int64(slots) && pods == 0 && kerrors.IsNotFound(depErr)
				return ok, see("warmCapacity %+v, condition %s, buffer replicas %d, placeholder pods %d, placeholder Deployment: %v", *w, cond, replicas, pods, depErr)
			}
			ok := w.Method == "Placeholders" && w.Slots == slots && replicas == 0 && pods == int(slots)
			return ok, see("warmCapacity %+v, condition %s, buffer replicas %d, placeholder pods %d", *w, cond, replicas, pods)
		}
	}
	took := eventually(t, waitNodes, fmt.Sprintf("%d warm slots held", warmSlots), warmHeld(0))
	t.Logf("%s: claim -> %d warm slots held: %s", name, warmSlots, took.Round(10*time.Millisecond))
	// Each warm slot is a warm node (one executor a node).
	var warm []string
	eventually(t, waitNodes, "a Ready pool node per warm slot", func(ctx context.Context) (bool, error) {
		warm = nodeNames(readyNodes(poolNodes(t, ctx, c, pool)))
		return len(warm) == warmSlots, see("ready pool nodes %v", warm)
	})
	if gateOn {
		// Karpenter's provisioner says the buffer's virtual pods fit the
		// nodes it launched (pkg/controllers/provisioning/buffers.go,
		// computeProvisioningCondition).
		eventually(t, waitReconcile, "the CapacityBuffer fits existing capacity", func(ctx context.Context) (bool, error) {
			cb, err := buffer(ctx, c, ns, pool+"-warm-slots")
			if err != nil {
				return false, err
			}
			got := objectCondition(cb, "Provisioning")
			return got == "True/FitsExistingCapacity", see("buffer condition Provisioning %s", got)
		})
		// The buffer asks only for the slots placeholders no longer hold.
		took := eventually(t, waitBufferSwitch, "one pool node a warm slot after the switch to the buffer", func(ctx context.Context) (bool, error) {
			got := nodeNames(poolNodes(t, ctx, c, pool))
			claims := nodeClaims(ctx, c, pool+"-nodepool")
			return len(got) == warmSlots && len(claims) == warmSlots, see("pool nodes %v, NodeClaims %v, want %d", got, claims, warmSlots)
		})
		warm = nodeNames(readyNodes(poolNodes(t, ctx, c, pool)))
		t.Logf("%s: switch to the buffer: %d NodeClaims ever made (%d warm slots), %d warm nodes after %s", name, len(launched()), warmSlots, len(warm), took.Round(10*time.Millisecond))
		// The switch is logged, not asserted: the composition creates the
		// buffer at 0 and the provider raises it once no placeholder
		// holds the slots, but with this stack's consolidateAfter of 0s
		// a node launched for a placeholder that goes can be consolidated
		// before the buffer claims it (docs/capacity.md).
	}

	// A burst of minExecutors executors runs on the warm nodes.
	beforeBurst := launched()
	admitted := recordAdmittedGates(t, ctx, cfg, ns, map[string]string{qsv1.LabelQueryService: qs})
	mustCreate(t, ctx, c, devplane.ExecutorDeployment(ns, qs, "registry.example.com/e6data/executor:warm", warmSlots, "8", "60Gi", executorScheduling(t, c, ns, pool)))
	took = waitExecutors(t, waitWarmBurst, "the burst's executors Running", c, ns, pool, warmSlots)
	t.Logf("%s: burst -> %d executors Running: %s", name, warmSlots, took.Round(10*time.Millisecond))
	eventually(t, waitStatus, "the claim counts the burst and holds no warm slot beyond it", warmHeld(warmSlots))
	// No node is launched for the burst. With placeholders, the one an
	// executor preempted is recreated gated, so nothing provisions for
	// it. With a buffer, each executor is admitted with the buffer's
	// executor gate, and the capacity provider lowers the buffer and
	// releases the executor only once Karpenter reports the lower count
	// (the buffer's status.replicas): an executor that bound before
	// would have a provisioning pass restore its room on a new node
	// (RequiresNewCapacity).
	burstOnWarmNodes(t, ctx, c, ns, qs, warm, beforeBurst, launched)
	for pod, gates := range admitted() {
		if got := slices.Contains(gates, qsv1.GateExecutor); got != gateOn {
			t.Errorf("executor %s was admitted with scheduling gates %v: the buffer's executor gate %s is expected only while a CapacityBuffer holds the warm slots (%t)", pod, gates, qsv1.GateExecutor, gateOn)
		}
	}
	if n := len(admitted()); n != warmSlots {
		t.Errorf("saw %d executors admitted, want the burst's %d", n, warmSlots)
	}
	if gateOn {
		t.Logf("%s: burst -> %d NodeClaims ever made (%d warm slots)", name, len(launched()), warmSlots)
		cb, err := buffer(ctx, c, ns, pool+"-warm-slots")
		if err != nil {
			t.Fatal(err)
		}
		if got := cb.GetAnnotations()[qsv1.AnnotationReplicasOwner]; got != "burstpool-capacity" {
			t.Errorf("CapacityBuffer annotation %s is %q, want burstpool-capacity (the provider owns its replicas)", qsv1.AnnotationReplicasOwner, got)
		}
	}

	// The burst ends; the warm slots are held again, on the warm nodes.
	scaleExecutors(t, ctx, c, ns, qs, 0)
	took = eventually(t, waitStatus, "the warm slots held again after the burst", warmHeld(0))
	t.Logf("%s: burst over -> %d warm slots held again: %s", name, warmSlots, took.Round(10*time.Millisecond))
	// Back to one node a warm slot: with placeholders the same nodes;
	// with a buffer, whose pods are virtual, Karpenter may keep any of them.
	took = eventually(t, waitStatus, "the pool back to one node a warm slot", func(ctx context.Context) (bool, error) {
		got := nodeNames(poolNodes(t, ctx, c, pool))
		if !gateOn {
			return slices.Equal(got, warm), see("pool nodes %v, want the warm nodes %v", got, warm)
		}
		return len(got) == warmSlots, see("pool nodes %v, want %d", got, warmSlots)
	})
	t.Logf("%s: burst over -> pool back to %d nodes: %s", name, warmSlots, took.Round(10*time.Millisecond))
	if got := launched(); !slices.Equal(got, beforeBurst) {
		t.Errorf("NodeClaims ever made by the pool's NodePool once the warm slots are held again: %v, %v before the burst", got, beforeBurst)
	}

	if !gateOn {
		// Nothing acts on the buffer: after the bound the claim says so.
		took = eventually(t, waitStatus, "the claim says no autoscaler processed the CapacityBuffer", func(ctx context.Context) (bool, error) {
			u, _, err := readPool(ctx, s, ns, pool)
			if err != nil {
				return false, err
			}
			got := objectCondition(u, "WarmCapacity")
			return got == "False/CapacityBufferNotProcessed", see("condition WarmCapacity %s", got)
		})
		t.Logf("%s: CapacityBufferNotProcessed on the claim %s after the warm slots were held", name, took.Round(10*time.Millisecond))
	}
	t.Logf("%s: scenario took %s", name, time.Since(start).Round(100*time.Millisecond))
}

// burstOnWarmNodes checks that every executor of QueryService ns/qs runs
// on one of the warm nodes, and that the pool's NodePool made no NodeClaim
// (launched: all it ever made) beyond those it had made before the burst.
func burstOnWarmNodes(t *testing.T, ctx context.Context, c client.Client, ns, qs string, warm, before []string, launched func() []string) {
	t.Helper()
	pods, err := podsOf(ctx, c, ns, map[string]string{qsv1.LabelQueryService: qs})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if !slices.Contains(warm, p.Spec.NodeName) {
			t.Errorf("executor %s runs on %s, want one of the warm nodes %v", p.Name, p.Spec.NodeName, warm)
		}
	}
	if got := launched(); !slices.Equal(got, before) {
		t.Errorf("NodeClaims ever made by the pool's NodePool: %v after the burst, %v before it: the burst launched a node", got, before)
	}
}

// objectCondition is "Status/Reason" of u's status condition typ, or "".
func objectCondition(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, x := range conds {
		if m, ok := x.(map[string]any); ok && m["type"] == typ {
			return fmt.Sprintf("%v/%v", m["status"], m["reason"])
		}
	}
	return ""
}

// buffer reads the CapacityBuffer ns/name.
func buffer(ctx context.Context, c client.Client, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("autoscaling.x-k8s.io/v1beta1")
	u.SetKind("CapacityBuffer")
	return u, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
}

// placeholderDeployment reads pool's placeholder Deployment in ns.
func placeholderDeployment(ctx context.Context, c client.Client, ns, pool string) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	return d, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pool + "-placeholder"}, d)
}

// recordNodeClaims lists the NodeClaims of Karpenter NodePool np every
// 200ms until the test ends, and returns the names of all it has seen,
// sorted: a NodeClaim launched and consolidated between two checks of a
// scenario is still counted (Karpenter launches, registers and removes a
// kwok node in seconds).
func recordNodeClaims(t *testing.T, ctx context.Context, c client.Client, np string) func() []string {
	var mu sync.Mutex
	seen := map[string]bool{}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			names := nodeClaims(ctx, c, np)
			mu.Lock()
			for _, n := range names {
				seen[n] = true
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Sorted(maps.Keys(seen))
	}
}

// nodeClaims are the names of the NodeClaims of Karpenter NodePool np.
func nodeClaims(ctx context.Context, c client.Client, np string) []string {
	var out []string
	for _, nc := range list(ctx, c, "karpenter.sh/v1", "NodeClaimList") {
		if nc.GetLabels()["karpenter.sh/nodepool"] == np {
			out = append(out, nc.GetName())
		}
	}
	slices.Sort(out)
	return out
}

// nodeNames are the sorted names of nodes.
func nodeNames(nodes []corev1.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

// mustCreate creates o, failing t when it cannot.
func mustCreate(t *testing.T, ctx context.Context, c client.Client, o client.Object) {
	t.Helper()
	if err := c.Create(ctx, o); err != nil {
		t.Fatal(err)
	}
}

// scenarioWarmSlotsGateOn: on a plane whose Karpenter runs with the
// CapacityBuffer gate on, the pool's CapacityBuffer holds the warm slots.
func scenarioWarmSlotsGateOn(t *testing.T, ctx context.Context, e *env) {
	scenarioWarmSlots(t, ctx, e.Stack, "warm-gate-on", true)
}

// scenarioWarmSlotsGateOff: on the shared stack, whose Karpenter runs with
// the CapacityBuffer gate at its default (off), placeholders hold the warm
// slots and the claim says the buffer was not processed.
func scenarioWarmSlotsGateOff(t *testing.T, ctx context.Context, e *env) {
	scenarioWarmSlots(t, ctx, e.Stack, "warm-gate-off", false)
}

// recordAdmittedGates watches the pods in ns with labels created from now
// until the test ends, and returns, per pod, the scheduling gates it was
// created with: the ADDED event carries the version admission stored.
func recordAdmittedGates(t *testing.T, ctx context.Context, cfg restConfig, ns string, labels map[string]string) func() map[string][]string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sel := k8slabels.SelectorFromSet(labels).String()
	// Watch from the list's resource version: a watch from none starts
	// with an ADDED event for each pod already there.
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: l.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string][]string{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type != watch.Added {
				continue
			}
			gates := []string{}
			for _, g := range p.Spec.SchedulingGates {
				gates = append(gates, g.Name)
			}
			mu.Lock()
			if _, ok := seen[p.Name]; !ok {
				seen[p.Name] = gates
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	return func() map[string][]string {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}
