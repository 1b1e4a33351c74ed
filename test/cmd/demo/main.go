// Command demo shows burstpool on the test harness (make demo): it brings up a
// local control plane with burstpool installed, creates a Pool and two
// QueryServices, bursts executors onto the pool and narrates what the Pool
// reports at each step. The control plane keeps running afterwards; `demo down`
// stops it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/reference"
)

const (
	pool      = "burst-pool"
	poolNS    = "e6-pools"
	qsNS      = "workspace-analytics-prod"
	qsName    = "analytics-cluster"
	executors = 4
)

func main() {
	// The control plane's relays run this binary in their network namespace.
	if len(os.Args) > 1 && os.Args[1] == localcp.RelayCommand {
		os.Exit(localcp.RelayMain(os.Args[2:]))
	}
	dir := flag.String("dir", "_output/demo", "folder of the demo control plane")
	flag.Parse()
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fail(err)
	}
	if flag.Arg(0) == "down" {
		if err := devplane.DownDir(abs); err != nil {
			fail(err)
		}
		say("stopped the demo control plane in %s", abs)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, abs); err != nil {
		fail(err)
	}
}

func run(ctx context.Context, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "cluster", "state.json")); err == nil {
		return fmt.Errorf("a demo control plane already runs in %s: run `make demo-down` first", dir)
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	start := time.Now()
	s, err := devplane.Up(ctx, devplane.Config{Root: root, Dir: dir, Say: say})
	if err != nil {
		return err
	}
	c := s.Client
	cfg := s.Cluster.Config
	say("burstpool is installed (%s)", time.Since(start).Round(time.Second))

	step("Two tenant QueryServices and the reference's basic burst pool (4.1, as written), as a claim in %s", poolNS)
	if err := applyFile(ctx, cfg, filepath.Join(root, "examples", "queryservices.yaml")); err != nil {
		return err
	}
	if err := localcp.Apply(ctx, cfg, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+poolNS+"\n")); err != nil {
		return err
	}
	if err := applyFile(ctx, cfg, reference.Manifests[0].Path(root)); err != nil {
		return err
	}
	if err := watchPool(ctx, c, "the pool's NodePool and NodeClass are ready", func(st status) bool {
		return st.str("nodePoolName") != "" && st.str("derivedInstanceType") != ""
	}); err != nil {
		return err
	}

	step("%s bursts: %d pool executors; Karpenter launches pool nodes", qsName, executors)
	qs := &unstructured.Unstructured{}
	qs.SetGroupVersionKind(qsv1.GroupVersionKind)
	if err := c.Get(ctx, client.ObjectKey{Namespace: qsNS, Name: qsName}, qs); err != nil {
		return err
	}
	cpu, mem := devplane.ExecutorResources(qs)
	sched, err := devplane.PoolExecutorScheduling(ctx, c, poolNS, pool)
	if err != nil {
		return err
	}
	if err := c.Create(ctx, devplane.ExecutorDeployment(qsNS, qsName, "us-docker.pkg.dev/e6data-analytics/e6-engine/executor:3.0.218", executors, cpu, mem, sched)); err != nil {
		return err
	}
	if err := watchPool(ctx, c, fmt.Sprintf("%d executors occupy the pool", executors), func(st status) bool {
		return st.num("occupiedExecutors") == executors
	}); err != nil {
		return err
	}

	step("%s scales down to one executor", qsName)
	if err := devplane.ScaleExecutors(ctx, c, qsNS, qsName, 1); err != nil {
		return err
	}
	if err := watchPool(ctx, c, "one executor left, the rest of the pool is available", func(st status) bool {
		return st.num("occupiedExecutors") == 1
	}); err != nil {
		return err
	}

	kubectl, _ := filepath.Abs(filepath.Join(root, "hack", "tool.sh"))
	fmt.Printf(`
The demo control plane keeps running. Use it with:

  export KUBECONFIG=%s
  alias kubectl="$(%s kubectl)"
  kubectl get pool -n %s -w           # phase and executor counts
  kubectl get pool -n %s -o wide      # with instance type and cloud
  kubectl get nodepool,nodeclaims,nodes -l e6data.io/pool=%s
  kubectl scale deploy -n %s %s --replicas 6
  curl -s http://%s/metrics | grep burstpool_

Logs are in %s. Stop everything with: make demo-down
`, s.Cluster.Kubeconfig, kubectl, poolNS, poolNS, pool, qsNS, devplane.ExecutorDeploymentName(qsName), s.MetricsAddr, filepath.Join(dir, "logs"))
	return nil
}

type status map[string]any

func (s status) str(k string) string { v, _ := s[k].(string); return v }
func (s status) num(k string) int64  { v, _ := s[k].(int64); return v }

// watchPool prints the Pool's status line whenever it changes, until done
// holds.
func watchPool(ctx context.Context, c client.Client, what string, done func(status) bool) error {
	last := ""
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		p := &unstructured.Unstructured{}
		p.SetGroupVersionKind(schema.GroupVersionKind{Group: "e6data.io", Version: "v1alpha1", Kind: "Pool"})
		if err := c.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: pool}, p); err != nil {
			return false, nil //nolint:nilerr // the claim may not be served yet
		}
		st, _, _ := unstructured.NestedMap(p.Object, "status")
		line := describe(st)
		if line != last {
			say("  %-7s %s", time.Since(start).Round(time.Second), line)
			last = line
		}
		return done(st), nil
	})
	if err != nil {
		return fmt.Errorf("waiting until %s: %w", what, err)
	}
	say("  -> %s", what)
	return nil
}

func describe(st status) string {
	var allocs []string
	as, _ := st["allocations"].([]any)
	for _, a := range as {
		m, _ := a.(map[string]any)
		q, _ := m["queryService"].(map[string]any)
		allocs = append(allocs, fmt.Sprintf("%v/%v=%v", q["namespace"], q["name"], m["poolExecutors"]))
	}
	imgs, _ := st["cachedImages"].([]any)
	warm := 0
	for _, i := range imgs {
		if m, _ := i.(map[string]any); m["warmupStatus"] == "Ready" {
			warm++
		}
	}
	return fmt.Sprintf("phase=%s type=%s nodes=%d total=%d available=%d occupied=%d warm images=%d/%d allocations=[%s] %s",
		st.str("phase"), st.str("derivedInstanceType"), st.num("currentNodes"), st.num("totalExecutors"),
		st.num("availableExecutors"), st.num("occupiedExecutors"), warm, len(imgs), strings.Join(allocs, " "), st.str("message"))
}

func applyFile(ctx context.Context, cfg *rest.Config, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return localcp.Apply(ctx, cfg, b)
}

func step(format string, args ...any) {
	fmt.Printf("\n==> "+format+"\n", args...)
}

func say(format string, args ...any) {
	fmt.Printf("%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "demo:", err)
	os.Exit(1)
}
