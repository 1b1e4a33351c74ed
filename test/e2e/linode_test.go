package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	poolv1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/reference"
)

// The LKE node pool the reference's manifest 4.3 selects, and its taint.
const (
	lkePoolLabel = "lke.linode.com/pool-id"
	lkePoolID    = "785603"
	linodePool   = "linode-pool"
	linodeNS     = "workspace-linode"
	linodeQS     = "linode-cluster"
)

// TestLinodePool runs the reference's non-Karpenter manifest (4.3) as
// written on a control plane that looks like Linode LKE to detection: the
// LKE node pool CRD installed, no Karpenter. Without nodes of the LKE pool
// the pool is Pending and says which labels it looks for; once the LKE
// pool's nodes exist (kwok nodes labelled and tainted as LKE would) and
// carry the pool label, as the pool's condition says, it is Active and its
// executors land there.
func TestLinodePool(t *testing.T) {
	t.Parallel()
	runScenarios(t, newSuite(t, linodePlane), linodeScenarios)
}

// linodePlane is a stack without Karpenter, with the LKE node pool CRD.
var linodePlane = plane{
	configure: func(t *testing.T, cfg *devplane.Config) {
		cfg.SkipKarpenter, cfg.CRDs = true, []string{linodeCRD(t, cfg.Root)}
	},
	caps: []capability{linodeCloud},
}

// linodeScenarios are TestLinodePool's scenarios.
var linodeScenarios = []scenario{
	{name: "LKEReference", needs: []capability{linodeCloud}, namespaces: []string{poolNS, linodeNS}, pools: []string{linodePool}, run: scenarioLKEReference},
}

// scenarioLKEReference: the reference's 4.3 on LKE nodes (TestLinodePool).
func scenarioLKEReference(t *testing.T, ctx context.Context, e *env) {
	root := e.root
	s := e.Stack
	kc := s.Cluster.Kubeconfig
	c := s.Client
	m := reference.Manifests[2]
	if m.Section != "4.3" {
		t.Fatalf("reference manifest %s, want 4.3", m.Section)
	}
	mustApply(t, ctx, s.Cluster.Config, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %s}
---
apiVersion: v1
kind: Namespace
metadata: {name: %s}
---
apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata:
  name: %s
  namespace: %s
  labels: {e6data.io/pool: linode-pool}
spec:
  executor:
    image: us-docker.pkg.dev/e6data-analytics/e6-engine/executor:3.0.218
    resources: {cpu: "4", memory: 8Gi}
    poolRef: {name: %s, namespace: %s}
`, poolNS, linodeNS, linodeQS, linodeNS, linodePool, poolNS))
	start := time.Now()
	if out, err := kubectl(ctx, kc, "apply", "-f", m.Path(root)); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("%s: %s", m.File, strings.TrimSpace(out))
	}

	took := eventually(t, waitNodes, "linode-pool Pending on Linode, naming its nodeSelector and labels", func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, poolNS, linodePool)
		if err != nil {
			return false, err
		}
		msg := st.Message
		return st.Phase == "Pending" && st.Cloud == "linode" && st.ProvisioningMethod == "lke" &&
				strings.Contains(msg, "spec.nodeSelector "+lkePoolLabel+"="+lkePoolID) && strings.Contains(msg, qsv1.LabelPool+"="+linodePool),
			fmt.Errorf("cloud %q method %q phase %s: %s", st.Cloud, st.ProvisioningMethod, st.Phase, msg)
	})
	t.Logf("4.3 without LKE nodes -> Pending with the labels it looks for: %s", took.Round(100*time.Millisecond))
	// The reference's "Pool Stuck in Pending" symptom, as it prints it.
	checkInReference(t, "kubectl get pool")
	// The counts show once the capacity provider has reported them;
	// until then they are left out, not zero (CapacityObserved=False).
	var out string
	eventually(t, waitStatus, "kubectl get pool prints the pool Pending with zero counts", func(ctx context.Context) (bool, error) {
		var err error
		if out, err = kubectl(ctx, kc, "get", "pool", "-n", poolNS); err != nil {
			return false, err
		}
		header, rows := table(out)
		ok := len(header) >= 5 && len(rows) == 1 && len(rows[0]) >= 5 && slices.Equal(rows[0][:5], []string{linodePool, "Pending", "0", "0", "0"})
		return ok, fmt.Errorf("kubectl get pool printed\n%s\nwant linode-pool Pending 0 0 0 under NAME PHASE AVAILABLE OCCUPIED TOTAL", out)
	})
	t.Logf("kubectl get pool printed\n%s", out)

	// The LKE pool's nodes, as Linode would make them (kwok runs them).
	for i := range 2 {
		if err := c.Create(ctx, lkeNode(fmt.Sprintf("lke-785603-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// What the pool's NodesProvisioned condition says to run.
	if _, err := kubectl(ctx, kc, "label", "nodes", "-l", lkePoolLabel+"="+lkePoolID, qsv1.LabelPool+"="+linodePool, qsv1.LabelPoolNamespace+"="+poolNS); err != nil {
		t.Fatal(err)
	}
	took = eventually(t, waitNodes, "linode-pool Active on the LKE nodes", func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, poolNS, linodePool)
		if err != nil {
			return false, err
		}
		return st.Phase == "Active" && st.CurrentNodes == 2, fmt.Errorf("phase %s nodes %d: %s", st.Phase, st.CurrentNodes, st.Message)
	})
	t.Logf("LKE nodes labelled -> Active: %s", took.Round(100*time.Millisecond))

	// Executors of the QueryService, with the node selector and
	// tolerations the pool publishes (spec.nodeSelector and
	// spec.tolerations included), as its operator would set them.
	es := executorScheduling(t, c, poolNS, linodePool)
	if es.NodeSelector[lkePoolLabel] != lkePoolID || !slices.ContainsFunc(es.Tolerations, func(t poolv1.Toleration) bool { return t.Key == "e6data.io/pool" && t.Value == "burst" }) {
		t.Errorf("linode-pool publishes %+v: want its nodeSelector and the toleration of its nodes' e6data.io/pool=burst taint", es)
	}
	d := devplane.ExecutorDeployment(linodeNS, linodeQS, "us-docker.pkg.dev/e6data-analytics/e6-engine/executor:3.0.218", 2, "4", "8Gi", es)
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	took = eventually(t, waitNodes, "executors Running on the LKE nodes and counted", func(ctx context.Context) (bool, error) {
		n, err := runningExecutors(ctx, c, linodeNS, linodePool)
		if err != nil || n != 2 {
			return false, fmt.Errorf("%d Running (%v)", n, err)
		}
		_, st, err := readPool(ctx, s, poolNS, linodePool)
		if err != nil {
			return false, err
		}
		return st.OccupiedExecutors == 2, fmt.Errorf("occupiedExecutors %d", st.OccupiedExecutors)
	})
	t.Logf("executors -> Running on LKE nodes and counted: %s (4.3 applied -> here: %s)", took.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
	pods := &corev1.PodList{}
	mustList(t, ctx, c, pods, client.InNamespace(linodeNS))
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Spec.NodeName, "lke-785603-") {
			t.Errorf("executor %s runs on %q, want an LKE pool node", p.Name, p.Spec.NodeName)
		}
	}
}

// linodeCRD is the LKE node pool CRD the repository keeps with the other
// upstream schemas (test/crds/upstream).
func linodeCRD(t *testing.T, root string) string {
	t.Helper()
	f := filepath.Join(root, "test", "crds", "upstream", "lke.linode.upbound.io_nodepools.yaml")
	if _, err := os.Stat(f); err != nil {
		t.Fatalf("the LKE node pool CRD: %v", err)
	}
	return f
}

// lkeNode is a node of LKE pool 785603 (a Linode Dedicated 32 GB),
// labelled and tainted as the reference's 4.3 expects, managed by kwok.
func lkeNode(name string) *corev1.Node {
	rl := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("640Gi"),
	}
	key, value, _ := strings.Cut(localcp.KwokNodeAnnotation, "=")
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{key: value},
			Labels: map[string]string{
				lkePoolLabel: lkePoolID, corev1.LabelInstanceTypeStable: "g6-dedicated-16",
				corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux", corev1.LabelHostname: name, "type": "kwok",
			},
		},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "e6data.io/pool", Value: "burst", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl},
	}
}
