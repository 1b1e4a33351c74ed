package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	poolv1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// A second tenant beside e6-pools.
const (
	tenantNS     = "tenant-b"
	tenantWS     = "workspace-tenant-b"
	tenantPool   = "tenant-b-burst-pool"
	tenantQS     = "tenant-b-analytics"
	rogueNS      = "workspace-rogue"
	rogueQS      = "rogue-b"
	tenantTaint  = "dedicated"
	tenantExecs  = 2
	tenantImage  = "registry.example.com/tenant-b/executor:1"
	tenantCPU    = "2"
	tenantMemory = "4Gi"
)

// settledState waits until the state of pool ns/name (poolState) reads the
// same twice, settleGap apart, and returns it.
func settledState(t *testing.T, s *devplane.Stack, ns, name string) string {
	t.Helper()
	var state string
	eventually(t, waitStatus, fmt.Sprintf("%s/%s settled (the same twice, %s apart)", ns, name, settleGap), func(ctx context.Context) (bool, error) {
		a := poolState(t, ctx, s, ns, name)
		time.Sleep(settleGap)
		state = poolState(t, ctx, s, ns, name)
		return a == state, fmt.Errorf("changing:\n%s\n%s", a, state)
	})
	return state
}

// poolState is what must not change about a pool while another tenant
// acts: its nodes, its pods and where they run (its node agents by
// DaemonSet), its NodePool's spec
// generation and owner, and its counts.
func poolState(t *testing.T, ctx context.Context, s *devplane.Stack, ns, name string) string {
	t.Helper()
	c := s.Client
	var b strings.Builder
	nodes := &corev1.NodeList{}
	mustList(t, ctx, c, nodes, identity(ns, name))
	var ns1 []string
	for _, n := range nodes.Items {
		ns1 = append(ns1, n.Name)
	}
	sort.Strings(ns1)
	fmt.Fprintf(&b, "nodes %v\n", ns1)
	pods := &corev1.PodList{}
	mustList(t, ctx, c, pods, client.MatchingLabels{qsv1.LabelPool: name})
	var ps []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		// The pool's node agents (warmup, storage agent) by DaemonSet and
		// node: the DaemonSet controller may replace one, which no tenant
		// can, and what counts is that each node has its agents.
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "DaemonSet" {
			ps = append(ps, fmt.Sprintf("%s/%s@%s", p.Namespace, ref.Name, p.Spec.NodeName))
			continue
		}
		ps = append(ps, fmt.Sprintf("%s/%s@%s", p.Namespace, p.Name, p.Spec.NodeName))
	}
	sort.Strings(ps)
	fmt.Fprintf(&b, "pods %v\n", ps)
	np, err := readNodePool(ctx, s.Client, name)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "nodepool generation %d labels %v\n", np.GetGeneration(), np.GetLabels())
	p, err := claimIn(ctx, s, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "counts %s\n", countsOf(p))
	return b.String()
}

// testSameNameRefused: a second tenant's claim named burst-pool, beside
// e6-pools/burst-pool, is refused on its claim, and the first pool is
// untouched.
func testSameNameRefused(t *testing.T, ctx context.Context, s *devplane.Stack) {
	cfg := s.Cluster.Config
	c := s.Client
	before := settledState(t, s, poolNS, "burst-pool")
	mustApply(t, ctx, cfg, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: e6data.io/v1alpha1
kind: Pool
metadata: {name: burst-pool, namespace: %[1]s}
spec:
  minExecutors: 1
  maxExecutors: 4
  instanceConfig: {instanceType: r7gd.4xlarge}
  allowedQueryServices: [{name: %[2]s, namespace: %[3]s}]
`, tenantNS, tenantQS, tenantWS))
	took := eventually(t, waitStatus, "tenant-b/burst-pool refused on its claim, naming e6-pools/burst-pool", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, tenantNS, "burst-pool")
		if err != nil {
			return false, err
		}
		status, reason, msg := conditionFields(p, "NodesProvisioned")
		ok := st.Phase == "Failed" && status == "False" && reason == "NameTaken" &&
			strings.Contains(msg, "PoolCapacity burst-pool-capacity belongs to pool e6-pools/burst-pool")
		return ok, fmt.Errorf("phase %q NodesProvisioned %s %s: %s", st.Phase, status, reason, msg)
	})
	t.Logf("second burst-pool refused on its claim: %s", took.Round(100*time.Millisecond))
	// Give Crossplane, Karpenter and the provider time to act, had the
	// refused pool composed anything.
	time.Sleep(quietWindow)
	if after := poolState(t, ctx, s, poolNS, "burst-pool"); after != before {
		t.Errorf("e6-pools/burst-pool changed while tenant-b/burst-pool was refused:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, l := range []client.ObjectList{&corev1.PodList{}, &corev1.NodeList{}} {
		mustList(t, ctx, c, l, identity(tenantNS, "burst-pool"))
		if n := meta.LenList(l); n != 0 {
			t.Errorf("the refused pool has %d %T items", n, l)
		}
	}
	capa, err := s.Get(ctx, gvk(capacityAPI, "PoolCapacity"), "", "burst-pool-capacity")
	if err != nil {
		t.Fatal(err)
	}
	if capa.GetLabels()[qsv1.LabelPoolNamespace] != poolNS {
		t.Errorf("PoolCapacity burst-pool-capacity now belongs to %v", capa.GetLabels())
	}
}

// tenantPoolManifest is tenant-b's own pool under a name of its own, with a
// taint of its own (spec.tolerations) and the given policy.
func tenantPoolManifest(policy string) string {
	return poolManifest(tenantNS, tenantPool, fmt.Sprintf(`
  minExecutors: 1
  maxExecutors: 6
  unauthorizedExecutors: %s
  allowedQueryServices: [{name: %s, namespace: %s}]
  tolerations:
    - {key: %s, operator: Equal, value: %s, effect: NoSchedule}
`, policy, tenantQS, tenantWS, tenantTaint, tenantNS))
}

// tenantQSManifest is a QueryService in ns that points at tenant-b's pool.
func tenantQSManifest(ns, name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  executor:
    image: %[3]s
    resources: {cpu: "%[4]s", memory: %[5]s}
    poolRef: {name: %[6]s, namespace: %[7]s}
`, ns, name, tenantImage, tenantCPU, tenantMemory, tenantPool, tenantNS)
}

// waitAttached waits until pool ns/name reports QueryService qsNS/qs
// attached: from then on its admission policy admits the QueryService's
// executors.
func waitAttached(t *testing.T, s *devplane.Stack, ns, name, qsNS, qs string) {
	t.Helper()
	eventually(t, waitStatus, qsNS+"/"+qs+" attached to "+ns+"/"+name, func(ctx context.Context) (bool, error) {
		p, err := claimIn(ctx, s, ns, name)
		if err != nil {
			return false, err
		}
		if m := attachedOf(p, qsNS, qs); m != nil {
			return m["attached"] == true, fmt.Errorf("%v", m)
		}
		return false, fmt.Errorf("%s/%s not listed", qsNS, qs)
	})
}

// testSecondTenantPool: tenant-b's own pool, named differently, with a
// taint of its own and Evict, beside e2e-burst (Evict) whose executors
// run: tenant-b's executors follow the published contract and run; no pod
// of either pool lands on the other's nodes; neither pool's Evict touches
// the other's executors.
func testSecondTenantPool(t *testing.T, ctx context.Context, s *devplane.Stack, first burst) {
	cfg := s.Cluster.Config
	c := s.Client
	if err := ensureNamespace(ctx, c, tenantNS); err != nil {
		t.Fatal(err)
	}
	mustApply(t, ctx, cfg, tenantQSManifest(tenantWS, tenantQS))
	mustApply(t, ctx, cfg, tenantPoolManifest("Evict"))
	t.Cleanup(func() { deleteTenantExecutors(t, c) })
	es := executorScheduling(t, c, tenantNS, tenantPool)
	if !slices.ContainsFunc(es.Tolerations, func(tol poolv1.Toleration) bool { return tol.Key == tenantTaint && tol.Value == tenantNS }) {
		t.Errorf("%s publishes tolerations %v: want one of its spec.tolerations taint %s=%s", tenantPool, es.Tolerations, tenantTaint, tenantNS)
	}
	np, err := readNodePool(ctx, s.Client, tenantPool)
	if err != nil {
		t.Fatal(err)
	}
	if taints, _, _ := unstructured.NestedSlice(np.Object, "spec", "template", "spec", "taints"); !strings.Contains(fmt.Sprint(taints), tenantTaint) {
		t.Errorf("NodePool %s-nodepool taints %v lack %s", tenantPool, taints, tenantTaint)
	}
	waitAttached(t, s, tenantNS, tenantPool, tenantWS, tenantQS)
	_, firstBefore := placement(t, ctx, c, first.poolNS, first.pool)
	if err := c.Create(ctx, devplane.ExecutorDeployment(tenantWS, tenantQS, tenantImage, tenantExecs, tenantCPU, tenantMemory, es)); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	took := waitExecutors(t, waitNodes, "tenant-b's executors Running on its own pool nodes, tainted with its spec.tolerations", c, tenantWS, tenantPool, tenantExecs)
	t.Logf("tenant-b burst -> %d executors Running: %s", tenantExecs, took.Round(100*time.Millisecond))
	eventually(t, waitStatus, "tenant-b's pool counts its executors, and the slots of its nodes tainted by spec.tolerations", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, tenantNS, tenantPool)
		if err != nil {
			return false, err
		}
		return st.OccupiedExecutors == tenantExecs && st.TotalExecutors >= st.OccupiedExecutors, fmt.Errorf("counts %s", countsOf(p))
	})
	// Both pools in Evict mode have had time to act on any pod they took
	// for unauthorized.
	time.Sleep(quietWindow)

	firstNodes, firstAfter := placement(t, ctx, c, first.poolNS, first.pool)
	second, secondPods := placement(t, ctx, c, tenantNS, tenantPool)
	for pod, node := range secondPods {
		if firstNodes[node] {
			t.Errorf("tenant-b's pod %s runs on %s, a node of %s/%s", pod, node, first.poolNS, first.pool)
		}
	}
	for pod, node := range firstAfter {
		if second[node] {
			t.Errorf("%s's pod %s runs on %s, a node of tenant-b's pool", first.pool, pod, node)
		}
	}
	if moved := executorsMovedIn(first.qsNS, firstBefore, firstAfter); len(moved) > 0 {
		t.Errorf("%s's executors moved: tenant-b's pool touched them: %v", first.pool, moved)
	}
	for _, p := range []struct{ ns, name string }{{first.poolNS, first.pool}, {tenantNS, tenantPool}} {
		capa, err := s.Get(ctx, gvk(capacityAPI, "PoolCapacity"), "", p.name+"-capacity")
		if err != nil {
			t.Fatal(err)
		}
		if un, _, _ := unstructured.NestedSlice(capa.Object, "status", "atProvider", "unauthorizedExecutors"); len(un) > 0 {
			t.Errorf("%s/%s reports unauthorized executors %v", p.ns, p.name, un)
		}
		for _, e := range capacityEvents(t, ctx, c, p.name) {
			if strings.Contains(e.Message, "Deleted pod") {
				t.Errorf("%s/%s evicted: %s", p.ns, p.name, e.Message)
			}
		}
	}
}

// testDenyMode: tenant-b's pool in Deny mode. A QueryService outside its
// allow rules creates a pool executor Deployment that follows the pool's
// contract: its pods are rejected at admission with the policy's message,
// which the ReplicaSet's events carry; the allowed QueryService's new
// executors still run.
func testDenyMode(t *testing.T, ctx context.Context, s *devplane.Stack) {
	cfg := s.Cluster.Config
	c := s.Client
	if err := ensureNamespace(ctx, c, tenantNS); err != nil {
		t.Fatal(err)
	}
	mustApply(t, ctx, cfg, tenantQSManifest(tenantWS, tenantQS))
	mustApply(t, ctx, cfg, tenantPoolManifest("Deny"))
	t.Cleanup(func() { deleteTenantExecutors(t, c) })
	// tenant-b's QueryService runs its executors on its pool.
	waitAttached(t, s, tenantNS, tenantPool, tenantWS, tenantQS)
	if err := c.Create(ctx, devplane.ExecutorDeployment(tenantWS, tenantQS, tenantImage, tenantExecs, tenantCPU, tenantMemory, executorScheduling(t, c, tenantNS, tenantPool))); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	waitExecutors(t, waitNodes, "tenant-b's executors Running on its own pool nodes", c, tenantWS, tenantPool, tenantExecs)
	eventually(t, waitStatus, "tenant-b's pool composes its admission policy", func(ctx context.Context) (bool, error) {
		_, err := s.Get(ctx, gvk("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"), "", "burstpool-access."+tenantNS+"."+tenantPool)
		return err == nil, err
	})
	mustApply(t, ctx, cfg, tenantQSManifest(rogueNS, rogueQS))
	es := executorScheduling(t, c, tenantNS, tenantPool)
	rogue := devplane.ExecutorDeployment(rogueNS, rogueQS, tenantImage, 1, tenantCPU, tenantMemory, es)
	// The API server enforces a new policy within about a second of its
	// creation: probe with a dry-run pod of the Deployment's template.
	eventually(t, waitReconcile, "the API server enforces tenant-b's admission policy", func(ctx context.Context) (bool, error) {
		probe := &corev1.Pod{ObjectMeta: rogue.Spec.Template.ObjectMeta, Spec: rogue.Spec.Template.Spec}
		probe.Namespace, probe.GenerateName = rogueNS, "probe-"
		err := c.Create(ctx, probe, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "admits only executors"), fmt.Errorf("dry-run create: %v", err)
	})
	if err := c.Create(ctx, rogue); err != nil {
		t.Fatal(err)
	}
	var msg string
	took := eventually(t, waitStatus, "the rogue executors' ReplicaSet reports the policy's rejection", func(ctx context.Context) (bool, error) {
		ev := &corev1.EventList{}
		if err := c.List(ctx, ev, client.InNamespace(rogueNS)); err != nil {
			return false, err
		}
		for _, e := range ev.Items {
			if e.InvolvedObject.Kind == "ReplicaSet" && e.Reason == "FailedCreate" {
				msg = e.Message
				return strings.Contains(msg, "pool "+tenantNS+"/"+tenantPool+" admits only executors") &&
					strings.Contains(msg, "QueryService "+rogueNS+"/"+rogueQS+" is not one") && strings.Contains(msg, "spec.allowedQueryServices"), fmt.Errorf("event %q", msg)
			}
		}
		return false, fmt.Errorf("no FailedCreate event of a ReplicaSet in %s", rogueNS)
	})
	t.Logf("rogue executor rejected at admission (%s): %s", took.Round(100*time.Millisecond), msg)
	pods := &corev1.PodList{}
	mustList(t, ctx, c, pods, client.InNamespace(rogueNS))
	if len(pods.Items) != 0 {
		t.Errorf("%d pods of %s exist; admission should have kept every one out", len(pods.Items), rogueQS)
	}
	// The allowed QueryService bursts further under Deny.
	scaleExecutors(t, ctx, c, tenantWS, tenantQS, tenantExecs+1)
	waitExecutors(t, waitNodes, "the allowed QueryService's new executor admitted and Running", c, tenantWS, tenantPool, tenantExecs+1)
}

// deleteTenantExecutors deletes the executors of tenant-b's QueryService
// and of the rogue one, if they exist, so that the next scenario on
// tenant-b starts from none and the pool's nodes consolidate.
func deleteTenantExecutors(t *testing.T, c client.Client) {
	t.Helper()
	for _, e := range []struct{ ns, qs string }{{tenantWS, tenantQS}, {rogueNS, rogueQS}} {
		if err := deleteExecutors(context.Background(), c, e.ns, e.qs); client.IgnoreNotFound(err) != nil {
			t.Error(err)
		}
	}
}

// placementWindow is how long the second tenant's placement attacks are
// watched before the pool's nodes are checked: kube-scheduler binds a pod
// within about a second of the update that makes it schedulable, and the
// taint-eviction controller deletes a pod that does not tolerate a
// NoExecute taint of its node as soon as it sees it; the window is many
// times both on a loaded machine.
const placementWindow = 45 * time.Second

// testPlacementAttacks: the second tenant, from its own workspace, tries
// each way of running a pod on e6-pools/burst-pool's nodes (the issue's
// attack "Run foreign pods on a pool's nodes"): a gated pod that is then
// pointed at the pool and ungated, a pod selecting a pool node's hostname
// that then adds the pool's tolerations, and pods bound by spec.nodeName
// without, with all, and with only the name taint's tolerations. None of
// them runs on the pool's nodes, and the pool's nodes, pods and counts are
// as before.
func testPlacementAttacks(t *testing.T, ctx context.Context, s *devplane.Stack) {
	c := s.Client
	// The second tenant's workspace, where its attack pods go.
	mustApply(t, ctx, s.Cluster.Config, tenantQSManifest(tenantWS, tenantQS))
	const pool = "burst-pool"
	before := settledState(t, s, poolNS, pool)
	nodes := &corev1.NodeList{}
	mustList(t, ctx, c, nodes, identity(poolNS, pool))
	if len(nodes.Items) == 0 {
		t.Fatal("e6-pools/burst-pool has no nodes to attack")
	}
	poolNodes := map[string]bool{}
	for _, n := range nodes.Items {
		poolNodes[n.Name] = true
	}
	target := nodes.Items[0].Name
	// Select the node by its hostname label; Karpenter's kwok node names
	// can be longer than a label value may be (63 characters), so without
	// the label the pod names it in a required node affinity on
	// metadata.name, as the DaemonSet controller does.
	byHostname := func(p *corev1.Pod) {
		if h, ok := nodes.Items[0].Labels[corev1.LabelHostname]; ok {
			p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: h}
			return
		}
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{target}}}}},
		}}}
	}
	es := executorScheduling(t, c, poolNS, pool)
	nameTolerations := slices.DeleteFunc(devplane.PodTolerations(es.Tolerations), func(tol corev1.Toleration) bool { return tol.Key != qsv1.TaintPool })

	// Every attack pod is the second tenant's, without the pool's labels
	// (so poolState would see only what the pool itself runs).
	attackPod := func(name string, mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenantWS, Labels: map[string]string{qsv1.LabelQueryService: tenantQS, "attack": "placement"}},
			Spec: corev1.PodSpec{
				AutomountServiceAccountToken:  ptr.To(false),
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers:                    []corev1.Container{{Name: "executor", Image: tenantImage}},
			},
		}
		mutate(p)
		return p
	}
	// update applies mutate, again on a conflict (the scheduler and kwok
	// write the pod too), so each attack step reaches admission.
	update := func(name string, mutate func(*corev1.Pod)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: tenantWS, Name: name}, p); err != nil {
				return err
			}
			mutate(p)
			return c.Update(ctx, p)
		})
	}
	// refused logs an attack step that admission refused; any other error
	// means the step was not tried, which fails the test.
	refused := func(what string, err error) bool {
		if err == nil {
			return false
		}
		if !kerrors.IsForbidden(err) && !kerrors.IsInvalid(err) {
			t.Fatalf("%s failed for another reason than admission: %v", what, err)
		}
		t.Logf("%s refused: %v", what, err)
		return true
	}
	attempts := []struct {
		name   string
		pod    *corev1.Pod
		update []func(*corev1.Pod)
	}{
		{name: "gated", pod: attackPod("attack-gated", func(p *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
		}), update: []func(*corev1.Pod){
			func(p *corev1.Pod) {
				p.Spec.NodeSelector = es.NodeSelector
				p.Spec.Tolerations = devplane.PodTolerations(es.Tolerations)
			},
			func(p *corev1.Pod) { p.Spec.SchedulingGates = nil },
		}},
		{name: "hostname", pod: attackPod("attack-hostname", byHostname), update: []func(*corev1.Pod){func(p *corev1.Pod) { p.Spec.Tolerations = devplane.PodTolerations(es.Tolerations) }}},
		{name: "nodename", pod: attackPod("attack-nodename", func(p *corev1.Pod) { p.Spec.NodeName = target })},
		{name: "nodename-tolerations", pod: attackPod("attack-nodename-tolerations", func(p *corev1.Pod) {
			p.Spec.NodeName = target
			p.Spec.Tolerations = devplane.PodTolerations(es.Tolerations)
		})},
		{name: "nodename-name-taint", pod: attackPod("attack-nodename-name-taint", func(p *corev1.Pod) {
			p.Spec.NodeName = target
			p.Spec.Tolerations = nameTolerations
		})},
	}
	t.Cleanup(func() {
		_ = c.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(tenantWS), client.MatchingLabels{"attack": "placement"}, client.GracePeriodSeconds(0))
	})
	for _, a := range attempts {
		if refused(a.name+": create", c.Create(ctx, a.pod)) {
			continue
		}
		for i, u := range a.update {
			refused(fmt.Sprintf("%s: update %d", a.name, i+1), update(a.pod.Name, u))
		}
	}
	// Watch the whole window: a pod may be on a pool node for a moment
	// (bound by nodeName, until evicted), but none may stay.
	deadline := time.Now().Add(placementWindow)
	var on []string
	for time.Now().Before(deadline) {
		time.Sleep(time.Second)
		pods := &corev1.PodList{}
		mustList(t, ctx, c, pods, client.InNamespace(tenantWS), client.MatchingLabels{"attack": "placement"})
		on = on[:0]
		for _, p := range pods.Items {
			if poolNodes[p.Spec.NodeName] && p.DeletionTimestamp == nil {
				on = append(on, fmt.Sprintf("%s@%s(%s)", p.Name, p.Spec.NodeName, p.Status.Phase))
			}
		}
	}
	if len(on) > 0 {
		t.Errorf("the second tenant's pods run on e6-pools/burst-pool's nodes after %s: %v", placementWindow, on)
	}
	if after := poolState(t, ctx, s, poolNS, pool); after != before {
		t.Errorf("e6-pools/burst-pool changed under the placement attacks:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
