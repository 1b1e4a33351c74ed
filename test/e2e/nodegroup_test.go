package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/castandin"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
	"github.com/burstpool/burstpool/test/reference"
)

// eksNodeGroupCRD is provider-aws's NodeGroup CRD, as vendored.
const eksNodeGroupCRD = "eks.aws.upbound.io_nodegroups.yaml"

// TestNodeGroupPool runs the reference's manifests 4.1, 4.2 and 4.5 as
// written on a control plane that looks like EKS without Karpenter to
// detection: provider-aws's NodeGroup CRD installed, the settings'
// nodeGroups.eks set, no Karpenter. No provider-aws and no Cluster
// Autoscaler run: castandin plays both (its package comment says what of
// them it models). The pools reach Active with method node-group, their
// warm slots and a burst of executors run on nodes the stand-in adds to the
// composed node groups, and Suspend and Resume keep the group. It needs a
// control plane without Karpenter, so it has a plane of its own.
func TestNodeGroupPool(t *testing.T) {
	t.Parallel()
	runScenarios(t, newSuite(t, nodeGroupPlane), nodeGroupScenarios)
}

// nodeGroupPlane is a stack without Karpenter, with provider-aws's
// NodeGroup CRD.
var nodeGroupPlane = plane{
	configure: func(_ *testing.T, cfg *devplane.Config) {
		cfg.SkipKarpenter, cfg.CRDs = true, []string{filepath.Join(cfg.Root, filepath.FromSlash(schemacheck.UpstreamDir), eksNodeGroupCRD)}
	},
	caps: []capability{nodeGroupCloud, ownSettings},
}

// nodeGroupScenarios are TestNodeGroupPool's scenarios. NodeGroupReference
// changes the cluster's settings, so it is exclusive.
var nodeGroupScenarios = []scenario{
	{name: "NodeGroupReference", needs: []capability{nodeGroupCloud, ownSettings}, exclusive: true,
		namespaces: []string{poolNS, analyticsNS, reportingNS}, pools: []string{"burst-pool", "high-memory-pool", "prewarmed-pool"}, run: scenarioNodeGroupReference},
}

// scenarioNodeGroupReference: the reference's pools on EKS node groups
// that the stand-in scales (TestNodeGroupPool).
func scenarioNodeGroupReference(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	c, kc := s.Client, s.Cluster.Kubeconfig
	start := time.Now()
	applySettings(t, ctx, s.Cluster.Config, e.root, func(data map[string]any) {
		data["clusterName"] = "e2e-eks"
		data["nodeGroups"] = map[string]any{"eks": map[string]any{
			"region": "us-east-1", "subnetIDs": []any{"subnet-0a1b2c3d"}, "nodeRoleARN": "arn:aws:iam::123456789012:role/e2e-eks-node",
		}}
	})
	ca := &castandin.Autoscaler{Client: c, ScaleDownAfter: 5 * time.Second, NodeAnnotation: localcp.KwokNodeAnnotation, Logf: t.Logf}
	caCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ca.Run(caCtx) }()
	t.Cleanup(func() { stop(); <-done })

	if _, err := kubectl(ctx, kc, "apply", "-f", filepath.Join("testdata", "reference-queryservices.yaml")); err != nil {
		t.Fatal(err)
	}
	pools := map[string]string{"4.1": "burst-pool", "4.2": "high-memory-pool", "4.5": "prewarmed-pool"}
	for _, m := range reference.Manifests {
		if pools[m.Section] == "" {
			continue
		}
		if _, err := kubectl(ctx, kc, "apply", "-f", m.Path(e.root)); err != nil {
			t.Fatalf("reference manifest %s: %v", m.Section, err)
		}
	}
	for _, sec := range []string{"4.1", "4.2", "4.5"} {
		pool := pools[sec]
		eventually(t, waitSlow, sec+" "+pool+" Active with method node-group", func(ctx context.Context) (bool, error) {
			_, st, err := readPool(ctx, s, poolNS, pool)
			if err != nil {
				return false, err
			}
			return st.Phase == "Active" && st.ProvisioningMethod == "node-group" && st.Cloud == "aws",
				fmt.Errorf("phase %s method %q cloud %q: %s", st.Phase, st.ProvisioningMethod, st.Cloud, st.Message)
		})
		t.Logf("%s %s Active with method node-group: %s after apply", sec, pool, time.Since(start).Round(100*time.Millisecond))
	}

	// burst-pool's warm slots (4.1's minExecutors) are placeholders the
	// autoscaler launches nodes for; analytics-cluster's burst preempts
	// them and, past them, gets nodes of its own.
	eventually(t, waitNodes, "burst-pool's warm slots on autoscaled r7gd.4xlarge nodes", func(ctx context.Context) (bool, error) {
		ns, err := groupNodes(ctx, c, "burst-pool-nodegroup")
		return err == nil && len(ns) > 0, fmt.Errorf("%d nodes (%v)", len(ns), err)
	})
	const burst = 5
	if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, "analytics-cluster", "us-docker.pkg.dev/e6data-analytics/e6-engine/executor:3.0.217", burst, "8", "60Gi", executorScheduling(t, c, poolNS, "burst-pool"))); err != nil {
		t.Fatal(err)
	}
	took := waitExecutors(t, waitNodes, "analytics-cluster's burst Running on burst-pool's node group", c, analyticsNS, "burst-pool", burst)
	t.Logf("4.1 burst of %d executors Running: %s", burst, took.Round(100*time.Millisecond))
	pods := &corev1.PodList{}
	mustList(t, ctx, c, pods, client.InNamespace(analyticsNS), client.MatchingLabels{"e6data.io/pool": "burst-pool"})
	nodes, err := groupNodes(ctx, c, "burst-pool-nodegroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if !slices.Contains(nodes, p.Spec.NodeName) {
			t.Errorf("executor %s runs on %q, not on a node of burst-pool-nodegroup %v", p.Name, p.Spec.NodeName, nodes)
		}
		if p.Annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] != "false" {
			t.Errorf("executor %s lacks safe-to-evict \"false\": %v", p.Name, p.Annotations)
		}
	}

	// The capacity provider finds the group's nodes by the pool's labels,
	// which the group puts on them.
	eventually(t, waitStatus, "burst-pool counts its node group's nodes and executors", func(ctx context.Context) (bool, error) {
		ns, err := groupNodes(ctx, c, "burst-pool-nodegroup")
		if err != nil {
			return false, err
		}
		_, st, err := readPool(ctx, s, poolNS, "burst-pool")
		if err != nil {
			return false, err
		}
		return int(st.CurrentNodes) == len(ns) && st.OccupiedExecutors == burst && st.TotalExecutors >= burst,
			fmt.Errorf("currentNodes %d of %d, occupied %d, total %d", st.CurrentNodes, len(ns), st.OccupiedExecutors, st.TotalExecutors)
	})

	// Suspend keeps the group and holds it; Resume lifts the hold.
	for _, suspend := range []bool{true, false} {
		patch := fmt.Sprintf(`{"spec":{"suspend":%t}}`, suspend)
		p := &unstructured.Unstructured{}
		p.SetAPIVersion(claimAPI)
		p.SetKind("Pool")
		p.SetNamespace(poolNS)
		p.SetName("burst-pool")
		if err := c.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitStatus, fmt.Sprintf("burst-pool-nodegroup kept, held %t", suspend), func(ctx context.Context) (bool, error) {
			g := &unstructured.Unstructured{}
			g.SetAPIVersion("eks.aws.upbound.io/v1beta1")
			g.SetKind("NodeGroup")
			if err := c.Get(ctx, client.ObjectKey{Name: "burst-pool-nodegroup"}, g); err != nil {
				return false, err
			}
			grp, err := castandin.GroupOf(g)
			if err != nil {
				return false, err
			}
			held := slices.ContainsFunc(grp.Taints, func(t corev1.Taint) bool { return t.Key == "e6data.io/hold" })
			return held == suspend && (grp.Min == 0) == suspend, fmt.Errorf("held %t, min %d", held, grp.Min)
		})
	}
	t.Logf("%s: %s from the settings to Resume", t.Name(), time.Since(start).Round(100*time.Millisecond))
}

// groupNodes are the names of the nodes of the node group named name.
func groupNodes(ctx context.Context, c client.Client, name string) ([]string, error) {
	l := &corev1.NodeList{}
	if err := c.List(ctx, l, client.MatchingLabels{castandin.LabelNodeGroup: name}); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(l.Items))
	for _, n := range l.Items {
		if !strings.HasPrefix(n.Name, name) {
			continue
		}
		out = append(out, n.Name)
	}
	return out, nil
}
