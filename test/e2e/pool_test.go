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
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

const (
	poolNS        = "e6-pools"
	analyticsNS   = "workspace-analytics-prod"
	reportingNS   = "workspace-reporting"
	e2ePool       = "e2e-burst"
	claimAPI      = "e6data.io/v1alpha1"
	karpenterAPI  = "karpenter.sh/v1"
	capacityAPI   = "capacity.e6data.io/v1alpha1"
	burstReplicas = 3
	// statusBound is how late executor changes may show on the claim.
	statusBound = 10 * time.Second
	e2eQSName   = "burst-analytics"
)

// TestPool runs burstpool as users run it: the packages installed through
// Crossplane's package manager on a real control plane with Karpenter's kwok
// provider, Pools created as claims, QueryService executors bursting onto
// them. The scenarios share one control plane, in order.
func TestPool(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	root := gomod.RootForTest(t)
	s := stackUp(t, stackConfig(t))
	for name, d := range s.Took {
		t.Logf("step %-70s %s", name, d.Round(100*time.Millisecond))
	}
	c := s.Client
	cfg := s.Cluster.Config

	// The stack's settings with Karpenter told to remove empty nodes at
	// once, so that scale-down is observable within the test.
	applyFastComposition(t, ctx, cfg, root)

	t.Run("ReferenceManifests", func(t *testing.T) {
		testReferenceManifests(t, ctx, s, root)
		// kubectl get pool shows the columns of the reference, and with -o
		// wide burstpool's instance type and cloud.
		raw, err := kubeRaw(cfg, "/apis/e6data.io/v1alpha1/namespaces/"+poolNS+"/pools")
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range []string{`"name":"PHASE"`, `"name":"AVAILABLE"`, `"name":"OCCUPIED"`, `"name":"TOTAL"`, `"name":"INSTANCE"`, `"name":"CLOUD"`} {
			if !strings.Contains(raw, col) {
				t.Errorf("kubectl get pool lacks column %s", col)
			}
		}
		_, st, err := readPool(ctx, s, poolNS, "burst-pool")
		if err != nil {
			t.Fatal(err)
		}
		if st.Cloud != "kwok" || st.ProvisioningMethod != "karpenter" {
			t.Errorf("burst-pool runs on cloud %q with method %q, want kwok and karpenter", st.Cloud, st.ProvisioningMethod)
		}
	})

	t.Run("TroubleshootingCommands", func(t *testing.T) {
		testTroubleshootingCommands(t, ctx, s)
	})

	t.Run("Burst", func(t *testing.T) {
		mustApply(t, ctx, cfg, e2ePoolManifest(1, false))
		// A QueryService that bursts onto the e2e pool, like the seed's
		// analytics-cluster.
		qs := mustQS(t, ctx, c, analyticsNS, "analytics-cluster")
		spec, _, _ := unstructured.NestedMap(qs.Object, "spec")
		e2eQS := &unstructured.Unstructured{Object: map[string]any{"apiVersion": claimAPI, "kind": "QueryService", "spec": spec}}
		e2eQS.SetNamespace(analyticsNS)
		e2eQS.SetName(e2eQSName)
		if err := unstructured.SetNestedStringMap(e2eQS.Object, map[string]string{"name": e2ePool, "namespace": poolNS}, "spec", "executor", "poolRef"); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, e2eQS); err != nil {
			t.Fatal(err)
		}
		// Its operator would create this Deployment, with executors sized
		// as the QueryService says.
		cpu, mem := devplane.ExecutorResources(qs)
		if err := c.Create(ctx, devplane.ExecutorDeployment(analyticsNS, e2eQSName, "registry.example.com/e6data/executor:e2e", burstReplicas, cpu, mem, executorScheduling(t, c, poolNS, e2ePool))); err != nil {
			t.Fatal(err)
		}
		took := waitExecutors(t, waitNodes, "pool executors Running on Karpenter-launched pool nodes", c, analyticsNS, e2ePool, burstReplicas)
		t.Logf("QueryService burst -> %d executors Running: %s", burstReplicas, took.Round(10*time.Millisecond))
		nodes := poolNodes(t, ctx, c, e2ePool)
		if len(nodes) == 0 {
			t.Fatal("executors run, but no node carries the pool label")
		}
		eventually(t, waitStatus, "Pool status matches what runs", func(ctx context.Context) (bool, error) {
			p, st, err := readPool(ctx, s, poolNS, e2ePool)
			if err != nil {
				return false, err
			}
			ready := len(readyNodes(poolNodes(t, ctx, c, e2ePool)))
			alloc := allocation(p, analyticsNS, e2eQSName)
			want := fmt.Sprintf("occupied %d total %d available %d nodes %d alloc %d", burstReplicas, ready, ready-burstReplicas, ready, burstReplicas)
			got := fmt.Sprintf("occupied %d total %d available %d nodes %d alloc %d", st.OccupiedExecutors, st.TotalExecutors, st.AvailableExecutors, st.CurrentNodes, alloc)
			return got == want, fmt.Errorf("status %s, want %s", got, want)
		})
		eventually(t, waitStatus, "warmup pods Running on the new nodes and cachedImages Ready", func(ctx context.Context) (bool, error) {
			p, err := claim(ctx, s, e2ePool)
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
		logUsage(t, s.Cluster)
		for _, p := range []*devplane.Proc{s.Function, s.Provider} {
			if kib, err := localcp.RSSKiB(p.PID); err == nil {
				t.Logf("RSS %-26s pid %-7d %6.1f MiB", p.Name, p.PID, float64(kib)/1024)
			}
		}
	})

	t.Run("Cost", func(t *testing.T) {
		testCost(t, ctx, s)
	})

	t.Run("NotAllowedQueryService", func(t *testing.T) {
		// A QueryService that points at the pool without being allowed,
		// labelled for the pool as QueryServices that use a pool are.
		mustApply(t, ctx, cfg, `apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata:
  name: rogue-cluster
  namespace: `+reportingNS+`
  labels: {e6data.io/pool: `+e2ePool+`}
spec:
  executor:
    image: registry.example.com/rogue/executor:1
    resources: {cpu: "1", memory: 2Gi}
    poolRef: {name: `+e2ePool+`, namespace: `+poolNS+`}
`)
		eventually(t, waitStatus, "rogue-cluster reported as not attached", func(ctx context.Context) (bool, error) {
			p, err := claim(ctx, s, e2ePool)
			if err != nil {
				return false, err
			}
			if m := attachedOf(p, reportingNS, "rogue-cluster"); m != nil {
				return m["attached"] != true && m["message"] != "", fmt.Errorf("rogue-cluster: %v", m)
			}
			qss, _, _ := unstructured.NestedSlice(p.Object, "status", "attachedQueryServices")
			return false, fmt.Errorf("rogue-cluster not listed in %v", qss)
		})
		p, err := claim(ctx, s, e2ePool)
		if err != nil {
			t.Fatal(err)
		}
		if n := allocation(p, reportingNS, "rogue-cluster"); n != 0 {
			t.Errorf("rogue-cluster has %d pool executors, want 0", n)
		}
	})

	// Tenants: pools isolated by namespace, access enforced at admission.
	t.Run("SameNameRefused", func(t *testing.T) {
		testSameNameRefused(t, ctx, s)
	})
	t.Run("SecondTenantPool", func(t *testing.T) {
		testSecondTenantPool(t, ctx, s)
	})
	t.Run("DenyMode", func(t *testing.T) {
		testDenyMode(t, ctx, s)
	})
	t.Run("SecondTenantPlacement", func(t *testing.T) {
		testPlacementAttacks(t, ctx, s)
	})
	t.Run("FairShare", func(t *testing.T) {
		testFairShare(t, ctx, s)
	})

	t.Run("ProviderRestart", func(t *testing.T) {
		before, err := claim(ctx, s, e2ePool)
		if err != nil {
			t.Fatal(err)
		}
		allocatedAt := allocatedAtOf(before, analyticsNS, e2eQSName)
		if allocatedAt == "" {
			t.Fatalf("no allocatedAt for %s before the restart: %s", e2eQSName, countsOf(before))
		}
		if err := s.RestartProvider(); err != nil {
			t.Fatal(err)
		}
		// The restarted provider must see what happens next, and keep
		// when the QueryService first got a pool executor.
		scaleExecutors(t, ctx, c, analyticsNS, e2eQSName, burstReplicas+1)
		took := eventually(t, waitStatus, "the restarted provider counts a new executor and keeps allocatedAt", func(ctx context.Context) (bool, error) {
			after, st, err := readPool(ctx, s, poolNS, e2ePool)
			if err != nil {
				return false, err
			}
			at := allocatedAtOf(after, analyticsNS, e2eQSName)
			return st.OccupiedExecutors == burstReplicas+1 && at == allocatedAt, fmt.Errorf("occupied %d allocatedAt %q (was %q)", st.OccupiedExecutors, at, allocatedAt)
		})
		t.Logf("provider restart -> new executor counted, allocatedAt kept: %s", took.Round(10*time.Millisecond))
		scaleExecutors(t, ctx, c, analyticsNS, e2eQSName, burstReplicas)
		eventually(t, waitStatus, "back to the burst's executors", func(ctx context.Context) (bool, error) {
			_, st, err := readPool(ctx, s, poolNS, e2ePool)
			if err != nil {
				return false, err
			}
			return st.OccupiedExecutors == burstReplicas, fmt.Errorf("occupied %d", st.OccupiedExecutors)
		})
	})

	t.Run("FunctionUnavailable", func(t *testing.T) {
		if err := s.StopFunction(); err != nil {
			t.Fatal(err)
		}
		// Crossplane keeps reconciling; nothing the pool composed may go.
		if err := c.Patch(ctx, annotated(e2ePool), client.Merge); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Second)
		for _, o := range composed(e2ePool) {
			if _, err := s.Get(ctx, gvk(o.api, o.kind), "", o.name); err != nil {
				t.Errorf("%s %s is gone while the function was down: %v", o.kind, o.name, err)
			}
		}
		if n, _ := runningExecutors(ctx, c, analyticsNS, e2ePool); n != burstReplicas {
			t.Errorf("%d executors Running while the function was down, want %d", n, burstReplicas)
		}
		if err := s.StartFunction(ctx); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitStatus, "the pool is Ready again", func(ctx context.Context) (bool, error) {
			p, err := claim(ctx, s, e2ePool)
			if err != nil {
				return false, err
			}
			return condition(p, "Ready") == "True" && condition(p, "Synced") == "True", fmt.Errorf("Ready %s Synced %s", condition(p, "Ready"), condition(p, "Synced"))
		})
	})

	t.Run("ScaleDown", func(t *testing.T) {
		// Executor changes show on the claim within statusBound, whether
		// Crossplane's watch circuit of the XPool is closed (realtime
		// compositions pass the PoolCapacity's event) or open (the
		// function is called every 5 s, functions/pool-compose/follow.go);
		// before, an open circuit left the counts a minute behind.
		scaleExecutors(t, ctx, c, analyticsNS, e2eQSName, 1)
		shown := eventually(t, waitStatus, "occupied executors drop to one", func(ctx context.Context) (bool, error) {
			_, st, err := readPool(ctx, s, poolNS, e2ePool)
			if err != nil {
				return false, err
			}
			return st.OccupiedExecutors == 1, fmt.Errorf("occupied %d", st.OccupiedExecutors)
		})
		t.Logf("scale %d -> 1 executor: occupied=1 on the claim after %s", burstReplicas, shown.Round(10*time.Millisecond))
		if shown > statusBound {
			t.Errorf("scaling %d executors to 1 showed on the claim after %s, want within %s", burstReplicas, shown.Round(10*time.Millisecond), statusBound)
		}
		scaleExecutors(t, ctx, c, analyticsNS, e2eQSName, 0)
		eventually(t, waitStatus, "occupied executors and the allocation drop to zero", func(ctx context.Context) (bool, error) {
			p, st, err := readPool(ctx, s, poolNS, e2ePool)
			if err != nil {
				return false, err
			}
			return st.OccupiedExecutors == 0 && allocation(p, analyticsNS, e2eQSName) == 0, fmt.Errorf("occupied %d", st.OccupiedExecutors)
		})
		// minExecutors is 1: Karpenter removes every pool node but the one
		// that holds the warm slot's placeholder.
		took := eventually(t, waitDisruption, "Karpenter consolidates the empty pool nodes and the counts follow", func(ctx context.Context) (bool, error) {
			if n := len(poolNodes(t, ctx, c, e2ePool)); n != 1 {
				return false, fmt.Errorf("%d pool nodes, want 1 for the warm slot", n)
			}
			_, st, err := readPool(ctx, s, poolNS, e2ePool)
			if err != nil {
				return false, err
			}
			total, avail, cur := st.TotalExecutors, st.AvailableExecutors, st.CurrentNodes
			return total == 1 && avail == 1 && cur == 1, fmt.Errorf("total %d available %d nodes %d", total, avail, cur)
		})
		t.Logf("scale down -> empty nodes consolidated, one warm node left, counts follow: %s", took.Round(10*time.Millisecond))
	})

	t.Run("WarmSlotPreempted", func(t *testing.T) {
		// minExecutors 1 keeps one slot warm with a placeholder; a real
		// executor takes that slot by preempting it, without a new node.
		warm := poolNodes(t, ctx, c, e2ePool)
		if len(warm) != 1 {
			t.Fatalf("want one warm pool node, have %d", len(warm))
		}
		eventually(t, waitReconcile, "a placeholder runs on the warm node", func(ctx context.Context) (bool, error) {
			n, err := podsOn(ctx, c, poolNS, map[string]string{qsv1.LabelPool: e2ePool, qsv1.LabelComponent: qsv1.ComponentPlaceholder}, warm[0].Name)
			return n == 1, err
		})
		scaleExecutors(t, ctx, c, analyticsNS, e2eQSName, 1)
		took := eventually(t, waitReconcile, "the executor runs on the warm node", func(ctx context.Context) (bool, error) {
			n, err := podsOn(ctx, c, analyticsNS, map[string]string{qsv1.LabelPool: e2ePool, qsv1.LabelExecutorType: qsv1.ExecutorTypePool}, warm[0].Name)
			return n == 1, err
		})
		t.Logf("executor on a warm slot: %s", took.Round(10*time.Millisecond))
		if n := len(poolNodes(t, ctx, c, e2ePool)); n != 1 {
			t.Errorf("%d pool nodes after the executor took the warm slot, want 1", n)
		}
		eventually(t, waitReconcile, "the placeholder Deployment scales to zero once the slot is occupied", func(ctx context.Context) (bool, error) {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: e2ePool + "-placeholder"}, d); err != nil {
				return false, err
			}
			return d.Spec.Replicas != nil && *d.Spec.Replicas == 0, fmt.Errorf("replicas %v", d.Spec.Replicas)
		})
		scaleExecutors(t, ctx, c, analyticsNS, e2eQSName, 0)
	})

	t.Run("SuspendResume", func(t *testing.T) {
		mustApply(t, ctx, cfg, e2ePoolManifest(1, true))
		// Suspended once Karpenter has removed the emptied warm node, which
		// takes its disruption loop up to a few minutes on a busy machine.
		took := eventually(t, waitSlow, "the pool is Suspended: no new capacity, warm images kept", func(ctx context.Context) (bool, error) {
			_, st, err := readPool(ctx, s, poolNS, e2ePool)
			if err != nil {
				return false, err
			}
			phase := st.Phase
			np, err := readNodePool(ctx, s.Client, e2ePool)
			if err != nil {
				return false, err
			}
			cpu, _, _ := unstructured.NestedString(np.Object, "spec", "limits", "cpu")
			ds, err := daemonSets(ctx, c, client.InNamespace(poolNS), warmups(e2ePool))
			if err != nil {
				return false, err
			}
			return phase == "Suspended" && cpu == "0" && len(ds) > 0, fmt.Errorf("phase %s, NodePool cpu limit %q, %d warmup DaemonSets", phase, cpu, len(ds))
		})
		t.Logf("suspend -> Suspended: %s", took.Round(10*time.Millisecond))
		mustApply(t, ctx, cfg, e2ePoolManifest(1, false))
		took = eventually(t, waitNodes, "the pool is Active again with its warm slot", func(ctx context.Context) (bool, error) {
			_, st, err := readPool(ctx, s, poolNS, e2ePool)
			if err != nil {
				return false, err
			}
			return st.Phase == "Active" && st.TotalExecutors >= 1, fmt.Errorf("phase %s total %d", st.Phase, st.TotalExecutors)
		})
		t.Logf("resume -> Active with a warm slot: %s", took.Round(10*time.Millisecond))
	})

	t.Run("LargerQueryServiceAttaches", func(t *testing.T) {
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
	})

	t.Run("FamilyPoolFollowsItsFirstQueryService", func(t *testing.T) {
		// The simulated AWS offers r7gd under its real names. Empty, the
		// pool takes the family's smallest, r7gd.medium (1 vCPU, 8 GiB);
		// two 7 CPU / 50Gi executors per node need r7gd.4xlarge (16 vCPU,
		// 128 GiB: 15.74 CPU / 116.8Gi allocatable beside EKS's add-ons
		// holds exactly 2), since r7gd.2xlarge (7.76 CPU / 58.1Gi) holds 1.
		testFamilyPoolFollowsItsFirstQueryService(t, ctx, s, c, cfg, familyFirst{
			Family: "r7gd", Empty: "r7gd.medium", Sized: "r7gd.4xlarge", CPU: "7", Memory: "50Gi", PerNode: 2,
		})
	})

	t.Run("ExecutorAtTheModelsEdge", func(t *testing.T) {
		testExecutorAtTheModelsEdge(t, ctx, s, c, cfg)
	})

	t.Run("BadInputRejected", func(t *testing.T) {
		bad := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(`apiVersion: e6data.io/v1alpha1
kind: Pool
metadata: {name: bad-pool, namespace: `+poolNS+`}
spec: {maxExecutors: 4, minExecutors: 9, allowedQueryServices: [{name: x}]}
`), &bad.Object); err != nil {
			t.Fatal(err)
		}
		err := c.Create(ctx, bad)
		if err == nil || !strings.Contains(err.Error(), "minExecutors must not exceed maxExecutors") {
			t.Errorf("creating a Pool with minExecutors > maxExecutors: got %v, want the schema's message", err)
		}
	})

	t.Run("DriftWaitsForExecutors", func(t *testing.T) {
		testDriftWaitsForExecutors(t, ctx, s, c, cfg) // disruption_test.go
	})

	t.Run("SpotSurvivesADryMarket", func(t *testing.T) {
		testSpotSurvivesADryMarket(t, ctx, s, c, cfg) // disruption_test.go
	})

	t.Run("NodeIAM", func(t *testing.T) {
		testNodeIAM(t, ctx, s, root) // nodeiam_test.go
	})

	t.Run("DeleteClaim", func(t *testing.T) {
		if err := deleteClaim(ctx, c, poolNS, e2ePool); err != nil {
			t.Fatal(err)
		}
		eventually(t, waitNodes, "everything the claim created is gone", func(ctx context.Context) (bool, error) {
			for _, o := range composed(e2ePool) {
				if _, err := s.Get(ctx, gvk(o.api, o.kind), "", o.name); !kerrors.IsNotFound(err) {
					return false, fmt.Errorf("%s %s still there (%v)", o.kind, o.name, err)
				}
			}
			ds, err := daemonSets(ctx, c, client.MatchingLabels{qsv1.LabelPool: e2ePool})
			if err != nil {
				return false, err
			}
			return len(ds) == 0, fmt.Errorf("%d DaemonSets left", len(ds))
		})
		took := eventually(t, waitNodes, "Karpenter drains and removes the pool's nodes", func(ctx context.Context) (bool, error) {
			n := len(poolNodes(t, ctx, c, e2ePool))
			return n == 0, fmt.Errorf("%d pool nodes left", n)
		})
		t.Logf("claim deleted -> pool nodes gone: %s", took.Round(10*time.Millisecond))
	})
}

// poolManifest is the Pool claim ns/name with spec, the YAML of the fields
// under spec indented by two spaces.
func poolManifest(ns, name, spec string) string {
	return fmt.Sprintf("apiVersion: e6data.io/v1alpha1\nkind: Pool\nmetadata: {name: %s, namespace: %s}\nspec:%s", name, ns, spec)
}

// e2ePoolManifest is a Pool like the seed burst pool, with the e2e
// Composition (fast consolidation), that evicts executors of QueryServices
// it does not attach.
func e2ePoolManifest(minExecutors int, suspend bool) string {
	return poolManifest(poolNS, e2ePool, fmt.Sprintf(`
  minExecutors: %d
  maxExecutors: 12
  suspend: %t
  unauthorizedExecutors: Evict
  allowedQueryServices:
    - {name: %s, namespace: %s}
`, minExecutors, suspend, e2eQSName, analyticsNS))
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

func annotated(name string) *unstructured.Unstructured {
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(gvk(claimAPI, "Pool"))
	p.SetNamespace(poolNS)
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
