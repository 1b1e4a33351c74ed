package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/devplane"
)

// driftQuietFor is how long a drifted node that runs executors is watched
// for a disruption that must not come: Karpenter's disruption controller
// polls every 10s and waits 15s before it acts on a candidate (karpenter
// v1.14.1 pkg/controllers/disruption).
const driftQuietFor = 75 * time.Second

// testDriftWaitsForExecutors drifts a pool's nodes while an executor runs
// (a new spec.nodeSelector label becomes a NodePool requirement the node
// does not meet: Karpenter's requirements drift; the executor would still
// fit a replacement, so only the budgets and do-not-disrupt keep it) and
// checks that Karpenter marks the node Drifted but neither drains nor
// replaces it while the executor runs; once the executor is gone the node
// goes, and the next executor runs on a node of the new requirement.
func testDriftWaitsForExecutors(t *testing.T, ctx context.Context, s *devplane.Stack, c client.Client, cfg restConfig) {
	const pool, qs = "drift-pool", "drift-pool-qs"
	disruptionNamespaces(t, ctx, c)
	spec := func(nodeSelector string) string {
		return poolManifest(poolNS, pool, fmt.Sprintf(`
  maxExecutors: 2
  imageConfig: {autoCollectImages: false}
  instanceConfig: {instanceType: m7i.xlarge}
  nodeSelector: {%s}
  queryServiceSelector:
    matchLabels: {e2e.burstpool.io/pool: %s}
`, nodeSelector, pool))
	}
	mustApply(t, ctx, cfg, spec(""))
	mustApply(t, ctx, cfg, qsManifest(qs, pool, "1", "2Gi"))
	sched := executorScheduling(t, c, poolNS, pool)
	if sched.Annotations["karpenter.sh/do-not-disrupt"] != "true" {
		t.Fatalf("status.executorScheduling.annotations = %v, want karpenter.sh/do-not-disrupt: \"true\"", sched.Annotations)
	}
	if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, qs, "registry.example.com/e6data/executor:"+pool, 1, "1", "2Gi", sched)); err != nil {
		t.Fatal(err)
	}
	waitExecutors(t, waitNodes, "one executor Running", c, analyticsNS, pool, 1)
	nodes := poolNodes(t, ctx, c, pool)
	if len(nodes) != 1 {
		t.Fatalf("%d pool nodes, want 1", len(nodes))
	}
	old := nodes[0].Name

	// A rollout: the pool's nodes need a new label, which drifts them.
	mustApply(t, ctx, cfg, spec("e2e.burstpool.io/rollout: \"2\""))
	took := eventually(t, waitSlow, "Karpenter marks the executor's node Drifted", func(ctx context.Context) (bool, error) {
		d, err := nodeClaimDrifted(ctx, c, old)
		return d, fmt.Errorf("node %s not Drifted (%v)", old, err)
	})
	t.Logf("rollout -> node %s Drifted: %s", old, took.Round(10*time.Millisecond))
	deadline := time.Now().Add(driftQuietFor)
	for time.Now().Before(deadline) {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: old}, n); err != nil || n.DeletionTimestamp != nil {
			t.Fatalf("drifted node %s with a running executor is being removed (%v)", old, err)
		}
		for _, tn := range n.Spec.Taints {
			if tn.Key == "karpenter.sh/disrupted" {
				t.Fatalf("drifted node %s with a running executor is tainted %s: Karpenter started to disrupt it", old, tn.Key)
			}
		}
		if got, err := runningExecutors(ctx, c, analyticsNS, pool); err != nil || got != 1 {
			t.Fatalf("%d executors Running on the drifted node, want 1 (%v)", got, err)
		}
		if n := len(poolNodes(t, ctx, c, pool)); n != 1 {
			t.Fatalf("%d pool nodes while the drifted node runs its executor, want 1: drift launched a replacement", n)
		}
		time.Sleep(5 * time.Second)
	}

	// The executor leaves: the node goes, and the next executor gets a
	// node of the new template.
	if err := deleteExecutors(ctx, c, analyticsNS, qs); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitNodes, "the drifted node goes once its executor is gone", func(ctx context.Context) (bool, error) {
		for _, n := range poolNodes(t, ctx, c, pool) {
			if n.Name == old {
				return false, fmt.Errorf("node %s still there", old)
			}
		}
		return true, nil
	})
	sched = executorScheduling(t, c, poolNS, pool)
	if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, qs, "registry.example.com/e6data/executor:"+pool, 1, "1", "2Gi", sched)); err != nil {
		t.Fatal(err)
	}
	waitExecutors(t, waitNodes, "the next executor Running on a new node", c, analyticsNS, pool, 1)
	for _, n := range poolNodes(t, ctx, c, pool) {
		if n.Labels["e2e.burstpool.io/rollout"] != "2" {
			t.Errorf("node %s lacks the rollout's label: it does not meet the new requirement", n.Name)
		}
	}
	if err := deleteExecutors(ctx, c, analyticsNS, qs); err != nil {
		t.Errorf("cannot delete the executors: %v", err)
	}
}

// disruptionNamespaces creates the pool and executor namespaces, so that
// each disruption scenario also runs on its own (-run).
func disruptionNamespaces(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	for _, ns := range []string{poolNS, analyticsNS} {
		if err := ensureNamespace(ctx, c, ns); err != nil {
			t.Fatal(err)
		}
	}
}

// nodeClaimDrifted tells whether the NodeClaim of node has its Drifted
// condition True.
func nodeClaimDrifted(ctx context.Context, c client.Client, node string) (bool, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk(karpenterAPI, "NodeClaimList"))
	if err := c.List(ctx, l); err != nil {
		return false, err
	}
	for _, nc := range l.Items {
		if name, _, _ := unstructured.NestedString(nc.Object, "status", "nodeName"); name != node {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(nc.Object, "status", "conditions")
		for _, x := range conds {
			m := x.(map[string]any)
			if m["type"] == "Drifted" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("no NodeClaim of node %s", node)
}

// testSpotSurvivesADryMarket bursts a spot pool sized from the simulated
// AWS catalog: its NodePool must offer at least three types that each hold
// one executor; once the type its first nodes run on has no spot capacity
// left (its spot offerings removed from the kwok provider's, which
// Karpenter reads when it starts), more executors must still run, on
// another type.
func testSpotSurvivesADryMarket(t *testing.T, ctx context.Context, s *devplane.Stack, c client.Client, cfg restConfig) {
	const pool, qs = "spot-pool", "spot-pool-qs"
	disruptionNamespaces(t, ctx, c)
	mustApply(t, ctx, cfg, poolManifest(poolNS, pool, fmt.Sprintf(`
  maxExecutors: 4
  imageConfig: {autoCollectImages: false}
  instanceConfig: {spotEnabled: true}
  queryServiceSelector:
    matchLabels: {e2e.burstpool.io/pool: %s}
`, pool)))
	mustApply(t, ctx, cfg, qsManifest(qs, pool, "8", "60Gi"))
	var offered []string
	eventually(t, waitStatus, "the spot NodePool offers at least three types", func(ctx context.Context) (bool, error) {
		np, err := readNodePool(ctx, c, pool)
		if err != nil {
			return false, err
		}
		offered = instanceTypesOf(np)
		return len(offered) >= 3, fmt.Errorf("offers %v", offered)
	})
	t.Logf("spot pool offers %v", offered)
	if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, qs, "registry.example.com/e6data/executor:"+pool, 2, "8", "60Gi", executorScheduling(t, c, poolNS, pool))); err != nil {
		t.Fatal(err)
	}
	waitExecutors(t, waitNodes, "two executors Running on spot nodes", c, analyticsNS, pool, 2)
	firstNodes := map[string]bool{}
	var dry []string
	for _, n := range poolNodes(t, ctx, c, pool) {
		firstNodes[n.Name] = true
		if it := n.Labels[corev1.LabelInstanceTypeStable]; !slices.Contains(dry, it) {
			dry = append(dry, it)
		}
	}

	// The first type's spot market runs dry.
	orig, err := os.ReadFile(s.InstanceTypes)
	if err != nil {
		t.Fatal(err)
	}
	withdrawn, err := withoutSpot(orig, dry)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.InstanceTypes, withdrawn, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Cluster.Restart("karpenter", 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(s.InstanceTypes, orig, 0o600); err != nil {
			t.Errorf("cannot restore the instance types: %v", err)
			return
		}
		if err := s.Cluster.Restart("karpenter", 0); err != nil {
			t.Errorf("cannot restart Karpenter with every offering: %v", err)
		}
	})
	t.Logf("spot offerings of %v withdrawn", dry)

	scaleExecutors(t, ctx, c, analyticsNS, qs, 4)
	waitExecutors(t, waitDisruption, "four executors Running with the first type's spot market dry", c, analyticsNS, pool, 4)
	types := map[string]int{}
	for _, n := range poolNodes(t, ctx, c, pool) {
		types[n.Labels[corev1.LabelInstanceTypeStable]+"/"+n.Labels["karpenter.sh/capacity-type"]]++
	}
	t.Logf("pool nodes by type and capacity: %v", types)
	if len(types) < 2 {
		t.Errorf("executors run on %v: one type, want more once %v ran dry", types, dry)
	}
	for _, n := range poolNodes(t, ctx, c, pool) {
		it, ct := n.Labels[corev1.LabelInstanceTypeStable], n.Labels["karpenter.sh/capacity-type"]
		if !firstNodes[n.Name] && ct == "spot" && slices.Contains(dry, it) {
			t.Errorf("node %s launched as spot %s, whose spot offerings were withdrawn", n.Name, it)
		}
	}
	if err := deleteExecutors(ctx, c, analyticsNS, qs); err != nil {
		t.Errorf("cannot delete the executors: %v", err)
	}
}

// instanceTypesOf are the values of a NodePool's instance-type
// requirement.
func instanceTypesOf(np *unstructured.Unstructured) []string {
	reqs, _, _ := unstructured.NestedSlice(np.Object, "spec", "template", "spec", "requirements")
	for _, r := range reqs {
		m := r.(map[string]any)
		if m["key"] != corev1.LabelInstanceTypeStable {
			continue
		}
		var out []string
		for _, v := range m["values"].([]any) {
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	return nil
}

// withoutSpot returns the kwok provider's instance types (b) without the
// spot offerings of types. The kwok provider makes every offering it reads
// available (karpenter v1.14.1 kwok/cloudprovider/helpers.go), so a dry
// market is an offering that is not there.
func withoutSpot(b []byte, types []string) ([]byte, error) {
	var its []map[string]any
	if err := json.Unmarshal(b, &its); err != nil {
		return nil, err
	}
	for _, it := range its {
		if !slices.Contains(types, fmt.Sprint(it["name"])) {
			continue
		}
		offerings, _ := it["offerings"].([]any)
		it["offerings"] = slices.DeleteFunc(offerings, func(o any) bool {
			reqs, _ := o.(map[string]any)["Requirements"].([]any)
			return slices.ContainsFunc(reqs, func(r any) bool {
				rm := r.(map[string]any)
				values, _ := rm["values"].([]any)
				return rm["key"] == "karpenter.sh/capacity-type" && slices.Contains(values, any("spot"))
			})
		})
	}
	return json.MarshalIndent(its, "", "  ")
}
