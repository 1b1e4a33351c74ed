package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// KubeconfigEnv names the environment variable that points TestPool at an
// existing cluster instead of a local control plane: the path of a
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
	// ownSettings: the suite may change the cluster's EnvironmentConfig
	// (its burstpool settings) and install third-party CRDs.
	ownSettings capability = "OwnSettings"
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

// clusterUnderTest is the cluster TestPool's scenarios run on: the one
// $BURSTPOOL_E2E_KUBECONFIG reaches, or else a local control plane with
// burstpool installed, stopped when t ends.
func clusterUnderTest(t *testing.T) *cluster {
	t.Helper()
	if path := os.Getenv(KubeconfigEnv); path != "" {
		return kubeconfigCluster(t, path)
	}
	s := stackUp(t, stackConfig(t))
	for name, d := range s.Took {
		t.Logf("step %-70s %s", name, d.Round(100*time.Millisecond))
	}
	return &cluster{Stack: s, mode: localMode, caps: []capability{simulatedCloud, restartableRuntimes, restartableKarpenter, ownSettings}}
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
