package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	capv1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/reference"
)

// remoteConvergeBound is how soon a remote pool must be whole again, and
// count a burst made in its workload cluster, after that cluster's API
// server comes back: provider-kubernetes' poll interval in this test
// (15 s), plus the retry backoff an outage leaves (the capacity provider
// retries a failed cluster after 5 s, doubling up to 5 minutes: its tries
// come 5, 15, 35, 75, 155 and 315 s after the first failure, so after
// this outage, with the API server's stop and start, the next may be up
// to 160 s away), plus 25 s for the PoolCapacity, the Objects and the
// claim to be reconciled.
// remoteOutage is how long west's API server is down: several minutes of
// a workload cluster unreachable, past the capacity provider's first
// retries and provider-kubernetes' poll, so that both see the outage and
// back off.
const (
	remotePoll          = 15 * time.Second
	remoteConvergeBound = remotePoll + 160*time.Second + 25*time.Second
	remoteOutage        = 2 * time.Minute
)

// TestRemoteClusters drives pools in two workload clusters, west and east,
// from one management plane (Crossplane core, provider-kubernetes, the
// function and the capacity provider; no Karpenter, so nothing composed
// locally can work by accident). The reference's basic burst pool (4.1),
// claimed in the management cluster with the workload cluster setting,
// composes its NodePool, NodeClass and warmup DaemonSets in west, bursts a
// QueryService's executors onto Karpenter nodes there and reports them on
// the claim. West's API server is then down for remoteOutage (2 minutes):
// the claim says so, naming west; right after it is back a burst in west
// runs and the claim counts it, and nothing is deleted or lost (a row of
// the fault table, faulttable_test.go).
// A pool of the same name in east leaves west alone. Deleting the claim
// removes west's objects and nodes.
func TestRemoteClusters(t *testing.T) {
	t.Parallel()
	su := newSuite(t, remotePlane)
	t.Cleanup(func() { faultRows.report(t, t.Name()) })
	runScenarios(t, su, remoteScenarios)
}

// remotePlane is the management plane, without Karpenter so that nothing
// composed locally can work by accident, with the workload planes west
// and east beside it; the three come up together.
var remotePlane = plane{
	configure: func(_ *testing.T, cfg *devplane.Config) { cfg.SkipKarpenter = true },
	workloads: []string{"west", "east"},
	caps:      []capability{workloadClusters, ownSettings},
}

// remoteScenarios are TestRemoteClusters' scenarios. WestAndEast changes
// the management cluster's settings, so it is exclusive.
var remoteScenarios = []scenario{
	{name: "WestAndEast", needs: []capability{workloadClusters, ownSettings}, exclusive: true,
		namespaces: []string{poolNS, analyticsNS, remoteEastNS}, pools: []string{remotePool}, run: scenarioWestAndEast},
}

// remotePool is the reference's basic burst pool, claimed for west in
// poolNS and, under the same name, for east in remoteEastNS.
const (
	remotePool   = "burst-pool"
	remoteEastNS = "e6-pools-east"
)

// scenarioWestAndEast: pools in west and east driven from the management
// plane (TestRemoteClusters).
func scenarioWestAndEast(t *testing.T, ctx context.Context, e *env) {
	root := e.root
	start := time.Now()
	s, west, east := e.Stack, e.workload("west"), e.workload("east")

	pk, err := s.InstallProviderKubernetes(ctx, []int{west.cluster.Ports["apiserver"], east.cluster.Ports["apiserver"]}, remotePoll)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- provider-kubernetes log tail ---\n%s", localcp.TailLines(readFile(pk.Log), 40))
		}
	})
	mc := s.Client
	cfg := s.Cluster.Config
	// One ProviderConfig per workload cluster, with its kubeconfig.
	for _, w := range []*workloadPlane{west, east} {
		kc, err := os.ReadFile(w.cluster.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		if err := mc.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: devplane.CrossplaneNS, Name: w.name + "-kubeconfig"}, Data: map[string][]byte{"kubeconfig": kc}}); err != nil {
			t.Fatal(err)
		}
		mustApply(t, ctx, cfg, fmt.Sprintf(`apiVersion: kubernetes.crossplane.io/v1alpha1
kind: ProviderConfig
metadata: {name: %s}
spec:
  credentials:
    source: Secret
    secretRef: {namespace: %s, name: %s-kubeconfig, key: kubeconfig}
`, w.name, devplane.CrossplaneNS, w.name))
	}
	mustApply(t, ctx, cfg, `apiVersion: apiextensions.crossplane.io/v1beta1
kind: EnvironmentConfig
metadata: {name: burstpool}
data:
  clusterName: mgmt
  workloadCluster: {providerConfigName: west}
  tenancy:
    namespaces:
    - {names: [e6-pools, e6-pools-*], attachFrom: ["workspace-*"], workloadClusters: [west, east]}
---
apiVersion: v1
kind: Namespace
metadata: {name: `+poolNS+`}
`)

	// (a) The reference's basic burst pool, as written, runs in west.
	if _, err := kubectl(ctx, west.cluster.Kubeconfig, "apply", "-f", filepath.Join("testdata", "reference-queryservices.yaml")); err != nil {
		t.Fatal(err)
	}
	m := reference.Manifests[0]
	if m.Section != "4.1" {
		t.Fatalf("reference manifest %s, want 4.1", m.Section)
	}
	applied := time.Now()
	if _, err := kubectl(ctx, s.Cluster.Kubeconfig, "apply", "-f", m.Path(root)); err != nil {
		t.Fatal(err)
	}
	const pool = remotePool
	wc := west.client
	took := eventually(t, waitDisruption, "burst-pool's NodePool, NodeClass and warmup DaemonSets in west, marked as the pool's", func(ctx context.Context) (bool, error) {
		if got, err := nodePoolOwner(ctx, wc, pool); err != nil || got != "mgmt/"+poolNS+"/"+pool {
			return false, fmt.Errorf("NodePool owner %q (%v)", got, err)
		}
		nc := &unstructured.Unstructured{}
		nc.SetGroupVersionKind(gvk("karpenter.kwok.sh/v1alpha1", "KWOKNodeClass"))
		if err := wc.Get(ctx, types.NamespacedName{Name: pool + "-nodeclass"}, nc); err != nil {
			return false, err
		}
		ds, err := daemonSets(ctx, wc, warmups(pool))
		return err == nil && len(ds) > 0, fmt.Errorf("%d warmup DaemonSets (%v)", len(ds), err)
	})
	t.Logf("4.1 applied -> NodePool, NodeClass and warmup DaemonSets in west: %s", took.Round(100*time.Millisecond))
	if n := len(poolNodes(t, ctx, mc, pool)); n != 0 {
		t.Errorf("%d pool nodes in the management cluster", n)
	}

	// A QueryService in west bursts executors onto Karpenter's nodes there.
	qs := mustQS(t, ctx, wc, analyticsNS, "analytics-cluster")
	cpu, mem := devplane.ExecutorResources(qs)
	const replicas = 2
	if err := wc.Create(ctx, devplane.ExecutorDeployment(analyticsNS, "analytics-cluster", "registry.example.com/e6data/executor:e2e", replicas, cpu, mem, executorScheduling(t, mc, poolNS, pool))); err != nil {
		t.Fatal(err)
	}
	took = waitExecutors(t, waitDisruption, "executors Running on Karpenter nodes in west", wc, analyticsNS, pool, replicas)
	t.Logf("burst in west -> %d executors Running: %s", replicas, took.Round(100*time.Millisecond))
	took = eventually(t, waitNodes, "the claim shows west's allocations and counts", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, poolNS, pool)
		if err != nil {
			return false, err
		}
		ready := int32(len(readyNodes(poolNodes(t, ctx, wc, pool))))
		return st.OccupiedExecutors == replicas && st.CurrentNodes == ready && ready > 0 && allocation(p, analyticsNS, "analytics-cluster") == replicas && st.Phase == "Active",
			fmt.Errorf("phase %s, %s; west has %d ready pool nodes", st.Phase, countsOf(p), ready)
	})
	t.Logf("claim reports west's executors and nodes: %s (%s after apply)", took.Round(100*time.Millisecond), time.Since(applied).Round(100*time.Millisecond))
	westNodes := len(poolNodes(t, ctx, wc, pool))

	// (d) What the added processes hold.
	logUsage(t, s.Cluster)
	for _, w := range []*workloadPlane{west, east} {
		for _, u := range w.cluster.Usage() {
			t.Logf("RSS %-5s %-24s pid %-7d %6.1f MiB  CPU %s", w.name, u.Name, u.PID, float64(u.RSSKiB)/1024, u.CPU)
		}
	}
	for _, u := range s.Cluster.Usage() {
		if u.Name == devplane.ProviderKubernetesName {
			t.Logf("provider-kubernetes: RSS %.1f MiB, CPU %s", float64(u.RSSKiB)/1024, u.CPU)
		}
	}

	// (c) A pool of the same name in east leaves west alone.
	const eastNS = remoteEastNS
	if err := ensureNamespace(ctx, east.client, eastNS); err != nil {
		t.Fatal(err)
	}
	mustApply(t, ctx, cfg, `apiVersion: v1
kind: Namespace
metadata: {name: `+eastNS+`}
---
apiVersion: e6data.io/v1alpha1
kind: Pool
metadata: {name: `+pool+`, namespace: `+eastNS+`}
spec:
  minExecutors: 1
  maxExecutors: 4
  instanceConfig: {instanceType: r7gd.4xlarge}
  queryServiceSelector: {matchLabels: {e6data.io/pool: `+pool+`}}
  workloadCluster: {providerConfigName: east}
`)
	took = eventually(t, waitDisruption, "east's burst-pool warm slot on a Karpenter node in east", func(ctx context.Context) (bool, error) {
		if got, err := nodePoolOwner(ctx, east.client, pool); err != nil || got != "mgmt/"+eastNS+"/"+pool {
			return false, fmt.Errorf("east NodePool owner %q (%v)", got, err)
		}
		n := len(readyNodes(poolNodes(t, ctx, east.client, pool)))
		return n == 1, fmt.Errorf("%d ready pool nodes in east", n)
	})
	t.Logf("same-named pool in east -> its node in east: %s", took.Round(100*time.Millisecond))
	if got, err := nodePoolOwner(ctx, wc, pool); err != nil {
		t.Fatal(err)
	} else if got != "mgmt/"+poolNS+"/"+pool {
		t.Errorf("east's pool touched west's NodePool: owner %q", got)
	}
	if n := len(poolNodes(t, ctx, wc, pool)); n != westNodes {
		t.Errorf("west has %d pool nodes after east's pool came, had %d", n, westNodes)
	}
	mgmtObjects := countObjects(t, ctx, mc)

	// (b) West's API server is down for remoteOutage; right after it is
	// back, a burst in west needs a new node there.
	row := newFaultRow(t, fmt.Sprintf("Workload cluster unreachable (west's API server down %s), burst right after", remoteOutage), remoteConvergeBound)
	mgmtBefore, westBefore := mustComposedObjects(t, ctx, e.Stack, poolNS, pool), workloadObjects(t, ctx, wc, pool)
	ran := mustRunningExecutors(t, ctx, wc, analyticsNS, pool)
	pc := capacityOf(t, mgmtBefore)
	costBefore := eventuallyCost(t, ctx, mc, pc, "the PoolCapacity counts the cost before the outage", func(capv1.CostObservation) error { return nil })
	restarted := make(chan error, 1)
	down := time.Now()
	go func() { restarted <- west.cluster.Restart("kube-apiserver", remoteOutage) }()
	took = eventually(t, waitStatus, "the claim reports west unreachable, naming west and its ProviderConfig", func(ctx context.Context) (bool, error) {
		p, err := claim(ctx, s, pool)
		if err != nil {
			return false, err
		}
		st, reason, msg := conditionFields(p, "WorkloadClusterReachable")
		return st == "False" && reason == "WorkloadClusterUnreachable" && strings.Contains(msg, "ProviderConfig west"), fmt.Errorf("%s %s: %s", st, reason, msg)
	})
	row.Proof = fmt.Sprintf("the claim said WorkloadClusterUnreachable, naming west, %.1f s into the outage", took.Seconds())
	t.Logf("west down -> claim reports it: %s", took.Round(100*time.Millisecond))
	if err := <-restarted; err != nil {
		t.Fatalf("cannot restart west's API server: %v", err)
	}
	waitAPIServerReady(t, ctx, west.cluster.Config)
	back := time.Now()
	row.Held = back.Sub(down)
	t.Logf("west's API server was down for %s", row.Held.Round(100*time.Millisecond))
	scaleExecutors(t, ctx, wc, analyticsNS, "analytics-cluster", replicas+1)
	row.Running = waitExecutors(t, waitNodes, "the burst's executors Running in west", wc, analyticsNS, pool, replicas+1)
	t.Logf("west back -> burst to %d executors Running: %s", replicas+1, row.Running.Round(100*time.Millisecond))
	for uid, name := range mustRunningExecutors(t, ctx, wc, analyticsNS, pool) {
		ran[uid] = name
	}
	if n := countObjects(t, ctx, mc); n != mgmtObjects {
		t.Errorf("the management cluster has %d provider-kubernetes Objects after the outage, had %d", n, mgmtObjects)
	}
	took = eventually(t, remoteConvergeBound, "burst-pool whole again after west came back, counting the burst", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, poolNS, pool)
		if err != nil {
			return false, err
		}
		reachable, reason, msg := conditionFields(p, "WorkloadClusterReachable")
		return reachable == "True" && st.Phase == "Active" && st.OccupiedExecutors == replicas+1 && allocation(p, analyticsNS, "analytics-cluster") == replicas+1,
			fmt.Errorf("reachable %s %s (%s), phase %s, %s", reachable, reason, msg, st.Phase, countsOf(p))
	})
	row.Counted = time.Since(back)
	t.Logf("west back -> pool converged, counting the burst, in %s (bound %s)", row.Counted.Round(100*time.Millisecond), remoteConvergeBound)
	eventuallyCost(t, ctx, mc, pc, "the cost advances past the outage and attributes analytics-cluster", func(o capv1.CostObservation) error {
		return costAfter(costBefore, o, back, analyticsNS, "analytics-cluster")
	})
	row.Cost = "advancing, analytics-cluster attributed"
	lost := lostExecutors(ran, mustRunningExecutors(t, ctx, wc, analyticsNS, pool))
	row.ExecutorsLost = len(lost)
	gone := append(lostComposed(ctx, mc, mgmtBefore), lostComposed(ctx, wc, westBefore)...)
	row.ComposedLost = len(gone)
	if len(lost) > 0 {
		t.Errorf("%d executors in west that ran no longer run: %v", len(lost), lost)
	}
	if len(gone) > 0 {
		t.Errorf("%d of the %d objects the pool composed (%d in the management cluster, %d in west) are gone or replaced: %v",
			len(gone), len(mgmtBefore)+len(westBefore), len(mgmtBefore), len(westBefore), gone)
	}
	t.Logf("outage: %d executors and %d composed objects (%d in west) kept", len(ran), len(mgmtBefore)+len(westBefore), len(westBefore))
	if _, err := nodePoolOwner(ctx, wc, pool); err != nil {
		t.Errorf("west's NodePool after the outage: %v", err)
	}

	// (a) Deleting the claim removes west's objects and nodes, once its
	// executors are gone, as docs/install.md's uninstall order says: a
	// running executor carries karpenter.sh/do-not-disrupt, and Karpenter
	// drains a deleted NodePool's node around it until its
	// terminationGracePeriod (24 h).
	scaleExecutors(t, ctx, wc, analyticsNS, "analytics-cluster", 0)
	if _, err := kubectl(ctx, s.Cluster.Kubeconfig, "delete", "pool", "-n", poolNS, pool, "--wait=false"); err != nil {
		t.Fatal(err)
	}
	took = eventually(t, waitDisruption, "west's NodePool, warmup DaemonSets and pool nodes gone", func(ctx context.Context) (bool, error) {
		_, err := nodePoolOwner(ctx, wc, pool)
		ds, derr := daemonSets(ctx, wc, warmups(pool))
		nodes := len(poolNodes(t, ctx, wc, pool))
		return client.IgnoreNotFound(err) == nil && err != nil && derr == nil && len(ds) == 0 && nodes == 0,
			fmt.Errorf("NodePool: %v; %d warmup DaemonSets (%v); %d nodes", err, len(ds), derr, nodes)
	})
	t.Logf("claim deleted -> west's objects and nodes gone: %s", took.Round(100*time.Millisecond))
	if n := len(readyNodes(poolNodes(t, ctx, east.client, pool))); n != 1 {
		t.Errorf("east has %d ready pool nodes after west's pool went, want 1", n)
	}
	t.Logf("%s took %s", t.Name(), time.Since(start).Round(time.Second))
}

// workloadObjects are what pool composed in the workload cluster c
// reaches, through provider-kubernetes' Objects: its NodePool, NodeClass
// and warmup DaemonSets, with their UIDs.
func workloadObjects(t *testing.T, ctx context.Context, c client.Client, pool string) []composedObject {
	t.Helper()
	objs := []composedObject{
		{apiVersion: karpenterAPI, kind: "NodePool", name: pool + "-nodepool"},
		{apiVersion: "karpenter.kwok.sh/v1alpha1", kind: "KWOKNodeClass", name: pool + "-nodeclass"},
	}
	for i, o := range objs {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk(o.apiVersion, o.kind))
		if err := c.Get(ctx, types.NamespacedName{Name: o.name}, u); err != nil {
			t.Fatalf("%s in the workload cluster: %v", o, err)
		}
		objs[i].uid = u.GetUID()
	}
	ds, err := daemonSets(ctx, c, warmups(pool))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		objs = append(objs, composedObject{apiVersion: "apps/v1", kind: "DaemonSet", namespace: d.Namespace, name: d.Name, uid: d.UID})
	}
	return objs
}

// countObjects counts provider-kubernetes' Objects.
func countObjects(t *testing.T, ctx context.Context, c client.Client) int {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk("kubernetes.crossplane.io/v1alpha2", "ObjectList"))
	mustList(t, ctx, c, l)
	return len(l.Items)
}

func readFile(p string) string {
	b, _ := os.ReadFile(p) //nolint:gosec // a log of the test
	return string(b)
}
