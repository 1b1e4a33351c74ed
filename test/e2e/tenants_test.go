package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// claimIn reads the Pool claim ns/name.
func claimIn(ctx context.Context, s *devplane.Stack, ns, name string) (*unstructured.Unstructured, error) {
	return s.Get(ctx, gvk(claimAPI, "Pool"), ns, name)
}

// identity selects what carries pool ns/name's identity labels.
func identity(ns, name string) client.MatchingLabels {
	return client.MatchingLabels{qsv1.LabelPool: name, qsv1.LabelPoolNamespace: ns}
}

// poolState is what must not change about a pool while another tenant
// acts: its nodes, its pods and where they run, its NodePool's spec
// generation and owner, and its counts.
func poolState(t *testing.T, ctx context.Context, s *devplane.Stack, ns, name string) string {
	t.Helper()
	c := s.Client
	var b strings.Builder
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes, identity(ns, name)); err != nil {
		t.Fatal(err)
	}
	var ns1 []string
	for _, n := range nodes.Items {
		ns1 = append(ns1, n.Name)
	}
	sort.Strings(ns1)
	fmt.Fprintf(&b, "nodes %v\n", ns1)
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.MatchingLabels{qsv1.LabelPool: name}); err != nil {
		t.Fatal(err)
	}
	var ps []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			ps = append(ps, fmt.Sprintf("%s/%s@%s", p.Namespace, p.Name, p.Spec.NodeName))
		}
	}
	sort.Strings(ps)
	fmt.Fprintf(&b, "pods %v\n", ps)
	np, err := s.Get(ctx, gvk(karpenterAPI, "NodePool"), "", name+"-nodepool")
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
	var before string
	eventually(t, 2*time.Minute, "e6-pools/burst-pool settled (the same twice, 5s apart)", func(ctx context.Context) (bool, error) {
		a := poolState(t, ctx, s, poolNS, "burst-pool")
		time.Sleep(5 * time.Second)
		before = poolState(t, ctx, s, poolNS, "burst-pool")
		return a == before, fmt.Errorf("changing:\n%s\n%s", a, before)
	})
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
	took := eventually(t, 2*time.Minute, "tenant-b/burst-pool refused on its claim, naming e6-pools/burst-pool", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, tenantNS, "burst-pool")
		if err != nil {
			return false, err
		}
		phase := st.Phase
		cond := conditionOf(p, "NodesProvisioned")
		ok := phase == "Failed" && cond["status"] == "False" && cond["reason"] == "NameTaken" &&
			strings.Contains(fmt.Sprint(cond["message"]), "PoolCapacity burst-pool-capacity belongs to pool e6-pools/burst-pool")
		return ok, fmt.Errorf("phase %q NodesProvisioned %v", phase, cond)
	})
	t.Logf("second burst-pool refused on its claim: %s", took.Round(100*time.Millisecond))
	// Give Crossplane, Karpenter and the provider time to act, had the
	// refused pool composed anything.
	time.Sleep(15 * time.Second)
	if after := poolState(t, ctx, s, poolNS, "burst-pool"); after != before {
		t.Errorf("e6-pools/burst-pool changed while tenant-b/burst-pool was refused:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, l := range []client.ObjectList{&corev1.PodList{}, &corev1.NodeList{}} {
		if err := c.List(ctx, l, identity(tenantNS, "burst-pool")); err != nil {
			t.Fatal(err)
		}
		if n := len(itemsOf(l)); n != 0 {
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

func itemsOf(l client.ObjectList) []any {
	switch l := l.(type) {
	case *corev1.PodList:
		out := make([]any, 0, len(l.Items))
		for _, p := range l.Items {
			out = append(out, p)
		}
		return out
	case *corev1.NodeList:
		out := make([]any, 0, len(l.Items))
		for _, n := range l.Items {
			out = append(out, n)
		}
		return out
	}
	return nil
}

// conditionOf is the condition typ of an object's status.
func conditionOf(u *unstructured.Unstructured, typ string) map[string]any {
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return m
		}
	}
	return nil
}

// tenantPoolManifest is tenant-b's own pool under a name of its own, with a
// taint of its own (spec.tolerations) and the given policy.
func tenantPoolManifest(policy string) string {
	return poolManifest(tenantNS, tenantPool, fmt.Sprintf(`
  compositionRef: {name: %s}
  minExecutors: 1
  maxExecutors: 6
  unauthorizedExecutors: %s
  allowedQueryServices: [{name: %s, namespace: %s}]
  tolerations:
    - {key: %s, operator: Equal, value: %s, effect: NoSchedule}
`, e2eComp, policy, tenantQS, tenantWS, tenantTaint, tenantNS))
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
	eventually(t, 2*time.Minute, qsNS+"/"+qs+" attached to "+ns+"/"+name, func(ctx context.Context) (bool, error) {
		p, err := claimIn(ctx, s, ns, name)
		if err != nil {
			return false, err
		}
		qss, _, _ := unstructured.NestedSlice(p.Object, "status", "attachedQueryServices")
		for _, q := range qss {
			m := q.(map[string]any)
			ref, _ := m["queryService"].(map[string]any)
			if ref["name"] == qs && ref["namespace"] == qsNS {
				return m["attached"] == true, fmt.Errorf("%v", m)
			}
		}
		return false, fmt.Errorf("%s/%s not listed", qsNS, qs)
	})
}

// nodesOf is the set of nodes that carry pool ns/name's identity.
func nodesOf(t *testing.T, ctx context.Context, c client.Client, ns, name string) map[string]bool {
	t.Helper()
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes, identity(ns, name)); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range nodes.Items {
		out[n.Name] = true
	}
	return out
}

// podsByPool lists the running pods of pool ns/name (executors,
// placeholders, warmup) as "namespace/name" -> node.
func podsByPool(t *testing.T, ctx context.Context, c client.Client, ns, name string) map[string]string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, identity(ns, name)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
			out[p.Namespace+"/"+p.Name] = p.Spec.NodeName
		}
	}
	return out
}

// testSecondTenantPool: tenant-b's own pool, named differently, with a
// taint of its own and Evict, beside e2e-burst (Evict) whose executors
// run: tenant-b's executors follow the published contract and run; no pod
// of either pool lands on the other's nodes; neither pool's Evict touches
// the other's executors.
func testSecondTenantPool(t *testing.T, ctx context.Context, s *devplane.Stack) {
	cfg := s.Cluster.Config
	c := s.Client
	mustApply(t, ctx, cfg, tenantQSManifest(tenantWS, tenantQS))
	mustApply(t, ctx, cfg, tenantPoolManifest("Evict"))
	es := executorScheduling(t, c, tenantNS, tenantPool)
	if !slices.ContainsFunc(es.Tolerations, func(tol poolv1.Toleration) bool { return tol.Key == tenantTaint && tol.Value == tenantNS }) {
		t.Errorf("%s publishes tolerations %v: want one of its spec.tolerations taint %s=%s", tenantPool, es.Tolerations, tenantTaint, tenantNS)
	}
	np, err := s.Get(ctx, gvk(karpenterAPI, "NodePool"), "", tenantPool+"-nodepool")
	if err != nil {
		t.Fatal(err)
	}
	if taints, _, _ := unstructured.NestedSlice(np.Object, "spec", "template", "spec", "taints"); !strings.Contains(fmt.Sprint(taints), tenantTaint) {
		t.Errorf("NodePool %s-nodepool taints %v lack %s", tenantPool, taints, tenantTaint)
	}
	waitAttached(t, s, tenantNS, tenantPool, tenantWS, tenantQS)
	firstBefore := podsByPool(t, ctx, c, poolNS, e2ePool)
	if err := c.Create(ctx, devplane.ExecutorDeployment(tenantWS, tenantQS, tenantImage, tenantExecs, tenantCPU, tenantMemory, es)); err != nil {
		t.Fatal(err)
	}
	took := eventually(t, 3*time.Minute, "tenant-b's executors Running on its own pool nodes, tainted with its spec.tolerations", func(ctx context.Context) (bool, error) {
		n, err := podsOn(ctx, c, tenantWS, map[string]string{qsv1.LabelPool: tenantPool, qsv1.LabelExecutorType: qsv1.ExecutorTypePool}, "")
		return n == tenantExecs, fmt.Errorf("%d of %d Running (%v)", n, tenantExecs, err)
	})
	t.Logf("tenant-b burst -> %d executors Running: %s", tenantExecs, took.Round(100*time.Millisecond))
	eventually(t, 2*time.Minute, "tenant-b's pool counts its executors, and the slots of its nodes tainted by spec.tolerations", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, tenantNS, tenantPool)
		if err != nil {
			return false, err
		}
		return st.OccupiedExecutors == tenantExecs && st.TotalExecutors >= st.OccupiedExecutors, fmt.Errorf("counts %s", countsOf(p))
	})
	// Both pools in Evict mode have had time to act on any pod they took
	// for unauthorized.
	time.Sleep(15 * time.Second)

	first, second := nodesOf(t, ctx, c, poolNS, e2ePool), nodesOf(t, ctx, c, tenantNS, tenantPool)
	for pod, node := range podsByPool(t, ctx, c, tenantNS, tenantPool) {
		if first[node] {
			t.Errorf("tenant-b's pod %s runs on %s, a node of %s/%s", pod, node, poolNS, e2ePool)
		}
	}
	for pod, node := range podsByPool(t, ctx, c, poolNS, e2ePool) {
		if second[node] {
			t.Errorf("%s's pod %s runs on %s, a node of tenant-b's pool", e2ePool, pod, node)
		}
	}
	firstAfter := podsByPool(t, ctx, c, poolNS, e2ePool)
	for pod, node := range firstBefore {
		if strings.HasPrefix(pod, analyticsNS+"/") && firstAfter[pod] != node {
			t.Errorf("%s's executor %s was on %s and is now %q: tenant-b's pool touched it", e2ePool, pod, node, firstAfter[pod])
		}
	}
	for _, p := range []struct{ ns, name string }{{poolNS, e2ePool}, {tenantNS, tenantPool}} {
		capa, err := s.Get(ctx, gvk(capacityAPI, "PoolCapacity"), "", p.name+"-capacity")
		if err != nil {
			t.Fatal(err)
		}
		if un, _, _ := unstructured.NestedSlice(capa.Object, "status", "atProvider", "unauthorizedExecutors"); len(un) > 0 {
			t.Errorf("%s/%s reports unauthorized executors %v", p.ns, p.name, un)
		}
		ev := &corev1.EventList{}
		if err := c.List(ctx, ev); err != nil {
			t.Fatal(err)
		}
		for _, e := range ev.Items {
			if e.InvolvedObject.Name == p.name+"-capacity" && strings.Contains(e.Message, "Deleted pod") {
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
	mustApply(t, ctx, cfg, tenantPoolManifest("Deny"))
	eventually(t, 2*time.Minute, "tenant-b's pool composes its admission policy", func(ctx context.Context) (bool, error) {
		_, err := s.Get(ctx, gvk("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"), "", "burstpool-access."+tenantNS+"."+tenantPool)
		return err == nil, err
	})
	mustApply(t, ctx, cfg, tenantQSManifest(rogueNS, rogueQS))
	es := executorScheduling(t, c, tenantNS, tenantPool)
	rogue := devplane.ExecutorDeployment(rogueNS, rogueQS, tenantImage, 1, tenantCPU, tenantMemory, es)
	// The API server enforces a new policy within about a second of its
	// creation: probe with a dry-run pod of the Deployment's template.
	eventually(t, time.Minute, "the API server enforces tenant-b's admission policy", func(ctx context.Context) (bool, error) {
		probe := &corev1.Pod{ObjectMeta: rogue.Spec.Template.ObjectMeta, Spec: rogue.Spec.Template.Spec}
		probe.Namespace, probe.GenerateName = rogueNS, "probe-"
		err := c.Create(ctx, probe, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "admits only executors"), fmt.Errorf("dry-run create: %v", err)
	})
	if err := c.Create(ctx, rogue); err != nil {
		t.Fatal(err)
	}
	var msg string
	took := eventually(t, 2*time.Minute, "the rogue executors' ReplicaSet reports the policy's rejection", func(ctx context.Context) (bool, error) {
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
	if err := c.List(ctx, pods, client.InNamespace(rogueNS)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods of %s exist; admission should have kept every one out", len(pods.Items), rogueQS)
	}
	// The allowed QueryService bursts further under Deny.
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: tenantWS, Name: devplane.ExecutorDeploymentName(tenantQS)}, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To[int32](tenantExecs + 1)
	if err := c.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "the allowed QueryService's new executor admitted and Running", func(ctx context.Context) (bool, error) {
		n, err := podsOn(ctx, c, tenantWS, map[string]string{qsv1.LabelPool: tenantPool, qsv1.LabelExecutorType: qsv1.ExecutorTypePool}, "")
		return n == tenantExecs+1, fmt.Errorf("%d of %d Running (%v)", n, tenantExecs+1, err)
	})
	// Leave the pool's nodes to consolidate for the scenarios after.
	for _, ns := range []string{tenantWS, rogueNS} {
		if err := c.DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace(ns)); err != nil {
			t.Error(err)
		}
	}
}
