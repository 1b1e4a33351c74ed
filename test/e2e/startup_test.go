package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	burstsim "github.com/burstpool/burstpool/test/burst"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// Namespaces of the startup scenarios. Warmup pods of pullingNamespaces
// stay Pending, as while their image is pulled, until the test ends the
// pull (burstsim.KwokConfigPulling, the stack's kwok stages).
const (
	warmStartNS       = "e2e-warm-start"
	warmGivebackNS    = "e2e-warm-giveback"
	modelledPull      = 15 * time.Second
	givebackQuietTime = 30 * time.Second
)

var pullingNamespaces = []string{warmStartNS}

// startupPool applies a Pool of ns that attaches QueryService qs of its own
// namespace, on m7i.xlarge nodes (4 vCPU: one executor of 2500m each,
// so an executor takes a warm slot by preempting its placeholder), with
// minExecutors warm slots, and the QueryService.
func startupPool(t *testing.T, ctx context.Context, s *devplane.Stack, ns, pool, qs string, minExecutors int) {
	t.Helper()
	if err := ensureNamespace(ctx, s.Client, ns); err != nil {
		t.Fatal(err)
	}
	mustApply(t, ctx, s.Cluster.Config, poolManifest(ns, pool, fmt.Sprintf(`
  minExecutors: %d
  maxExecutors: 2
  instanceConfig: {instanceType: m7i.xlarge}
  allowedQueryServices:
    - {name: %s, namespace: %s}
`, minExecutors, qs, ns)))
	mustApply(t, ctx, s.Cluster.Config, fmt.Sprintf(`apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata: {name: %s, namespace: %s}
spec:
  executor:
    image: registry.example.com/e6data/executor:%s
    resources: {cpu: 2500m, memory: 8Gi}
    poolRef: {name: %s, namespace: %s}
`, qs, ns, pool, pool, ns))
	t.Cleanup(func() {
		ctx := context.Background()
		_ = deleteExecutors(ctx, s.Client, ns, qs)
		p := &unstructured.Unstructured{}
		p.SetGroupVersionKind(gvk(claimAPI, "Pool"))
		p.SetNamespace(ns)
		p.SetName(pool)
		_ = s.Client.Delete(ctx, p)
	})
}

// podsOf lists the pods of ns with labels.
func podsOf(ctx context.Context, c client.Client, ns string, labels map[string]string) ([]corev1.Pod, error) {
	l := &corev1.PodList{}
	err := c.List(ctx, l, client.InNamespace(ns), client.MatchingLabels(labels))
	return l.Items, err
}

// poolNodeClaims names the NodeClaims Karpenter launched for pool's NodePool.
func poolNodeClaims(ctx context.Context, c client.Client, pool string) ([]string, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk(karpenterAPI, "NodeClaimList"))
	if err := c.List(ctx, l, client.MatchingLabels{"karpenter.sh/nodepool": pool + "-nodepool"}); err != nil {
		return nil, err
	}
	var out []string
	for _, n := range l.Items {
		out = append(out, n.GetName())
	}
	sort.Strings(out)
	return out, nil
}

// eventsOf lists "reason: message" of the events about kind/name in ns
// (cluster-scoped objects' events are in default).
func eventsOf(ctx context.Context, c client.Client, ns, kind, name string) []string {
	l := &corev1.EventList{}
	if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
		return []string{err.Error()}
	}
	at := func(e corev1.Event) time.Time {
		if e.LastTimestamp.IsZero() {
			return e.EventTime.Time
		}
		return e.LastTimestamp.Time
	}
	sort.SliceStable(l.Items, func(i, j int) bool { return at(l.Items[i]).Before(at(l.Items[j])) })
	var out []string
	for _, e := range l.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, fmt.Sprintf("%s %s: %s", at(e).UTC().Format("15:04:05.000"), e.Reason, e.Message))
		}
	}
	return out
}

func hasWarmingTaint(n *corev1.Node) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == qsv1.TaintWarming })
}

// scenarioWarmBeforeSchedule bursts one executor onto a pool without warm
// nodes: Karpenter launches a node with the startup taint, the warmup pod
// pulls for modelledPull, and the executor, created before the node, is
// not started on it until the pull ends; Karpenter launches no second node
// for the waiting executor (it counts the in-flight node, startup taint
// ignored: sigs.k8s.io/karpenter@v1.14.1 pkg/controllers/state/statenode.go).
func scenarioWarmBeforeSchedule(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	const pool, qs = "warm-start", "warm-start-qs"
	c := s.Client
	startupPool(t, ctx, s, warmStartNS, pool, qs, 0)
	sched := executorScheduling(t, c, warmStartNS, pool)
	start := time.Now()
	if err := c.Create(ctx, devplane.ExecutorDeployment(warmStartNS, qs, "registry.example.com/e6data/executor:"+pool, 1, "2500m", "8Gi", sched)); err != nil {
		t.Fatal(err)
	}
	warmup := map[string]string{qsv1.LabelPool: pool, qsv1.LabelComponent: qsv1.ComponentWarmup}
	var pod corev1.Pod
	eventually(t, waitNodes, "a warmup pod bound to a new pool node", func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, c, warmStartNS, warmup)
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				pod = p
				return true, nil
			}
		}
		return false, fmt.Errorf("%d warmup pods, none bound (%v)", len(pods), err)
	})
	node := pod.Spec.NodeName
	n := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		t.Fatal(err)
	}
	if !hasWarmingTaint(n) {
		t.Fatalf("new pool node %s lacks the startup taint %s: %v", node, qsv1.TaintWarming, n.Spec.Taints)
	}
	// The pull ends modelledPull from now.
	pullEnd := time.Now().Add(modelledPull).UTC().Truncate(time.Second)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[burstsim.AnnotationStartAt] = pullEnd.Format(time.RFC3339)
	if err := c.Update(ctx, &pod); err != nil {
		t.Fatalf("cannot end the modelled pull of %s: %v", pod.Name, err)
	}
	claims, err := poolNodeClaims(ctx, c, pool)
	if err != nil || len(claims) != 1 {
		t.Fatalf("NodeClaims %v (%v), want one", claims, err)
	}
	executors := map[string]string{qsv1.LabelPool: pool, qsv1.LabelQueryService: qs}
	for time.Now().Before(pullEnd) {
		pods, err := podsOf(ctx, c, warmStartNS, executors)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			if p.Spec.NodeName != "" {
				t.Fatalf("executor %s bound to %s at %s, before the pull ended at %s", p.Name, p.Spec.NodeName, time.Now().UTC().Format(time.TimeOnly), pullEnd.Format(time.TimeOnly))
			}
		}
		if got, err := poolNodeClaims(ctx, c, pool); err != nil || !slices.Equal(got, claims) {
			t.Fatalf("NodeClaims %v (%v) while the executor waits for the pull, want %v: a node launched for a pod that waits for a warming node", got, err, claims)
		}
		time.Sleep(250 * time.Millisecond)
	}
	took := waitExecutors(t, waitStatus, "the executor Running once the pull ends", c, warmStartNS, pool, 1)
	pods, err := podsOf(ctx, c, warmStartNS, executors)
	if err != nil || len(pods) != 1 {
		t.Fatalf("executor pods %d (%v), want 1", len(pods), err)
	}
	ex := pods[0]
	if ex.Spec.NodeName != node {
		t.Errorf("executor runs on %s, want the warmed node %s", ex.Spec.NodeName, node)
	}
	var scheduled time.Time
	for _, cd := range ex.Status.Conditions {
		if cd.Type == corev1.PodScheduled && cd.Status == corev1.ConditionTrue {
			scheduled = cd.LastTransitionTime.Time
		}
	}
	t.Logf("executor created %s, pull ended %s, executor scheduled %s, Running %s after the pull ended",
		start.UTC().Format(time.TimeOnly), pullEnd.Format(time.TimeOnly), scheduled.UTC().Format(time.TimeOnly), took.Round(10*time.Millisecond))
	if scheduled.Before(pullEnd) {
		t.Errorf("executor scheduled at %s, before the pull ended at %s", scheduled.UTC().Format(time.TimeOnly), pullEnd.Format(time.TimeOnly))
	}
	evs := eventsOf(ctx, c, warmStartNS, "Pod", ex.Name)
	t.Logf("executor %s events:\n  %s", ex.Name, strings.Join(evs, "\n  "))
	if !slices.ContainsFunc(evs, func(e string) bool {
		return strings.Contains(e, "FailedScheduling") && strings.Contains(e, "untolerated taint")
	}) {
		t.Errorf("no FailedScheduling event of executor %s says the warming node's taint kept it off", ex.Name)
	}
	opened := eventsOf(ctx, c, "default", "PoolCapacity", pool+"-capacity")
	t.Logf("PoolCapacity %s-capacity events:\n  %s", pool, strings.Join(opened, "\n  "))
	if !slices.ContainsFunc(opened, func(e string) bool { return strings.Contains(e, "NodeOpened:") && strings.Contains(e, node) }) {
		t.Errorf("no NodeOpened event names node %s", node)
	}
	// The node carries the event too: kubectl describe node shows it.
	onNode := eventsOf(ctx, c, "default", "Node", node)
	t.Logf("node %s events:\n  %s", node, strings.Join(onNode, "\n  "))
	if !slices.ContainsFunc(onNode, func(e string) bool { return strings.Contains(e, "NodeOpened:") }) {
		t.Errorf("node %s has no NodeOpened event", node)
	}
}

// scenarioGivebackLaunchesNoNode holds one warm slot; an executor preempts
// its placeholder, and the placeholder's replacement, which the pool gives
// back, stays gated until the pool lowers its replicas: no NodeClaim is
// launched for it. Karpenter provisions
// only for pods the scheduler marked Unschedulable, and a gated pod is
// SchedulingGated instead (sigs.k8s.io/karpenter@v1.14.1
// pkg/utils/pod/scheduling.go, FailedToSchedule).
func scenarioGivebackLaunchesNoNode(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	const pool, qs = "giveback", "giveback-qs"
	c := s.Client
	startupPool(t, ctx, s, warmGivebackNS, pool, qs, 1)
	placeholders := map[string]string{qsv1.LabelPool: pool, qsv1.LabelComponent: qsv1.ComponentPlaceholder}
	eventually(t, waitNodes, "the warm slot's placeholder Running on an open pool node", func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, c, warmGivebackNS, placeholders)
		for _, p := range pods {
			n := &corev1.Node{}
			if p.Status.Phase == corev1.PodRunning && c.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, n) == nil && !hasWarmingTaint(n) {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d placeholders, none Running on an open node (%v)", len(pods), err)
	})
	claims, err := poolNodeClaims(ctx, c, pool)
	if err != nil || len(claims) != 1 {
		t.Fatalf("NodeClaims %v (%v), want one", claims, err)
	}
	sched := executorScheduling(t, c, warmGivebackNS, pool)
	// The pool lowers its placeholders' replicas when its composition runs
	// again after the executor starts: within seconds here, later where
	// Crossplane's watch circuit is open or the function is slow. Pausing
	// the composite stretches that window past Karpenter's batch window
	// (1s idle, 10s at most), so that a placeholder left to the
	// scheduler would get a node in it.
	pauseComposite(t, ctx, s, warmGivebackNS, pool, true)
	if err := c.Create(ctx, devplane.ExecutorDeployment(warmGivebackNS, qs, "registry.example.com/e6data/executor:"+pool, 1, "2500m", "8Gi", sched)); err != nil {
		t.Fatal(err)
	}
	took := waitExecutors(t, waitReconcile, "the executor Running in the warm slot", c, warmGivebackNS, pool, 1)
	t.Logf("executor in the warm slot: %s", took.Round(10*time.Millisecond))
	deadline := time.Now().Add(givebackQuietTime)
	for time.Now().Before(deadline) {
		if got, err := poolNodeClaims(ctx, c, pool); err != nil || !slices.Equal(got, claims) {
			pods, _ := podsOf(ctx, c, warmGivebackNS, placeholders)
			var st []string
			for _, p := range pods {
				st = append(st, fmt.Sprintf("%s gates=%v node=%q", p.Name, p.Spec.SchedulingGates, p.Spec.NodeName))
			}
			t.Fatalf("NodeClaims %v (%v), want %v: a node launched for the slot the pool gives back; placeholders: %v", got, err, claims, st)
		}
		time.Sleep(500 * time.Millisecond)
	}
	pauseComposite(t, ctx, s, warmGivebackNS, pool, false)
	eventually(t, waitReconcile, "the pool gives the slot back: no placeholder left", func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, c, warmGivebackNS, placeholders)
		return len(pods) == 0, fmt.Errorf("%d placeholders (%v)", len(pods), err)
	})
	if err := deleteExecutors(ctx, c, warmGivebackNS, qs); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitReconcile, "the warm slot refilled once the executor is gone", func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, c, warmGivebackNS, placeholders)
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d placeholders, none Running (%v)", len(pods), err)
	})
}

// pauseComposite sets or removes crossplane.io/paused on the composite of
// Pool claim ns/name: while it is set, Crossplane does not compose it.
func pauseComposite(t *testing.T, ctx context.Context, s *devplane.Stack, ns, name string, paused bool) {
	t.Helper()
	xr, err := compositeIn(ctx, s, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if paused {
		v = "true"
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"crossplane.io/paused": v}}})
	if err := s.Client.Patch(ctx, xr, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("cannot set crossplane.io/paused=%t on %s %s: %v", paused, xr.GetKind(), xr.GetName(), err)
	}
}
