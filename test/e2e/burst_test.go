package e2e

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/devplane"
)

// burst is one scenario's pool like the reference's burst pool (4.1),
// composed with the suite's settings, and a QueryService like the
// reference's analytics-cluster that bursts onto it: the pool in
// e6-pools-<scenario>, the QueryService in workspace-<scenario> (the
// settings' tenancy lets e6-pools-* attach workspace-*,
// examples/environmentconfig.yaml), both owned by the scenario.
type burst struct {
	poolNS, qsNS, pool, qs string
}

// newBurst names the burst of the scenario t runs, creates its namespaces
// (deleted, with what is in them, when t ends) and adds it to the
// scenario's dump.
func newBurst(t *testing.T, ctx context.Context, e *env) burst {
	t.Helper()
	n := scenarioName(path.Base(t.Name()))
	b := burst{poolNS: "e6-pools-" + n, qsNS: "workspace-" + n, pool: "e2e-" + n, qs: n + "-analytics"}
	e.own(t, ctx, b.poolNS, b.qsNS)
	e.usesPool(b.pool)
	return b
}

// manifest is the burst's Pool, which evicts executors of QueryServices it
// does not attach.
func (b burst) manifest(minExecutors int, suspend bool) string {
	return poolManifest(b.poolNS, b.pool, fmt.Sprintf(`
  minExecutors: %d
  maxExecutors: 12
  suspend: %t
  unauthorizedExecutors: Evict
  allowedQueryServices:
    - {name: %s, namespace: %s}
`, minExecutors, suspend, b.qs, b.qsNS))
}

// queryService is a QueryService name in the burst's QueryService
// namespace with the spec of the reference's analytics-cluster
// (testdata/reference-queryservices.yaml), pointed at the burst's pool.
func (b burst) queryService(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "reference-queryservices.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		if u.GetKind() != "QueryService" || u.GetName() != "analytics-cluster" {
			continue
		}
		spec, _, _ := unstructured.NestedMap(u.Object, "spec")
		qs := &unstructured.Unstructured{Object: map[string]any{"apiVersion": claimAPI, "kind": "QueryService", "spec": spec}}
		qs.SetNamespace(b.qsNS)
		qs.SetName(name)
		if err := unstructured.SetNestedStringMap(qs.Object, map[string]string{"name": b.pool, "namespace": b.poolNS}, "spec", "executor", "poolRef"); err != nil {
			t.Fatal(err)
		}
		return qs
	}
	t.Fatal("testdata/reference-queryservices.yaml has no QueryService analytics-cluster")
	return nil
}

// start creates the burst's pool (one warm slot), its QueryService and
// replicas executors, as its operator would, and waits until they run
// and the claim counts them. It returns how long the executors took to
// run.
func (b burst) start(t *testing.T, ctx context.Context, s *devplane.Stack, replicas int) time.Duration {
	t.Helper()
	c := s.Client
	mustApply(t, ctx, s.Cluster.Config, b.manifest(1, false))
	qs := b.queryService(t, b.qs)
	if err := c.Create(ctx, qs); err != nil {
		t.Fatal(err)
	}
	cpu, mem := devplane.ExecutorResources(qs)
	if err := c.Create(ctx, devplane.ExecutorDeployment(b.qsNS, b.qs, "registry.example.com/e6data/executor:e2e", int32(replicas), cpu, mem, executorScheduling(t, c, b.poolNS, b.pool))); err != nil {
		t.Fatal(err)
	}
	took := waitExecutors(t, waitNodes, "pool executors Running on Karpenter-launched pool nodes", c, b.qsNS, b.pool, replicas)
	eventually(t, waitStatus, "the claim counts the burst's executors", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		n := allocation(p, b.qsNS, b.qs)
		return int(st.OccupiedExecutors) == replicas && n == int64(replicas), fmt.Errorf("occupied %d, allocation %d", st.OccupiedExecutors, n)
	})
	return took
}

// scale sets the burst's executors to n.
func (b burst) scale(t *testing.T, ctx context.Context, s *devplane.Stack, n int32) {
	t.Helper()
	scaleExecutors(t, ctx, s.Client, b.qsNS, b.qs, n)
}

// waitOccupied waits until the claim shows n occupied executors, and
// returns how long that took.
func (b burst) waitOccupied(t *testing.T, s *devplane.Stack, n int32, what string) time.Duration {
	t.Helper()
	return eventually(t, waitStatus, what, func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		return st.OccupiedExecutors == n, fmt.Errorf("occupied %d", st.OccupiedExecutors)
	})
}
