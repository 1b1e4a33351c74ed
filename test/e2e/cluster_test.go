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

	"golang.org/x/sync/errgroup"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// KubeconfigEnv names the environment variable that points the suites
// (TestPool, TestCapacityBuffer, TestNodeGroupPool, TestLinodePool,
// TestRemoteClusters, TestFaults) at an existing cluster instead of a local control plane: the path of a
// kubeconfig whose current context reaches a cluster with burstpool
// installed (docs/install.md) and its EnvironmentConfig's tenancy as
// examples/environmentconfig.yaml sets it.
const KubeconfigEnv = "BURSTPOOL_E2E_KUBECONFIG"

// capability is something of the cluster under test that a scenario needs
// beyond an API server with burstpool installed.
type capability string

const (
	// simulatedCloud: Karpenter's kwok provider launches kwok nodes of
	// the simulated AWS catalog (AWS instance type names), so executors
	// run and pool nodes come and go within seconds.
	simulatedCloud capability = "SimulatedCloud"
	// restartableRuntimes: the function and the capacity provider run as
	// local processes the suite may stop, start and restart, and the
	// provider's metrics endpoint is reachable.
	restartableRuntimes capability = "RestartableRuntimes"
	// restartableKarpenter: Karpenter runs as a local process the suite
	// may restart with another instance types file.
	restartableKarpenter capability = "RestartableKarpenter"
	// restartableAPIServer: the API server and etcd run as local
	// processes; the suite may stop and start the API server and compact
	// etcd.
	restartableAPIServer capability = "RestartableAPIServer"
	// ownSettings: the suite may change the cluster's EnvironmentConfig
	// (its burstpool settings) and install third-party CRDs.
	ownSettings capability = "OwnSettings"
	// capacityBufferGate: Karpenter runs with its CapacityBuffer feature
	// gate on and provisions nodes for CapacityBuffers. The gate is
	// process-wide, so the cluster that offers it offers no placeholder
	// scenario the gate would change.
	capacityBufferGate capability = "CapacityBufferGate"
	// nodeGroupCloud: the cluster looks like EKS without Karpenter to
	// detection (provider-aws's NodeGroup CRD, no Karpenter), and the suite
	// plays provider-aws and the Cluster Autoscaler (test/harness/castandin)
	// on it, adding kwok nodes to the node groups pools compose.
	nodeGroupCloud capability = "NodeGroupCloud"
	// linodeCloud: the cluster looks like Linode LKE to detection (the LKE
	// node pool CRD, no Karpenter), and the suite may create kwok nodes
	// labelled and tainted as an LKE pool's.
	linodeCloud capability = "LinodeCloud"
	// workloadClusters: beside the cluster under test, which runs no
	// Karpenter, two workload clusters west and east (control planes
	// without Crossplane, with Karpenter's kwok provider) that the suite
	// reaches and whose API servers it may restart.
	workloadClusters capability = "WorkloadClusters"
	// highlyAvailable: the capacity provider runs as two replicas that
	// elect a leader, each started again when it exits, with the
	// fail-safe beside them (Stack.Replicas, Stack.Failsafe), which the
	// suite may kill and hold down.
	highlyAvailable capability = "HighlyAvailable"
)

// cluster is the cluster under test: the one seam through which scenarios
// reach it. The embedded Stack carries the client, the REST config and
// the kubeconfig (Cluster.Config, Cluster.Kubeconfig) in every mode; its
// processes (Function, Provider, Cluster's components) exist only when
// has reports the capabilities that use them. A cluster is safe for
// concurrent use by parallel scenarios.
type cluster struct {
	*devplane.Stack
	// mode names where the cluster comes from: "local control plane" or
	// "kubeconfig <path>".
	mode string
	caps []capability
	// workloads are the workload clusters beside it (workloadClusters),
	// in the order of plane.workloads.
	workloads []*workloadPlane
}

// plane is the local control plane a suite's scenarios run on: how its
// stack differs from stackConfig's, and the capabilities it then offers.
// On a kubeconfig's cluster no plane is brought up.
type plane struct {
	// configure changes the stack's configuration; nil keeps stackConfig's.
	configure func(t *testing.T, cfg *devplane.Config)
	// workloads names workload clusters brought up beside the stack, at
	// the same time.
	workloads []string
	caps      []capability
}

// sharedPlane is TestPool's: burstpool on the simulated AWS cloud, whose
// runtimes, Karpenter and settings the scenarios may change.
var sharedPlane = plane{caps: []capability{simulatedCloud, restartableRuntimes, restartableKarpenter, ownSettings}}

// workload is the workload cluster named name, or nil when the cluster
// has none of that name.
func (k *cluster) workload(name string) *workloadPlane {
	for _, w := range k.workloads {
		if w.name == name {
			return w
		}
	}
	return nil
}

// has reports whether the cluster offers every capability of caps.
func (k *cluster) has(caps ...capability) bool {
	for _, c := range caps {
		if !slices.Contains(k.caps, c) {
			return false
		}
	}
	return true
}

// require skips t, naming what is missing, when the cluster lacks one of
// caps. Only a cluster reached through a kubeconfig lacks any: on the
// local control plane every scenario runs, so a missing capability there
// fails t.
func (k *cluster) require(t *testing.T, caps ...capability) {
	t.Helper()
	var missing []string
	for _, c := range caps {
		if !k.has(c) {
			missing = append(missing, string(c))
		}
	}
	if len(missing) == 0 {
		return
	}
	if k.mode == localMode {
		t.Fatalf("the local control plane lacks %s", strings.Join(missing, ", "))
	}
	t.Skipf("needs %s, which the cluster reached through %s lacks", strings.Join(missing, ", "), k.mode)
}

const localMode = "local control plane"

// clusterUnderTest is the cluster a suite's scenarios run on: the one
// $BURSTPOOL_E2E_KUBECONFIG reaches, or else the local control plane p
// with burstpool installed, stopped when t ends.
func clusterUnderTest(t *testing.T, p plane) *cluster {
	t.Helper()
	if path := os.Getenv(KubeconfigEnv); path != "" {
		return kubeconfigCluster(t, path)
	}
	return localCluster(t, p)
}

// localCluster brings up p: the stack and its workload clusters together,
// each stopped when t ends.
func localCluster(t *testing.T, p plane) *cluster {
	t.Helper()
	cfg := stackConfig(t)
	if p.configure != nil {
		p.configure(t, &cfg)
	}
	start := time.Now()
	var s *devplane.Stack
	workloads := make([]*workloadPlane, len(p.workloads))
	g, gctx := errgroup.WithContext(t.Context())
	for i, name := range p.workloads {
		dir := t.TempDir()
		g.Go(func() error {
			w, err := startWorkloadPlane(gctx, cfg.Root, dir, name)
			workloads[i] = w
			return err
		})
	}
	g.Go(func() error {
		var err error
		s, err = devplane.Up(gctx, cfg)
		return err
	})
	err := g.Wait()
	t.Cleanup(func() {
		for _, w := range workloads {
			if w != nil {
				if err := w.cluster.Down(); err != nil {
					t.Logf("cannot stop workload cluster %s: %v", w.name, err)
				}
			}
		}
	})
	if s != nil {
		downWithLogs(t, s)
	}
	if err != nil {
		t.Fatalf("cannot bring burstpool up: %v", err)
	}
	t.Logf("burstpool up in %s, offering %v", time.Since(start).Round(100*time.Millisecond), p.caps)
	for name, d := range s.Took {
		t.Logf("step %-70s %s", name, d.Round(100*time.Millisecond))
	}
	return &cluster{Stack: s, mode: localMode, caps: p.caps, workloads: workloads}
}

// workloadPlane is a control plane without Crossplane that pools run in:
// etcd, kube-apiserver, controller-manager, scheduler, kwok and Karpenter,
// offering the catalog the function sizes from, with e6data's QueryService
// CRD.
type workloadPlane struct {
	name    string
	cluster *localcp.Cluster
	client  client.Client
}

// startWorkloadPlane starts the workload plane name under dir. Unless it
// returns nil, the caller stops what it returns, error or not.
func startWorkloadPlane(ctx context.Context, root, dir, name string) (*workloadPlane, error) {
	bins, err := localcp.ToolBinaries(ctx, root)
	if err != nil {
		return nil, err
	}
	types := filepath.Join(dir, "instance-types.json")
	if err := devplane.WriteInstanceTypes(types, devplane.SimulatedCloud); err != nil {
		return nil, err
	}
	c, err := localcp.Up(ctx, localcp.Config{Dir: filepath.Join(dir, "cluster"), Binaries: bins, StopWithParent: true, SkipCrossplane: true, InstanceTypesFile: types})
	if err != nil {
		return nil, fmt.Errorf("workload plane %s: %w", name, err)
	}
	w := &workloadPlane{name: name, cluster: c}
	if w.client, err = client.New(c.Config, client.Options{}); err != nil {
		return w, err
	}
	if err := localcp.ApplyFiles(ctx, c.Config, filepath.Join(root, "examples", "crds")); err != nil {
		return w, err
	}
	return w, localcp.WaitEstablished(ctx, c.Config, waitEstablished, "queryservices.e6data.io")
}

// kubeconfigCluster reaches the cluster of kubeconfig's current context.
// It offers no capability: burstpool is installed there as users install
// it, on whatever cloud the cluster runs.
func kubeconfigCluster(t *testing.T, kubeconfig string) *cluster {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("cannot read %s=%s: %v", KubeconfigEnv, kubeconfig, err)
	}
	sch := clientgoscheme.Scheme
	_ = apiextv1.AddToScheme(sch)
	c, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		t.Fatalf("cannot reach the cluster of %s: %v", kubeconfig, err)
	}
	s := &devplane.Stack{Cluster: &localcp.Cluster{Config: cfg, State: localcp.State{Kubeconfig: kubeconfig}}, Client: c}
	return &cluster{Stack: s, mode: "kubeconfig " + kubeconfig}
}
