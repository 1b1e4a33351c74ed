package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// familyFirst is a family pool created before its QueryService.
type familyFirst struct {
	// Family the pool names; Empty is the type it has with nothing
	// attached, Sized the type its QueryService needs.
	Family, Empty, Sized string
	// CPU and Memory of one executor; PerNode executors fit one Sized
	// node exactly.
	CPU, Memory string
	PerNode     int
}

// testFamilyPoolFollowsItsFirstQueryService creates a family pool with no
// QueryService, then attaches one: the pool must move from the family's
// smallest size to the size the QueryService needs although autoUpgrade
// is off (no executor has run yet), and the nodes Karpenter launches for
// its executors must each hold exactly executorsPerNode of them, counted
// pod by pod.
func testFamilyPoolFollowsItsFirstQueryService(t *testing.T, ctx context.Context, s *devplane.Stack, c client.Client, cfg restConfig, f familyFirst) {
	const pool, executors = "family-first", 4
	mustApply(t, ctx, cfg, poolManifest(poolNS, pool, fmt.Sprintf(`
  maxExecutors: %d
  executorsPerNode: %d
  imageConfig: {autoCollectImages: false}
  instanceConfig: {instanceFamily: %s}
  queryServiceSelector:
    matchLabels: {e2e.burstpool.io/pool: %s}
`, executors, f.PerNode, f.Family, pool)))
	typeOf := func(ctx context.Context) (string, error) {
		_, st, err := readPool(ctx, s, poolNS, pool)
		return st.DerivedInstanceType, err
	}
	eventually(t, waitStatus, "the pool with no QueryService takes the family's smallest size", func(ctx context.Context) (bool, error) {
		it, err := typeOf(ctx)
		if err != nil {
			return false, err
		}
		return it == f.Empty, fmt.Errorf("type %q, want %s", it, f.Empty)
	})
	mustApply(t, ctx, cfg, qsManifest(pool+"-qs", pool, f.CPU, f.Memory))
	eventually(t, waitStatus, "the first QueryService decides the type, autoUpgrade off", func(ctx context.Context) (bool, error) {
		it, err := typeOf(ctx)
		if err != nil {
			return false, err
		}
		np, err := readNodePool(ctx, s.Client, pool)
		if err != nil {
			return false, err
		}
		return it == f.Sized && containsValue(np, f.Sized), fmt.Errorf("type %q, want %s", it, f.Sized)
	})
	if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, pool+"-qs", "registry.example.com/e6data/executor:"+pool, executors, f.CPU, f.Memory, executorScheduling(t, c, poolNS, pool))); err != nil {
		t.Fatal(err)
	}
	waitExecutors(t, waitNodes, fmt.Sprintf("%d executors Running on %s nodes", executors, f.Sized), c, analyticsNS, pool, executors)
	nodes := poolNodes(t, ctx, c, pool)
	if want := executors / f.PerNode; len(nodes) != want {
		t.Errorf("%d pool nodes for %d executors at %d per node, want %d", len(nodes), executors, f.PerNode, want)
	}
	for _, n := range nodes {
		if it := n.Labels[corev1.LabelInstanceTypeStable]; it != f.Sized {
			t.Errorf("node %s is %s, want %s", n.Name, it, f.Sized)
		}
		got, err := podsOn(ctx, c, analyticsNS, map[string]string{qsv1.LabelPool: pool, qsv1.LabelExecutorType: qsv1.ExecutorTypePool}, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		if got != f.PerNode {
			t.Errorf("node %s (%s) holds %d executors, want executorsPerNode %d", n.Name, n.Labels[corev1.LabelInstanceTypeStable], got, f.PerNode)
		}
		t.Logf("node %s (%s): %d executors", n.Name, n.Labels[corev1.LabelInstanceTypeStable], got)
	}
	eventually(t, waitStatus, "the pool records that executors have run, slots = nodes x executorsPerNode", func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, poolNS, pool)
		if err != nil {
			return false, err
		}
		locked := st.Sizing != nil && st.Sizing.ExecutorsHaveRun
		total, cur := st.TotalExecutors, st.CurrentNodes
		return locked && int(total) == int(cur)*f.PerNode && cur > 0, fmt.Errorf("executorsHaveRun %v, totalExecutors %d, currentNodes %d", locked, total, cur)
	})
	if err := deleteExecutors(ctx, c, analyticsNS, pool+"-qs"); err != nil {
		t.Errorf("cannot delete the executors: %v", err)
	}
}

// containsValue tells whether a NodePool's instance-type requirement
// allows typ.
func containsValue(np *unstructured.Unstructured, typ string) bool {
	reqs, _, _ := unstructured.NestedSlice(np.Object, "spec", "template", "spec", "requirements")
	for _, r := range reqs {
		m := r.(map[string]any)
		if m["key"] != corev1.LabelInstanceTypeStable {
			continue
		}
		for _, v := range m["values"].([]any) {
			if v == typ {
				return true
			}
		}
	}
	return false
}

// testExecutorAtTheModelsEdge runs, on nodes that offer what Karpenter's
// AWS provider predicts (sizing.KWOKInstanceTypesJSON) and run EKS's
// add-on DaemonSets (devplane.AddOnDaemonSets: kube-proxy 100m, aws-node
// 50m), an executor exactly the size the model leaves on an m7i.2xlarge
// (8 vCPU, 32Gi, 58 ENI-limited pods: 7910m and 29317Mi allocatable, less
// the add-ons' 150m) and one a milli-CPU beyond it: the first must run,
// not stay Pending; the second must be reported incompatible with the
// figures, not left Pending.
func testExecutorAtTheModelsEdge(t *testing.T, ctx context.Context, s *devplane.Stack, c client.Client, cfg restConfig) {
	const pool = "model-edge"
	const fitsCPU, beyondCPU, mem = "7760m", "7761m", "29317Mi"
	mustApply(t, ctx, cfg, poolManifest(poolNS, pool, fmt.Sprintf(`
  maxExecutors: 2
  imageConfig: {autoCollectImages: false}
  instanceConfig: {instanceType: m7i.2xlarge}
  queryServiceSelector:
    matchLabels: {e2e.burstpool.io/pool: %s}
`, pool)))
	mustApply(t, ctx, cfg, qsManifest(pool+"-fits", pool, fitsCPU, mem))
	mustApply(t, ctx, cfg, qsManifest(pool+"-beyond", pool, beyondCPU, mem))
	eventually(t, waitStatus, "the executor beyond the model is reported incompatible with the figures, the one at its edge compatible", func(ctx context.Context) (bool, error) {
		p, _, err := readPool(ctx, s, poolNS, pool)
		if err != nil {
			return false, err
		}
		fits, beyond := attachedOf(p, analyticsNS, pool+"-fits"), attachedOf(p, analyticsNS, pool+"-beyond")
		msg, _ := beyond["message"].(string)
		return fits["compatible"] == true && beyond["compatible"] == false && strings.Contains(msg, "m7i.2xlarge allocatable is 7.76 CPU"),
			fmt.Errorf("at the edge %v, beyond %v", fits, beyond)
	})
	if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, pool+"-fits", "registry.example.com/e6data/executor:"+pool, 1, fitsCPU, mem, executorScheduling(t, c, poolNS, pool))); err != nil {
		t.Fatal(err)
	}
	waitExecutors(t, waitNodes, "the executor at the model's edge Running on an m7i.2xlarge beside kube-proxy and aws-node", c, analyticsNS, pool, 1)
	for _, n := range poolNodes(t, ctx, c, pool) {
		addOns, err := podsOn(ctx, c, metav1.NamespaceSystem, nil, n.Name)
		if err != nil {
			t.Fatal(err)
		}
		if addOns < 2 {
			t.Errorf("node %s runs %d kube-system pods, want kube-proxy and aws-node", n.Name, addOns)
		}
	}
	if err := deleteExecutors(ctx, c, analyticsNS, pool+"-fits"); err != nil {
		t.Errorf("cannot delete the executors: %v", err)
	}
}
