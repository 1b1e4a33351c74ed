package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

const (
	poolNS        = "e6-pools"
	analyticsNS   = "workspace-analytics-prod"
	reportingNS   = "workspace-reporting"
	claimAPI      = "e6data.io/v1alpha1"
	karpenterAPI  = "karpenter.sh/v1"
	capacityAPI   = "capacity.e6data.io/v1alpha1"
	burstReplicas = 3
	// statusBound is how late executor changes may show on the claim.
	statusBound = 10 * time.Second
)

// TestPool runs burstpool as users run it: the packages installed through
// Crossplane's package manager, Pools created as claims, QueryService
// executors bursting onto them. The cluster under test is a local control
// plane with Karpenter's kwok provider, or the cluster $BURSTPOOL_E2E_KUBECONFIG
// reaches (cluster_test.go). Each scenario of poolScenarios owns its
// namespaces and pool and runs alone or beside the others.
func TestPool(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	su := newSuite(t, sharedPlane)
	s := su.Stack
	if su.has(ownSettings) {
		// The stack's settings with Karpenter told to remove empty nodes
		// at once, so that scale-down is observable within the test.
		applyFastComposition(t, ctx, s.Cluster.Config, su.root)
	}
	referenceQueryServices(t, ctx, s.Cluster.Kubeconfig)
	runScenarios(t, su, poolScenarios)
}

// poolScenarios are TestPool's scenarios. A new scenario is a function in
// a file of its own, registered here by one line; exclusive ones run first,
// alone, the others in parallel.
var poolScenarios = []scenario{
	{name: "ProviderRestart", needs: []capability{simulatedCloud, restartableRuntimes}, exclusive: true, run: scenarioProviderRestart},
	{name: "SpotSurvivesADryMarket", needs: []capability{simulatedCloud, restartableKarpenter}, exclusive: true, namespaces: []string{poolNS, analyticsNS}, pools: []string{"spot-pool"}, run: scenarioSpotSurvivesADryMarket},
	{name: "NodeIAM", needs: []capability{simulatedCloud, ownSettings}, exclusive: true, namespaces: []string{poolNS, analyticsNS}, pools: []string{iamPool}, run: scenarioNodeIAM},
	// FairShare bounds how long an evicted executor's share takes to pass
	// to another QueryService (shareBound), while the evicted one's
	// replacement races the other's pending executors for the slot; with
	// a busy scheduler beside it the race took more rounds than the bound
	// allows, so it runs alone.
	{name: "FairShare", needs: []capability{simulatedCloud}, exclusive: true, namespaces: []string{poolNS, analyticsNS}, pools: []string{sharePool}, run: scenarioFairShare},
	{name: "CostAcrossRestart", needs: []capability{simulatedCloud, restartableRuntimes}, exclusive: true, namespaces: []string{"cost-restart"}, pools: []string{"cost-restart"}, run: scenarioCostAcrossRestart},
	{name: "ReferenceManifests", needs: []capability{simulatedCloud}, run: scenarioReferenceManifests},
	{name: "TroubleshootingCommands", needs: []capability{simulatedCloud}, run: scenarioTroubleshootingCommands},
	{name: "Burst", needs: []capability{simulatedCloud}, run: scenarioBurst},
	{name: "Cost", needs: []capability{simulatedCloud, restartableRuntimes}, run: scenarioCost},
	{name: "NotAllowedQueryService", run: scenarioNotAllowedQueryService},
	// Tenants: pools isolated by namespace, access enforced at admission.
	// tenant-b is the settings' second tenant, one namespace for all four.
	{name: "SameNameRefused", needs: []capability{simulatedCloud}, lock: tenantNS, namespaces: []string{tenantNS, tenantWS}, run: scenarioSameNameRefused},
	{name: "SecondTenantPool", needs: []capability{simulatedCloud}, lock: tenantNS, namespaces: []string{tenantNS, tenantWS}, pools: []string{tenantPool}, run: scenarioSecondTenantPool},
	{name: "DenyMode", needs: []capability{simulatedCloud}, lock: tenantNS, namespaces: []string{tenantNS, tenantWS, rogueNS}, pools: []string{tenantPool}, run: scenarioDenyMode},
	{name: "SecondTenantPlacement", needs: []capability{simulatedCloud}, lock: tenantNS, namespaces: []string{tenantWS}, run: scenarioSecondTenantPlacement},
	{name: "ScaleDown", needs: []capability{simulatedCloud, ownSettings}, run: scenarioScaleDown},
	{name: "WarmSlotPreempted", needs: []capability{simulatedCloud}, run: scenarioWarmSlotPreempted},
	{name: "SuspendResume", needs: []capability{simulatedCloud, ownSettings}, run: scenarioSuspendResume},
	{name: "LargerQueryServiceAttaches", needs: []capability{simulatedCloud}, namespaces: []string{poolNS, analyticsNS}, pools: []string{"grow-pool", "fixed-pool"}, run: scenarioLargerQueryServiceAttaches},
	{name: "FamilyPoolFollowsItsFirstQueryService", needs: []capability{simulatedCloud}, namespaces: []string{poolNS, analyticsNS}, pools: []string{"family-first"}, run: scenarioFamilyPoolFollowsItsFirstQueryService},
	{name: "ExecutorAtTheModelsEdge", needs: []capability{simulatedCloud}, namespaces: []string{poolNS, analyticsNS}, pools: []string{"model-edge"}, run: scenarioExecutorAtTheModelsEdge},
	{name: "BadInputRejected", run: scenarioBadInputRejected},
	{name: "DriftWaitsForExecutors", needs: []capability{simulatedCloud}, namespaces: []string{poolNS, analyticsNS}, pools: []string{"drift-pool"}, run: scenarioDriftWaitsForExecutors},
	{name: "WarmSlotsGateOff", needs: []capability{simulatedCloud, ownSettings}, namespaces: []string{"warm-gate-off"}, pools: []string{"warm-gate-off-pool"}, run: scenarioWarmSlotsGateOff},
	{name: "WarmBeforeSchedule", needs: []capability{simulatedCloud}, namespaces: []string{warmStartNS}, pools: []string{"warm-start"}, run: scenarioWarmBeforeSchedule},
	{name: "GivebackLaunchesNoNode", needs: []capability{simulatedCloud}, namespaces: []string{warmGivebackNS}, pools: []string{"giveback"}, run: scenarioGivebackLaunchesNoNode},
	{name: "DeleteClaim", needs: []capability{simulatedCloud}, run: scenarioDeleteClaim},
	{name: "VendorVerdict", needs: []capability{simulatedCloud}, run: scenarioVendorVerdict},
	// Warm policies (warmpolicy_test.go).
	{name: "WarmWindow", needs: []capability{simulatedCloud}, run: scenarioWarmWindow},
	{name: "LearnedWarmLevel", needs: []capability{simulatedCloud}, run: scenarioLearnedWarmLevel},
}

// scenarioReferenceManifests: the reference's manifests apply as written
// and work (testReferenceManifests); kubectl get pool shows the
// reference's columns, and with -o wide burstpool's instance type and
// cloud.
func scenarioReferenceManifests(t *testing.T, ctx context.Context, e *env) {
	e.reference(t)
	raw, err := kubeRaw(e.Cluster.Config, "/apis/e6data.io/v1alpha1/namespaces/"+poolNS+"/pools")
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{`"name":"PHASE"`, `"name":"AVAILABLE"`, `"name":"OCCUPIED"`, `"name":"TOTAL"`, `"name":"INSTANCE"`, `"name":"CLOUD"`} {
		if !strings.Contains(raw, col) {
			t.Errorf("kubectl get pool lacks column %s", col)
		}
	}
	_, st, err := readPool(ctx, e.Stack, poolNS, "burst-pool")
	if err != nil {
		t.Fatal(err)
	}
	if st.Cloud != "kwok" || st.ProvisioningMethod != "karpenter" {
		t.Errorf("burst-pool runs on cloud %q with method %q, want kwok and karpenter", st.Cloud, st.ProvisioningMethod)
	}
}

func scenarioTroubleshootingCommands(t *testing.T, ctx context.Context, e *env) {
	e.reference(t)
	testTroubleshootingCommands(t, ctx, e.Stack)
}

// scenarioBurst: a QueryService bursts onto a pool like the seed's burst
// pool; Karpenter launches its nodes, the claim's status matches what
// runs, and the pool's images are warm on the new nodes.
func scenarioBurst(t *testing.T, ctx context.Context, e *env) {
	s, c := e.Stack, e.Client
	b := newBurst(t, ctx, e)
	took := b.start(t, ctx, s, burstReplicas)
	t.Logf("QueryService burst -> %d executors Running: %s", burstReplicas, took.Round(10*time.Millisecond))
	if len(poolNodes(t, ctx, c, b.pool)) == 0 {
		t.Fatal("executors run, but no node carries the pool label")
	}
	eventually(t, waitStatus, "Pool status matches what runs", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		ready := len(readyNodes(poolNodes(t, ctx, c, b.pool)))
		alloc := allocation(p, b.qsNS, b.qs)
		want := fmt.Sprintf("occupied %d total %d available %d nodes %d alloc %d", burstReplicas, ready, ready-burstReplicas, ready, burstReplicas)
		got := fmt.Sprintf("occupied %d total %d available %d nodes %d alloc %d", st.OccupiedExecutors, st.TotalExecutors, st.AvailableExecutors, st.CurrentNodes, alloc)
		return got == want, fmt.Errorf("status %s, want %s", got, want)
	})
	eventually(t, waitStatus, "warmup pods Running on the new nodes and cachedImages Ready", func(ctx context.Context) (bool, error) {
		p, err := claimIn(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		imgs, _, _ := unstructured.NestedSlice(p.Object, "status", "cachedImages")
		if len(imgs) == 0 {
			return false, fmt.Errorf("no cachedImages")
		}
		for _, i := range imgs {
			m := i.(map[string]any)
			if m["warmupStatus"] != "Ready" {
				return false, fmt.Errorf("image %v is %v", m["image"], m["warmupStatus"])
			}
		}
		return true, nil
	})
	if e.has(restartableRuntimes) {
		logUsage(t, s.Cluster)
		for _, p := range []*devplane.Proc{s.Function, s.Provider} {
			if kib, err := localcp.RSSKiB(p.PID); err == nil {
				t.Logf("RSS %-26s pid %-7d %6.1f MiB", p.Name, p.PID, float64(kib)/1024)
			}
		}
	}
}

func scenarioCost(t *testing.T, ctx context.Context, e *env) {
	b := newBurst(t, ctx, e)
	b.start(t, ctx, e.Stack, burstReplicas)
	testCost(t, ctx, e.Stack, b)
}

// scenarioNotAllowedQueryService: a QueryService that points at a pool
// without being allowed, labelled for the pool as QueryServices that use a
// pool are, is reported as not attached and gets no executor.
func scenarioNotAllowedQueryService(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	b := newBurst(t, ctx, e)
	mustApply(t, ctx, s.Cluster.Config, b.manifest(0, false))
	mustApply(t, ctx, s.Cluster.Config, `apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata:
  name: rogue-cluster
  namespace: `+b.qsNS+`
  labels: {e6data.io/pool: `+b.pool+`}
spec:
  executor:
    image: registry.example.com/rogue/executor:1
    resources: {cpu: "1", memory: 2Gi}
    poolRef: {name: `+b.pool+`, namespace: `+b.poolNS+`}
`)
	eventually(t, waitStatus, "rogue-cluster reported as not attached", func(ctx context.Context) (bool, error) {
		p, err := claimIn(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		if m := attachedOf(p, b.qsNS, "rogue-cluster"); m != nil {
			return m["attached"] != true && m["message"] != "", fmt.Errorf("rogue-cluster: %v", m)
		}
		qss, _, _ := unstructured.NestedSlice(p.Object, "status", "attachedQueryServices")
		return false, fmt.Errorf("rogue-cluster not listed in %v", qss)
	})
	p, err := claimIn(ctx, s, b.poolNS, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	if n := allocation(p, b.qsNS, "rogue-cluster"); n != 0 {
		t.Errorf("rogue-cluster has %d pool executors, want 0", n)
	}
}

func scenarioSameNameRefused(t *testing.T, ctx context.Context, e *env) {
	e.reference(t)
	testSameNameRefused(t, ctx, e.Stack)
}

func scenarioSecondTenantPool(t *testing.T, ctx context.Context, e *env) {
	b := newBurst(t, ctx, e)
	b.start(t, ctx, e.Stack, burstReplicas)
	testSecondTenantPool(t, ctx, e.Stack, b)
}

func scenarioDenyMode(t *testing.T, ctx context.Context, e *env) {
	testDenyMode(t, ctx, e.Stack)
}

func scenarioSecondTenantPlacement(t *testing.T, ctx context.Context, e *env) {
	e.reference(t)
	testPlacementAttacks(t, ctx, e.Stack)
}

func scenarioFairShare(t *testing.T, ctx context.Context, e *env) {
	e.reference(t)
	testFairShare(t, ctx, e.Stack)
}

// scenarioProviderRestart: a restarted provider sees what happens next and
// keeps when the QueryService first got a pool executor.
func scenarioProviderRestart(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	b := newBurst(t, ctx, e)
	b.start(t, ctx, s, burstReplicas)
	before, err := claimIn(ctx, s, b.poolNS, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	allocatedAt := allocatedAtOf(before, b.qsNS, b.qs)
	if allocatedAt == "" {
		t.Fatalf("no allocatedAt for %s before the restart: %s", b.qs, countsOf(before))
	}
	if err := s.RestartProvider(); err != nil {
		t.Fatal(err)
	}
	b.scale(t, ctx, s, burstReplicas+1)
	took := eventually(t, waitStatus, "the restarted provider counts a new executor and keeps allocatedAt", func(ctx context.Context) (bool, error) {
		after, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		at := allocatedAtOf(after, b.qsNS, b.qs)
		return st.OccupiedExecutors == burstReplicas+1 && at == allocatedAt, fmt.Errorf("occupied %d allocatedAt %q (was %q)", st.OccupiedExecutors, at, allocatedAt)
	})
	t.Logf("provider restart -> new executor counted, allocatedAt kept: %s", took.Round(10*time.Millisecond))
	b.scale(t, ctx, s, burstReplicas)
	b.waitOccupied(t, s, burstReplicas, "back to the burst's executors")
}

// scenarioScaleDown: executor changes show on the claim within
// statusBound, and Karpenter consolidates the emptied nodes but the warm
// slot's.
func scenarioScaleDown(t *testing.T, ctx context.Context, e *env) {
	s, c := e.Stack, e.Client
	b := newBurst(t, ctx, e)
	b.start(t, ctx, s, burstReplicas)
	// Executor changes show on the claim within statusBound, whether
	// Crossplane's watch circuit of the XPool is closed (realtime
	// compositions pass the PoolCapacity's event) or open (the
	// function is called every 5 s, functions/pool-compose/decision/follow.go);
	// before, an open circuit left the counts a minute behind.
	b.scale(t, ctx, s, 1)
	shown := b.waitOccupied(t, s, 1, "occupied executors drop to one")
	t.Logf("scale %d -> 1 executor: occupied=1 on the claim after %s", burstReplicas, shown.Round(10*time.Millisecond))
	if shown > statusBound {
		t.Errorf("scaling %d executors to 1 showed on the claim after %s, want within %s", burstReplicas, shown.Round(10*time.Millisecond), statusBound)
	}
	b.scale(t, ctx, s, 0)
	eventually(t, waitStatus, "occupied executors and the allocation drop to zero", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		return st.OccupiedExecutors == 0 && allocation(p, b.qsNS, b.qs) == 0, fmt.Errorf("occupied %d", st.OccupiedExecutors)
	})
	// minExecutors is 1: Karpenter removes every pool node but the one
	// that holds the warm slot's placeholder.
	took := eventually(t, waitDisruption, "Karpenter consolidates the empty pool nodes and the counts follow", func(ctx context.Context) (bool, error) {
		if n := len(poolNodes(t, ctx, c, b.pool)); n != 1 {
			return false, fmt.Errorf("%d pool nodes, want 1 for the warm slot", n)
		}
		_, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		total, avail, cur := st.TotalExecutors, st.AvailableExecutors, st.CurrentNodes
		return total == 1 && avail == 1 && cur == 1, fmt.Errorf("total %d available %d nodes %d", total, avail, cur)
	})
	t.Logf("scale down -> empty nodes consolidated, one warm node left, counts follow: %s", took.Round(10*time.Millisecond))
}

// scenarioWarmSlotPreempted: minExecutors 1 keeps one slot warm with a
// placeholder; a real executor takes that slot by preempting it, without a
// new node.
func scenarioWarmSlotPreempted(t *testing.T, ctx context.Context, e *env) {
	s, c := e.Stack, e.Client
	b := newBurst(t, ctx, e)
	mustApply(t, ctx, s.Cluster.Config, b.manifest(1, false))
	qs := b.queryService(t, b.qs)
	if err := c.Create(ctx, qs); err != nil {
		t.Fatal(err)
	}
	var warm []corev1.Node
	eventually(t, waitNodes, "one warm pool node with a placeholder", func(ctx context.Context) (bool, error) {
		warm = poolNodes(t, ctx, c, b.pool)
		if len(warm) != 1 {
			return false, fmt.Errorf("%d pool nodes", len(warm))
		}
		n, err := podsOn(ctx, c, b.poolNS, map[string]string{qsv1.LabelPool: b.pool, qsv1.LabelComponent: qsv1.ComponentPlaceholder}, warm[0].Name)
		return n == 1, fmt.Errorf("%d placeholders on %s (%v)", n, warm[0].Name, err)
	})
	cpu, mem := devplane.ExecutorResources(qs)
	if err := c.Create(ctx, devplane.ExecutorDeployment(b.qsNS, b.qs, "registry.example.com/e6data/executor:e2e", 1, cpu, mem, executorScheduling(t, c, b.poolNS, b.pool))); err != nil {
		t.Fatal(err)
	}
	took := eventually(t, waitReconcile, "the executor runs on the warm node", func(ctx context.Context) (bool, error) {
		n, err := podsOn(ctx, c, b.qsNS, map[string]string{qsv1.LabelPool: b.pool, qsv1.LabelExecutorType: qsv1.ExecutorTypePool}, warm[0].Name)
		return n == 1, err
	})
	t.Logf("executor on a warm slot: %s", took.Round(10*time.Millisecond))
	if n := len(poolNodes(t, ctx, c, b.pool)); n != 1 {
		t.Errorf("%d pool nodes after the executor took the warm slot, want 1", n)
	}
	eventually(t, waitReconcile, "the placeholder Deployment scales to zero once the slot is occupied", func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: b.poolNS, Name: b.pool + "-placeholder"}, d); err != nil {
			return false, err
		}
		return d.Spec.Replicas != nil && *d.Spec.Replicas == 0, fmt.Errorf("replicas %v", d.Spec.Replicas)
	})
}

// scenarioSuspendResume: a suspended pool launches no capacity and keeps
// its warm images; resumed, it is Active with its warm slot.
func scenarioSuspendResume(t *testing.T, ctx context.Context, e *env) {
	s, c, cfg := e.Stack, e.Client, e.Cluster.Config
	b := newBurst(t, ctx, e)
	b.start(t, ctx, s, 1)
	b.scale(t, ctx, s, 0)
	mustApply(t, ctx, cfg, b.manifest(1, true))
	// Suspended once Karpenter has removed the emptied nodes, which takes
	// its disruption loop up to a few minutes on a busy machine.
	took := eventually(t, waitSlow, "the pool is Suspended: no new capacity, warm images kept", func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		np, err := readNodePool(ctx, c, b.pool)
		if err != nil {
			return false, err
		}
		cpu, _, _ := unstructured.NestedString(np.Object, "spec", "limits", "cpu")
		ds, err := daemonSets(ctx, c, client.InNamespace(b.poolNS), warmups(b.pool))
		if err != nil {
			return false, err
		}
		return st.Phase == "Suspended" && cpu == "0" && len(ds) > 0, fmt.Errorf("phase %s, NodePool cpu limit %q, %d warmup DaemonSets", st.Phase, cpu, len(ds))
	})
	t.Logf("suspend -> Suspended: %s", took.Round(10*time.Millisecond))
	mustApply(t, ctx, cfg, b.manifest(1, false))
	took = eventually(t, waitNodes, "the pool is Active again with its warm slot", func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		return st.Phase == "Active" && st.TotalExecutors >= 1, fmt.Errorf("phase %s total %d", st.Phase, st.TotalExecutors)
	})
	t.Logf("resume -> Active with a warm slot: %s", took.Round(10*time.Millisecond))
}

// scenarioDeleteClaim: deleting a claim removes everything it composed,
// and Karpenter drains and removes its nodes.
func scenarioDeleteClaim(t *testing.T, ctx context.Context, e *env) {
	s, c := e.Stack, e.Client
	b := newBurst(t, ctx, e)
	b.start(t, ctx, s, 1)
	// Executors carry karpenter.sh/do-not-disrupt (status.executorScheduling):
	// they go first, as docs/install.md's uninstall order says.
	if err := deleteExecutors(ctx, c, b.qsNS, b.qs); err != nil {
		t.Fatal(err)
	}
	if err := deleteClaim(ctx, c, b.poolNS, b.pool); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitNodes, "everything the claim created is gone", func(ctx context.Context) (bool, error) {
		for _, o := range composed(b.pool) {
			if _, err := s.Get(ctx, gvk(o.api, o.kind), "", o.name); !kerrors.IsNotFound(err) {
				return false, fmt.Errorf("%s %s still there (%v)", o.kind, o.name, err)
			}
		}
		ds, err := daemonSets(ctx, c, client.MatchingLabels{qsv1.LabelPool: b.pool})
		if err != nil {
			return false, err
		}
		return len(ds) == 0, fmt.Errorf("%d DaemonSets left", len(ds))
	})
	took := eventually(t, waitNodes, "Karpenter drains and removes the pool's nodes", func(ctx context.Context) (bool, error) {
		n := len(poolNodes(t, ctx, c, b.pool))
		return n == 0, fmt.Errorf("%d pool nodes left", n)
	})
	t.Logf("claim deleted -> pool nodes gone: %s", took.Round(10*time.Millisecond))
}

// scenarioLargerQueryServiceAttaches: two pools of the r7gd family, one
// that upgrades and one that does not; a QueryService too large for their
// current size attaches to both.
func scenarioLargerQueryServiceAttaches(t *testing.T, ctx context.Context, e *env) {
	s, c, cfg := e.Stack, e.Client, e.Cluster.Config
	// Two pools of the r7gd family, one that upgrades and one that does
	// not; a QueryService too large for their current size attaches
	// to both.
	for _, p := range []struct {
		name    string
		upgrade bool
	}{{"grow-pool", true}, {"fixed-pool", false}} {
		mustApply(t, ctx, cfg, poolManifest(poolNS, p.name, fmt.Sprintf(`
  maxExecutors: 4
  instanceConfig: {instanceFamily: r7gd, autoUpgrade: %t}
  queryServiceSelector:
    matchLabels: {e2e.burstpool.io/pool: %s}
`, p.upgrade, p.name)))
		mustApply(t, ctx, cfg, qsManifest(p.name+"-small", p.name, "2", "4Gi"))
	}
	typeOf := func(ctx context.Context, name string) (string, error) {
		_, st, err := readPool(ctx, s, poolNS, name)
		return st.DerivedInstanceType, err
	}
	var before string
	eventually(t, waitStatus, "both pools sized for the small QueryService", func(ctx context.Context) (bool, error) {
		g, err := typeOf(ctx, "grow-pool")
		if err != nil {
			return false, err
		}
		f, err := typeOf(ctx, "fixed-pool")
		if err != nil {
			return false, err
		}
		before = g
		return g != "" && g == f, fmt.Errorf("grow-pool %q fixed-pool %q", g, f)
	})
	// An executor runs on each pool, which locks its type: from now on
	// it moves only upward, and only with autoUpgrade.
	for _, name := range []string{"grow-pool", "fixed-pool"} {
		if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, name+"-small", "registry.example.com/e6data/executor:"+name+"-small", 1, "2", "4Gi", executorScheduling(t, c, poolNS, name))); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, name := range []string{"grow-pool", "fixed-pool"} {
			if err := deleteExecutors(context.Background(), c, analyticsNS, name+"-small"); client.IgnoreNotFound(err) != nil {
				t.Errorf("cannot delete the executors of %s: %v", name, err)
			}
		}
	})
	eventually(t, waitNodes, "both pools record that executors have run on them", func(ctx context.Context) (bool, error) {
		for _, name := range []string{"grow-pool", "fixed-pool"} {
			p, err := claim(ctx, s, name)
			if err != nil {
				return false, err
			}
			if locked, _, _ := unstructured.NestedBool(p.Object, "status", "sizing", "executorsHaveRun"); !locked {
				return false, fmt.Errorf("%s: status.sizing.executorsHaveRun is not true yet", name)
			}
		}
		return true, nil
	})
	for _, name := range []string{"grow-pool", "fixed-pool"} {
		mustApply(t, ctx, cfg, qsManifest(name+"-large", name, "24", "80Gi"))
	}
	eventually(t, waitStatus, "grow-pool moves to a larger type; its NodePool follows", func(ctx context.Context) (bool, error) {
		g, err := typeOf(ctx, "grow-pool")
		if err != nil {
			return false, err
		}
		np, err := readNodePool(ctx, s.Client, "grow-pool")
		if err != nil {
			return false, err
		}
		return g != before && strings.Contains(fmt.Sprint(np.Object["spec"]), g), fmt.Errorf("grow-pool type %q (was %q)", g, before)
	})
	eventually(t, waitStatus, "fixed-pool keeps its type and reports the large QueryService incompatible", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, poolNS, "fixed-pool")
		if err != nil {
			return false, err
		}
		it := st.DerivedInstanceType
		if m := attachedOf(p, analyticsNS, "fixed-pool-large"); m != nil {
			return it == before && m["compatible"] != true && m["message"] != "", fmt.Errorf("type %s, large QS %v", it, m)
		}
		return false, fmt.Errorf("fixed-pool-large not listed")
	})
}

func scenarioBadInputRejected(t *testing.T, ctx context.Context, e *env) {
	bad := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: e6data.io/v1alpha1
kind: Pool
metadata: {name: bad-pool, namespace: `+poolNS+`}
spec: {maxExecutors: 4, minExecutors: 9, allowedQueryServices: [{name: x}]}
`), &bad.Object); err != nil {
		t.Fatal(err)
	}
	err := e.Client.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "minExecutors must not exceed maxExecutors") {
		t.Errorf("creating a Pool with minExecutors > maxExecutors: got %v, want the schema's message", err)
	}
}

func scenarioFamilyPoolFollowsItsFirstQueryService(t *testing.T, ctx context.Context, e *env) {
	// The simulated AWS offers r7gd under its real names. Empty, the
	// pool takes the family's smallest, r7gd.medium (1 vCPU, 8 GiB);
	// two 7 CPU / 50Gi executors per node need r7gd.4xlarge (16 vCPU,
	// 128 GiB: 15.74 CPU / 116.8Gi allocatable beside EKS's add-ons
	// holds exactly 2), since r7gd.2xlarge (7.76 CPU / 58.1Gi) holds 1.
	testFamilyPoolFollowsItsFirstQueryService(t, ctx, e.Stack, e.Client, e.Cluster.Config, familyFirst{
		Family: "r7gd", Empty: "r7gd.medium", Sized: "r7gd.4xlarge", CPU: "7", Memory: "50Gi", PerNode: 2,
	})
}

func scenarioExecutorAtTheModelsEdge(t *testing.T, ctx context.Context, e *env) {
	testExecutorAtTheModelsEdge(t, ctx, e.Stack, e.Client, e.Cluster.Config)
}

func scenarioDriftWaitsForExecutors(t *testing.T, ctx context.Context, e *env) {
	testDriftWaitsForExecutors(t, ctx, e.Stack, e.Client, e.Cluster.Config) // disruption_test.go
}

func scenarioSpotSurvivesADryMarket(t *testing.T, ctx context.Context, e *env) {
	testSpotSurvivesADryMarket(t, ctx, e.Stack, e.Client, e.Cluster.Config) // disruption_test.go
}

func scenarioNodeIAM(t *testing.T, ctx context.Context, e *env) {
	// The settings go back to the suite's when the scenario ends.
	t.Cleanup(func() { applyFastComposition(t, context.Background(), e.Cluster.Config, e.root) })
	testNodeIAM(t, ctx, e.Stack, e.root) // nodeiam_test.go
}

// poolManifest is the Pool claim ns/name with spec, the YAML of the fields
// under spec indented by two spaces.
func poolManifest(ns, name, spec string) string {
	return fmt.Sprintf("apiVersion: e6data.io/v1alpha1\nkind: Pool\nmetadata: {name: %s, namespace: %s}\nspec:%s", name, ns, spec)
}

func applyFastComposition(t *testing.T, ctx context.Context, cfg restConfig, root string) {
	t.Helper()
	applySettings(t, ctx, cfg, root, nil)
}

// applySettings applies the stack's EnvironmentConfig (devplane.SettingsFile)
// with Karpenter told to remove empty nodes at once, and its data changed
// by mutate (when not nil). Every Pool is composed by the package's
// Composition (the XRD enforces it), so what a scenario changes is the
// cluster's settings.
func applySettings(t *testing.T, ctx context.Context, cfg restConfig, root string, mutate func(data map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(devplane.SettingsFile)))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedMap(u.Object, "data")
	data["karpenter"] = map[string]any{"consolidateAfter": "0s"}
	// Karpenter's buffer controller resolves a CapacityBuffer within a
	// second of its creation here: a pool whose buffer is not processed
	// in 30 s has no autoscaler acting on it (buffer_test.go).
	data["warmCapacity"] = map[string]any{"autoscalerTimeout": warmAutoscalerTimeout}
	if mutate != nil {
		mutate(data)
	}
	if err := unstructured.SetNestedMap(u.Object, data, "data"); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, ctx, cfg, string(out))
}

func qsManifest(name, pool, cpu, mem string) string {
	return fmt.Sprintf(`apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata:
  name: %s
  namespace: %s
  labels: {e2e.burstpool.io/pool: %s}
spec:
  executor:
    image: registry.example.com/e6data/executor:%s
    resources: {cpu: "%s", memory: %s}
    poolRef: {name: %s, namespace: %s}
`, name, analyticsNS, pool, name, cpu, mem, pool, poolNS)
}

// composed names what a pool composes on the simulated cloud beside its
// warmup DaemonSets: its NodePool, NodeClass and PoolCapacity.
func composed(pool string) []struct{ api, kind, name string } {
	return []struct{ api, kind, name string }{
		{karpenterAPI, "NodePool", pool + "-nodepool"},
		{"karpenter.kwok.sh/v1alpha1", "KWOKNodeClass", pool + "-nodeclass"},
		{capacityAPI, "PoolCapacity", pool + "-capacity"},
	}
}

// annotatedIn is a merge patch that pokes the Pool claim ns/name with a new
// annotation, so that Crossplane reconciles it.
func annotatedIn(ns, name string) *unstructured.Unstructured {
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(gvk(claimAPI, "Pool"))
	p.SetNamespace(ns)
	p.SetName(name)
	p.SetAnnotations(map[string]string{"e2e.burstpool.io/poke": time.Now().Format(time.RFC3339Nano)})
	return p
}

// kubeRaw GETs path from the API server as a server-side table, as kubectl
// get does.
func kubeRaw(cfg *rest.Config, path string) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", err
	}
	b, err := dc.RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	return string(b), err
}
