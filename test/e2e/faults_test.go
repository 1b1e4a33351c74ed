package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	testfixture "github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// How long each fault holds: long enough that the component's clients
// notice and the burst waits on it, short enough that the suite stays
// quick.
const (
	// apiServerDown is how long the API server stays down once killed,
	// before it starts again: a few seconds, as a crashed API server is
	// restarted. With its start (2-5 s here) the outage may pass the
	// provider's renew deadline (10 s): the leader then exits ("leader
	// election lost") and is started again as a standby, as the kubelet
	// restarts its container, while the other replica takes the Lease.
	apiServerDown = 3 * time.Second
	// karpenterDown is how long Karpenter stays down: past its batch
	// window's idle time (1 s) and near its longest (10 s,
	// pkg/operator/options/options.go of sigs.k8s.io/karpenter v1.14.1),
	// so the burst's pending executors wait on it.
	karpenterDown = 10 * time.Second
)

// TestFaults bursts a QueryService's executors onto a pool while one
// component on the burst path is broken, one fault a scenario, and
// records per fault the time from the burst to all executors Running,
// the executors and composed objects lost (none may be), and whether the
// claim's counts and the PoolCapacity's cost are right afterwards. The
// scenarios break what the others rely on (the function, the API server,
// Karpenter, the provider's watches), so they run one after another. At
// the end the rows are logged as a markdown table, and written to the
// file $BURSTPOOL_FAULT_TABLE names, if it does (faulttable_test.go).
func TestFaults(t *testing.T) {
	t.Parallel()
	su := newSuite(t, faultPlane)
	t.Cleanup(func() { faultRows.report(t, t.Name()) })
	if su.has(ownSettings) {
		applyFastComposition(t, t.Context(), su.Cluster.Config, su.root)
	}
	runScenarios(t, su, faultScenarios)
}

// faultPlane is TestPool's plane with the provider run as the shipped
// runtime config runs it (two replicas electing a leader, each started
// again when it exits) and the fail-safe beside it; the suite may also
// stop, start and compact its API server and etcd.
var faultPlane = plane{
	configure: func(_ *testing.T, cfg *devplane.Config) { cfg.ProviderReplicas, cfg.Failsafe = 2, true },
	caps:      []capability{simulatedCloud, restartableRuntimes, restartableKarpenter, restartableAPIServer, ownSettings, highlyAvailable},
}

// faultScenarios are TestFaults' scenarios, all exclusive: each breaks
// something every scenario relies on. A new fault is a scenario function
// that calls burstThrough with its fault, registered here by one line.
var faultScenarios = []scenario{
	{name: "FunctionUnavailable", needs: []capability{simulatedCloud, restartableRuntimes}, exclusive: true, run: scenarioFunctionUnavailable},
	{name: "APIServerRestart", needs: []capability{simulatedCloud, restartableRuntimes, restartableAPIServer}, exclusive: true, run: scenarioAPIServerRestart},
	{name: "KarpenterRestart", needs: []capability{simulatedCloud, restartableKarpenter}, exclusive: true, run: scenarioKarpenterRestart},
	{name: "WatchGone", needs: []capability{simulatedCloud, restartableRuntimes, restartableAPIServer}, exclusive: true, run: scenarioWatchGone},
	{name: "LeaderKilledMidBurst", needs: []capability{simulatedCloud, highlyAvailable}, exclusive: true, run: scenarioLeaderKilledMidBurst},
	{name: "AllProvidersDown", needs: []capability{simulatedCloud, highlyAvailable, ownSettings}, exclusive: true, run: scenarioAllProvidersDown},
}

// scenarioFunctionUnavailable: the function is stopped before the burst,
// and the composite poked so that Crossplane composes it again without
// the function; it is started again once the executors run, quietWindow
// has passed and Crossplane has said on the composite that it cannot run
// the function. The burst does not need the function; nothing the pool
// composed may go while Crossplane cannot run it.
func scenarioFunctionUnavailable(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	var (
		xr       *unstructured.Unstructured
		began    time.Time
		failures int
		synced   string
	)
	burstThrough(t, ctx, e, fault{
		name:        "Function unavailable (pool-compose stopped)",
		beforeScale: true, untilRunning: true, hold: quietWindow,
		// The claim's counts come back when Crossplane next calls the
		// function: after failed calls, on its error backoff, which
		// doubles up to 60 s (crossplane-runtime's controller rate
		// limiter), then one reconcile of the claim.
		countBound: 2 * time.Minute,
		begin: func(t *testing.T, ctx context.Context, b burst) {
			var err error
			if xr, err = compositeIn(ctx, s, b.poolNS, b.pool); err != nil {
				t.Fatal(err)
			}
			began = time.Now()
			if err := s.StopFunction(); err != nil {
				t.Fatal(err)
			}
			if err := pokeComposite(ctx, e.Client, xr); err != nil {
				t.Fatal(err)
			}
		},
		end: func(t *testing.T, ctx context.Context, _ burst) {
			// The function starts again whatever the wait below finds:
			// every later scenario needs it.
			defer func() {
				if err := s.StartFunction(ctx); err != nil {
					t.Fatalf("cannot start the function again: %v", err)
				}
			}()
			// Crossplane says so in the composite's Synced condition, and
			// in a Warning event unless the event recorder's spam filter
			// (25 events an object, then one in 5 minutes) has already
			// spent the composite's events on its creation. It runs the
			// function when it reconciles the composite: at the latest on
			// its poll (1 minute, with jitter), so the wait is two.
			testfixture.Eventually(t, waitStatus, "Crossplane says on the composite that it cannot run the function", func() error {
				failures = functionFailures(ctx, e.Client, xr.GetName(), began)
				synced = syncedMessage(ctx, s, xr)
				if failures == 0 && !strings.Contains(synced, "cannot run Function") {
					// Each poke is a change Crossplane reconciles the
					// composite for, with the function still down.
					_ = pokeComposite(ctx, e.Client, xr)
					return fmt.Errorf("no Warning event on the composite %s since the function stopped, and Synced says %q", xr.GetName(), synced)
				}
				return nil
			})
		},
		proof: func(*testing.T, context.Context, burst, time.Time) string {
			if i := strings.Index(synced, "cannot run Function"); i >= 0 {
				synced = "False, cannot run Function"
			}
			return fmt.Sprintf("pool-compose stopped; the composite's Synced: %s; %d Warning events on it", synced, failures)
		},
	})
}

// scenarioAPIServerRestart: the API server is killed right after the
// scale-up, as a crash would, stays down apiServerDown and starts again; every component
// (controller manager, scheduler, kwok, Karpenter, Crossplane, the
// capacity provider) reconnects and the burst completes.
func scenarioAPIServerRestart(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	var counters providerCounters
	burstThrough(t, ctx, e, fault{
		name: "API server restarted",
		hold: apiServerDown, apiOutage: true,
		begin: func(t *testing.T, ctx context.Context, _ burst) {
			counters = readProviderCounters(t, ctx, s)
			if err := s.Cluster.Kill(apiServer); err != nil {
				t.Fatal(err)
			}
		},
		end: func(t *testing.T, ctx context.Context, _ burst) {
			startAPIServer(t, ctx, s)
		},
		proof: func(t *testing.T, ctx context.Context, _ burst, _ time.Time) string {
			return fmt.Sprintf("kube-apiserver killed, down %s, started; provider alive, %s", apiServerDown, readProviderCounters(t, ctx, s).since(counters))
		},
	})
}

// scenarioKarpenterRestart: Karpenter is stopped before the scale-up and
// started again after karpenterDown; the burst needs new nodes, which
// only the restarted Karpenter launches.
func scenarioKarpenterRestart(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	burstThrough(t, ctx, e, fault{
		name:        "Karpenter restarted, burst onto new nodes",
		beforeScale: true, hold: karpenterDown,
		begin: func(t *testing.T, ctx context.Context, _ burst) {
			if err := s.Cluster.Stop("karpenter"); err != nil {
				t.Fatal(err)
			}
		},
		end: func(t *testing.T, ctx context.Context, _ burst) {
			if err := s.Cluster.Start("karpenter"); err != nil {
				t.Fatalf("cannot start Karpenter again: %v", err)
			}
		},
		proof: func(t *testing.T, ctx context.Context, b burst, began time.Time) string {
			var launched []string
			for _, n := range poolNodes(t, ctx, e.Client, b.pool) {
				if n.CreationTimestamp.After(began) {
					launched = append(launched, n.Name)
				}
			}
			if len(launched) == 0 {
				t.Errorf("no pool node was launched after Karpenter stopped: the burst did not need Karpenter")
			}
			return fmt.Sprintf("Karpenter stopped %s; %d pool nodes launched by the restarted one", karpenterDown, len(launched))
		},
	})
}

// scenarioWatchGone: right after the scale-up, etcd is compacted to its
// current revision and the API server killed and started again at once, so every watch of the
// capacity provider resumes from a resource version that is gone and
// ends with 410 Gone: its informers list again. A watch of the pool's
// executors from the version listed before the fault shows the 410.
func scenarioWatchGone(t *testing.T, ctx context.Context, e *env) {
	s := e.Stack
	cs, err := kubernetes.NewForConfig(s.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	var (
		rv       string
		counters providerCounters
		revision int64
	)
	burstThrough(t, ctx, e, fault{
		name:      "Watch broken with 410 Gone (etcd compacted, API server restarted)",
		apiOutage: true,
		begin: func(t *testing.T, ctx context.Context, b burst) {
			l, err := cs.CoreV1().Pods(b.qsNS).List(ctx, metav1.ListOptions{LabelSelector: qsv1.LabelPool + "=" + b.pool})
			if err != nil {
				t.Fatal(err)
			}
			rv = l.ResourceVersion
			counters = readProviderCounters(t, ctx, s)
			if revision, err = s.Cluster.CompactEtcd(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s.Cluster.Kill(apiServer); err != nil {
				t.Fatal(err)
			}
		},
		end: func(t *testing.T, ctx context.Context, _ burst) {
			startAPIServer(t, ctx, s)
		},
		proof: func(t *testing.T, ctx context.Context, b burst, _ time.Time) string {
			gone := watchGone(t, ctx, cs, b.qsNS, qsv1.LabelPool+"="+b.pool, rv)
			return fmt.Sprintf("etcd compacted at revision %d; a watch from resource version %s: %s; provider %s", revision, rv, gone, readProviderCounters(t, ctx, s).since(counters))
		},
	})
}

// apiServer is the API server's component name in the local control
// plane.
const apiServer = "kube-apiserver"

// startAPIServer starts the API server again and waits until it is ready.
func startAPIServer(t *testing.T, ctx context.Context, s *devplane.Stack) {
	t.Helper()
	if err := s.Cluster.Start(apiServer); err != nil {
		t.Fatalf("cannot start the API server again: %v", err)
	}
	took := waitAPIServerReady(t, ctx, s.Cluster.Config)
	t.Logf("API server ready %s after its start", took.Round(100*time.Millisecond))
}

// waitAPIServerReady waits until the API server cfg reaches answers its
// readiness check, and returns how long that took.
func waitAPIServerReady(t *testing.T, ctx context.Context, cfg *rest.Config) time.Duration {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return testfixture.Eventually(t, waitReconcile, "the restarted API server ready", func() error {
		return cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	})
}

// watchGone watches the pods in ns that match selector from resource
// version rv and says how the watch ended, failing t unless with 410 Gone.
func watchGone(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, selector, rv string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, waitQuick)
	defer cancel()
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: rv})
	if kerrors.IsResourceExpired(err) || kerrors.IsGone(err) {
		return "410 Gone at once"
	}
	if err != nil {
		t.Fatalf("cannot watch pods %s in %s from resource version %s: %v", selector, ns, rv, err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type != watch.Error {
			t.Errorf("a watch from resource version %s, older than the compacted revision, went on: %s %T", rv, ev.Type, ev.Object)
			return "not gone"
		}
		st := kerrors.FromObject(ev.Object)
		if kerrors.IsResourceExpired(st) || kerrors.IsGone(st) {
			return "410 Gone (" + st.Error() + ")"
		}
		t.Errorf("a watch from resource version %s ended with %v, want 410 Gone", rv, st)
		return "ended with " + st.Error()
	}
	t.Errorf("a watch from resource version %s ended with no event within %s, want 410 Gone", rv, waitQuick)
	return "no event"
}

// providerCounters are the capacity provider's counters of its
// observers' watches, summed over clusters: watch errors and relists (its
// poller's, after a watch error), and the pod and node events applied,
// which an informer's own relist adds one of for every pool pod and node.
type providerCounters struct{ watchErrors, relists, events float64 }

// readProviderCounters scrapes the capacity provider's counters, failing
// t with the provider's log tail when it does not answer (it exited).
func readProviderCounters(t *testing.T, ctx context.Context, s *devplane.Stack) providerCounters {
	t.Helper()
	var pc providerCounters
	var err error
	if pc.watchErrors, err = metricSum(ctx, s, "burstpool_observer_watch_errors_total"); err == nil {
		if pc.relists, err = metricSum(ctx, s, "burstpool_observer_relists_total"); err == nil {
			pc.events, err = metricSum(ctx, s, "burstpool_observer_events_total")
		}
	}
	if err != nil {
		t.Fatalf("the capacity provider's metrics do not answer (%v); its log ends:\n%s", err, s.Provider.Tail(30))
	}
	return pc
}

// since says how the counters grew from before.
func (pc providerCounters) since(before providerCounters) string {
	return fmt.Sprintf("watch errors +%.0f, relists +%.0f, events +%.0f", pc.watchErrors-before.watchErrors, pc.relists-before.relists, pc.events-before.events)
}

// functionFailures counts the Warning events about the object name, since
// when, that say Crossplane could not run a function.
func functionFailures(ctx context.Context, c client.Client, name string, since time.Time) int {
	ev := &corev1.EventList{}
	if err := c.List(ctx, ev); err != nil {
		return 0
	}
	n := 0
	for _, x := range ev.Items {
		last := x.LastTimestamp.Time
		if x.EventTime.After(last) {
			last = x.EventTime.Time
		}
		if x.InvolvedObject.Name == name && x.Type == corev1.EventTypeWarning && !last.Before(since.Truncate(time.Second)) &&
			strings.Contains(x.Message, "cannot run Function") {
			n++
		}
	}
	return n
}

// pokeComposite changes an annotation of the composite xr, which makes
// Crossplane reconcile it.
func pokeComposite(ctx context.Context, c client.Client, xr *unstructured.Unstructured) error {
	poke := &unstructured.Unstructured{}
	poke.SetGroupVersionKind(xr.GroupVersionKind())
	poke.SetName(xr.GetName())
	poke.SetAnnotations(map[string]string{"e2e.burstpool.io/poke": time.Now().Format(time.RFC3339Nano)})
	return c.Patch(ctx, poke, client.Merge)
}

// syncedMessage is the message of the composite xr's Synced condition as
// it is now, empty when it cannot be read.
func syncedMessage(ctx context.Context, s *devplane.Stack, xr *unstructured.Unstructured) string {
	u, err := s.Get(ctx, xr.GroupVersionKind(), "", xr.GetName())
	if err != nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Synced" {
			msg, _ := m["message"].(string)
			return msg
		}
	}
	return ""
}
