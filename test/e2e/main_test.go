// Package e2e tests burstpool end to end, installed as users install it. Its
// suites run on real local control planes (test/harness/localcp): etcd,
// kube-apiserver, controller manager, scheduler, kwok, Karpenter's kwok
// provider and Crossplane core, all local processes built from the module
// proxy by hack/tool.sh.
//
// The suites of scenarios (TestPool, TestCapacityBuffer, TestNodeGroupPool,
// TestLinodePool, TestRemoteClusters, TestFaults) reach their cluster through one seam
// (cluster_test.go): a local control plane with burstpool installed, the
// suite's plane, or, when BURSTPOOL_E2E_KUBECONFIG names a kubeconfig, the
// cluster it reaches with burstpool already installed. Each scenario names
// the capabilities it needs beyond that (a simulated cloud, runtimes the
// suite may restart, an API server it may restart, settings it may change, Karpenter's CapacityBuffer
// gate, a node-group or LKE cloud, workload clusters); on a kubeconfig's
// cluster a scenario that needs one it lacks is skipped with its name, on
// the local control plane every scenario runs.
//
// Each scenario is a function registered by one line in its suite's list
// (poolScenarios in pool_test.go for TestPool), with its body in a file
// of its own. It owns its namespaces, QueryServices and Pool (names
// derived from the scenario's, see newBurst) or, in the reference's fixed namespaces, pools and
// QueryServices of names no other scenario uses; it creates what it needs,
// cleans up, and depends on no other scenario having run, so
// `go test -run 'TestPool/ScaleDown$' ./test/e2e/` runs one alone. The
// scenarios run in parallel, but for the exclusive ones (a restart of a
// shared runtime, a change of the cluster's settings), which run first,
// alone. Waits are bounded by the durations named in timeouts_test.go. A
// failed scenario leaves a dump of its objects as YAML under
// _output/e2e/<TestName>/<scenario>/ (dump_test.go).
package e2e

import (
	"context"
	"flag"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	burstsim "github.com/burstpool/burstpool/test/burst"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// TestMain lets this test binary serve as the relay localcp starts for
// components in their own network namespaces, so the suite needs no
// separate build of test/cmd/localcp.
//
// Unless -test.parallel is given, it runs up to scenarioParallelism
// parallel tests and scenarios at a time rather than one per CPU: they
// mostly wait on the cluster's controllers, not on the CPU.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == localcp.RelayCommand {
		os.Exit(localcp.RelayMain(os.Args[2:]))
	}
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(scenarioParallelism)); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// scenarioParallelism is how many parallel tests (TestPool's scenarios,
// the suites with control planes of their own) run at a time by default.
// Each control plane runs about ten processes; more at once than this
// slows every wait on a two-core machine more than it saves.
const scenarioParallelism = 6

// controlPlane starts a local control plane for t and stops it when t ends.
// A missing binary fails the test with the hack/tool.sh command that builds it.
func controlPlane(t *testing.T, mutate func(*localcp.Config)) *localcp.Cluster {
	t.Helper()
	ctx := t.Context()
	bins, err := localcp.ToolBinaries(ctx, gomod.RootForTest(t))
	if err != nil {
		t.Fatalf("cannot get the control plane binaries (run `hack/tool.sh all` or `make tools`): %v", err)
	}
	cfg := localcp.Config{Dir: t.TempDir(), Binaries: bins, StopWithParent: true}
	if mutate != nil {
		mutate(&cfg)
	}
	start := time.Now()
	c, err := localcp.Up(ctx, cfg)
	if err != nil {
		t.Fatalf("cannot start the control plane: %v", err)
	}
	t.Cleanup(func() {
		start := time.Now()
		if err := c.Down(); err != nil {
			t.Errorf("cannot stop the control plane: %v", err)
		}
		t.Logf("control plane down in %s", time.Since(start).Round(10*time.Millisecond))
	})
	t.Logf("control plane up in %s (dir %s)", time.Since(start).Round(10*time.Millisecond), c.Dir)
	names := make([]string, 0, len(c.ReadyAfter))
	for n := range c.ReadyAfter {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return c.ReadyAfter[names[i]] < c.ReadyAfter[names[j]] })
	for _, n := range names {
		t.Logf("  %-24s ready after %s", n, c.ReadyAfter[n])
	}
	return c
}

// logUsage logs the resident memory of each component, largest first.
func logUsage(t *testing.T, c *localcp.Cluster) {
	t.Helper()
	u := c.Usage()
	sort.Slice(u, func(i, j int) bool { return u[i].RSSKiB > u[j].RSSKiB })
	var total int64
	for _, x := range u {
		t.Logf("RSS %-26s pid %-7d %6.1f MiB", x.Name, x.PID, float64(x.RSSKiB)/1024)
		total += x.RSSKiB
	}
	t.Logf("RSS total %.1f MiB", float64(total)/1024)
}

// eventually polls cond every 200ms until it returns true, failing t with
// what and the last error after timeout. It returns the time it took.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(context.Context) (bool, error)) time.Duration {
	t.Helper()
	start := time.Now()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not done after %s (last error: %v)", what, timeout, last)
	}
	return time.Since(start)
}

// stackConfig configures a burstpool stack for t: from this checkout, in
// a folder of t's, stopped with the test binary, narrating to t's log.
func stackConfig(t *testing.T) devplane.Config {
	t.Helper()
	// kwok runs pods at once, except the warmup pods of the startup
	// scenarios, whose pulls they end (startup_test.go).
	kwok, err := gomod.Dir(t.Context(), burstsim.KwokModule, burstsim.KwokVersion)
	if err != nil {
		t.Fatalf("cannot find kwok's module (its default stages): %v", err)
	}
	stages, err := burstsim.KwokConfigPulling(kwok, pullingNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	return devplane.Config{Root: gomod.RootForTest(t), Dir: t.TempDir(), StopWithParent: true, Say: t.Logf, KwokConfig: stages}
}

// stackUp brings burstpool up as cfg says and stops it when t ends (see
// downWithLogs).
func stackUp(t *testing.T, cfg devplane.Config) *devplane.Stack {
	t.Helper()
	s, err := devplane.Up(t.Context(), cfg)
	if err != nil {
		t.Fatalf("cannot bring burstpool up: %v", err)
	}
	downWithLogs(t, s)
	return s
}

// downWithLogs stops s when t ends, printing the tails of the function's and
// the provider's logs first if t failed.
func downWithLogs(t *testing.T, s *devplane.Stack) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range []*devplane.Proc{s.Function, s.Provider} {
				if p != nil {
					t.Logf("--- %s log tail ---\n%s", p.Name, p.Tail(40))
				}
			}
		}
		if err := s.Down(); err != nil {
			t.Errorf("cannot stop the stack: %v", err)
		}
	})
}
