package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	testfixture "github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// Bounds of the provider's own faults, from the shipped timings.
const (
	// takeoverBound is how long a standby takes to act after the leader
	// was killed: the Lease's duration and one retry (the provider's
	// defaults, 12 s and 1 s), and a margin for a loaded machine.
	takeoverBound = 20 * time.Second
	// haOpenAfter is the settings' warmup.openAfter while every replica
	// is down: short, so that the fail-safe's bound (openAfter plus its
	// 30 s grace) fits a test.
	haOpenAfter = "20s"
)

// scenarioLeaderKilledMidBurst: right after the scale-up, the provider
// replica that leads is killed (SIGKILL: it gives no Lease up, as when its
// node is lost). The standby takes the Lease within takeoverBound and
// opens the burst's new nodes; the killed replica is started again as a
// standby.
func scenarioLeaderKilledMidBurst(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	var killed, next *devplane.Replica
	var takeover time.Duration
	burstThrough(t, ctx, e, fault{
		name: "Provider leader killed mid-burst (SIGKILL, 2 replicas)",
		begin: func(t *testing.T, ctx context.Context, _ burst) {
			var err error
			if killed, err = s.LeaderReplica(ctx, takeoverBound); err != nil {
				t.Fatal(err)
			}
			if err := s.KillReplica(killed); err != nil {
				t.Fatal(err)
			}
		},
		end: func(t *testing.T, ctx context.Context, _ burst) {
			start := time.Now()
			var err error
			if next, err = s.LeaderReplica(ctx, takeoverBound); err != nil {
				t.Fatalf("no replica took the Lease within %s of the leader's kill: %v", takeoverBound, err)
			}
			takeover = time.Since(start)
		},
		proof: func(*testing.T, context.Context, burst, time.Time) string {
			return fmt.Sprintf("replica %d killed; replica %d led %s later (bound %s)", killed.Index, next.Index, takeover.Round(100*time.Millisecond), takeoverBound)
		},
	})
}

// scenarioAllProvidersDown: every provider replica is killed and kept
// down before a burst that needs new nodes, for longer than openAfter
// (haOpenAfter here). The fail-safe opens the new nodes once they have
// waited openAfter and its grace, so the executors run with no provider
// at all; started again, the provider counts them and accounts the cost
// of the time it was down.
func scenarioAllProvidersDown(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	applySettings(t, ctx, s.Cluster.Config, e.root, func(data map[string]any) {
		w, _ := data["warmup"].(map[string]any)
		if w == nil {
			w = map[string]any{}
		}
		w["openAfter"] = haOpenAfter
		data["warmup"] = w
	})
	t.Cleanup(func() { applyFastComposition(t, context.Background(), s.Cluster.Config, e.root) })
	var opened0, openedNow float64
	opened := func(ctx context.Context, b burst) (float64, error) {
		return s.FailsafeCount(ctx, "burstpool_failsafe_nodes_opened_total", `pool="`+b.pool+`",pool_namespace="`+b.poolNS+`"`)
	}
	burstThrough(t, ctx, e, fault{
		name:        "Every provider replica down past openAfter (" + haOpenAfter + "), burst onto new nodes",
		beforeScale: true, untilRunning: true,
		begin: func(t *testing.T, ctx context.Context, b burst) {
			testfixture.Eventually(t, waitStatus, "the pool's PoolCapacity opens nodes after "+haOpenAfter, func() error {
				pc, err := s.Get(ctx, gvk(capacityAPI, "PoolCapacity"), "", b.pool+"-capacity")
				if err != nil {
					return err
				}
				if got, _, _ := unstructured.NestedString(pc.Object, "spec", "forProvider", "startup", "openAfter"); got != haOpenAfter {
					return fmt.Errorf("openAfter %q", got)
				}
				return nil
			})
			var err error
			if opened0, err = opened(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := s.HoldReplicas(); err != nil {
				t.Fatal(err)
			}
		},
		end: func(t *testing.T, ctx context.Context, b burst) {
			var err error
			if openedNow, err = opened(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := s.ReleaseReplicas(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.LeaderReplica(ctx, waitQuick); err != nil {
				t.Fatal(err)
			}
		},
		proof: func(t *testing.T, _ context.Context, _ burst, _ time.Time) string {
			if openedNow <= opened0 {
				t.Errorf("burstpool_failsafe_nodes_opened_total for the pool stayed %v: the burst ran without the fail-safe opening a node", openedNow)
			}
			return fmt.Sprintf("both replicas killed and held down; the fail-safe opened %.0f new nodes at openAfter + 30 s", openedNow-opened0)
		},
	})
}
