package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// scenario is one end-to-end scenario of a suite (TestPool's
// poolScenarios, or the scenarios of a suite with a plane of its own). Its body creates what it
// needs (namespaces, QueryServices, a Pool, executors) under names derived
// from its own, cleans up, and depends on no other scenario having run, so
// `go test -run 'TestPool/Name$'` runs it alone.
type scenario struct {
	name string
	// needs are the capabilities of the cluster the scenario uses; on a
	// cluster that lacks one it is skipped, naming it.
	needs []capability
	// exclusive marks a scenario that changes what every scenario relies
	// on (restarts a runtime or Karpenter, changes the cluster's
	// settings): it runs alone, before the parallel scenarios start.
	exclusive bool
	// lock names what the scenario shares with others that may not act on
	// it at the same time (such as the tenant-b namespace the settings fix,
	// and its pool): scenarios with the same lock run one at a time.
	lock string
	// namespaces and pools name, beyond what the scenario owns through
	// env.own and newBurst, the fixed namespaces it uses and its pools
	// there: its dump holds them, and its pools' claims are deleted when
	// it ends, but for a scenario with a lock, whose pool the next one
	// with that lock takes over.
	namespaces, pools []string
	run               func(t *testing.T, ctx context.Context, e *env)
}

// env is what a scenario reaches: the cluster under test, and what the
// scenario owns, which a failed scenario's dump holds.
type env struct {
	*cluster
	suite      *suite
	root       string
	namespaces []string
	pools      []string
	owned      []string
}

// suite is what a suite's scenarios share: the cluster, the locks of
// scenario.lock and the fixtures several scenarios read.
type suite struct {
	*cluster
	root      string
	mu        sync.Mutex
	locks     map[string]*sync.Mutex
	reference fixture
}

// fixture is set up once, by the first scenario that needs it; the others
// wait for it and fail if it failed.
type fixture struct {
	once sync.Once
	ok   bool
}

// use sets f up with setup on t unless it is already set up, failing t if
// it could not be.
func (f *fixture) use(t *testing.T, what string, setup func(t *testing.T)) {
	t.Helper()
	f.once.Do(func() {
		t.Logf("setting up %s", what)
		setup(t)
		f.ok = !t.Failed()
	})
	if !f.ok {
		t.Fatalf("%s could not be set up (see the scenario that set it up)", what)
	}
}

func (s *suite) lock(name string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locks == nil {
		s.locks = map[string]*sync.Mutex{}
	}
	if s.locks[name] == nil {
		s.locks[name] = &sync.Mutex{}
	}
	return s.locks[name]
}

// runScenarios runs each scenario as a subtest of t: the exclusive ones in
// order, then the others in parallel (at most the test binary's -parallel
// at a time, see TestMain).
func runScenarios(t *testing.T, s *suite, scenarios []scenario) {
	t.Helper()
	for _, sc := range scenarios {
		if sc.exclusive {
			t.Run(sc.name, func(t *testing.T) { s.runScenario(t, sc) })
		}
	}
	for _, sc := range scenarios {
		if !sc.exclusive {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				s.runScenario(t, sc)
			})
		}
	}
}

func (s *suite) runScenario(t *testing.T, sc scenario) {
	s.require(t, sc.needs...)
	if sc.lock != "" {
		// Released after every cleanup of the scenario (cleanups run last
		// registered first), so the next scenario with the lock finds
		// nothing of this one still going.
		m := s.lock(sc.lock)
		m.Lock()
		t.Cleanup(m.Unlock)
	}
	e := &env{cluster: s.cluster, suite: s, root: s.root, namespaces: sc.namespaces, pools: sc.pools}
	// Registered before the scenario's own cleanups, so it runs after
	// them: the namespaces the scenario owns go last.
	t.Cleanup(func() {
		if sc.lock == "" {
			for _, ns := range sc.namespaces {
				for _, p := range sc.pools {
					if err := deleteClaim(context.Background(), e.Client, ns, p); client.IgnoreNotFound(err) != nil {
						t.Errorf("cannot delete pool %s/%s: %v", ns, p, err)
					}
				}
			}
		}
		for _, n := range e.owned {
			err := e.Client.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})
			if client.IgnoreNotFound(err) != nil {
				t.Errorf("cannot delete namespace %s: %v", n, err)
			}
		}
	})
	// A failed scenario's dump is taken as it stops (a deferred call runs
	// when t.Fatal ends the scenario, before any cleanup), so it holds the
	// claims, the composite and what it composed as they were when the
	// scenario failed, not what the cleanups that delete them left.
	defer func() {
		if t.Failed() {
			ctx, cancel := dumpContext()
			defer cancel()
			dir := dumpDir(s.root, t.Name())
			files, err := dump(ctx, s.Client, dir, e.namespaces, e.pools)
			t.Log(describeDump(dir, files, err))
			// What the scenario's pools composed in workload clusters,
			// one folder each.
			for _, w := range s.workloads {
				wdir := filepath.Join(dir, w.name)
				files, err := dump(ctx, w.client, wdir, e.namespaces, e.pools)
				t.Log(describeDump(wdir, files, err))
			}
		}
	}()
	sc.run(t, t.Context(), e)
}

// scenarioName is name as a DNS label: lower case, words joined by -. A
// capital starts a word, but capitals in a row (an initialism, API) are
// one word, whose last capital starts the next when lower case follows it
// (APIServer is api-server).
func scenarioName(name string) string {
	upper := func(r byte) bool { return r >= 'A' && r <= 'Z' }
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		r := name[i]
		if upper(r) {
			inRun := i > 0 && upper(name[i-1])
			endsRun := i+1 < len(name) && !upper(name[i+1])
			if i > 0 && (!inRun || endsRun) {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteByte(r)
	}
	return b.String()
}

// own creates namespaces ns unless they exist, adds them to the
// scenario's dump, and deletes them, with what is in them, when the
// scenario ends.
func (e *env) own(t *testing.T, ctx context.Context, ns ...string) {
	t.Helper()
	for _, n := range ns {
		if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		e.namespaces = append(e.namespaces, n)
		e.owned = append(e.owned, n)
	}
}

// usesPool adds pool to the scenario's dump.
func (e *env) usesPool(pool ...string) { e.pools = append(e.pools, pool...) }

// reference sets up, once for the suite, the reference's manifests as
// written with their QueryServices' executors bursting
// (testReferenceManifests), in the reference's namespaces, and adds its
// namespaces and pools to the scenario's dump.
func (e *env) reference(t *testing.T) {
	t.Helper()
	e.namespaces = append(e.namespaces, poolNS, analyticsNS, reportingNS)
	for _, p := range referencePools {
		e.usesPool(p.pool)
	}
	e.suite.reference.use(t, "the reference's manifests", func(t *testing.T) {
		testReferenceManifests(t, t.Context(), e.Stack, e.root)
	})
}

// referenceQueryServices applies the QueryServices the reference's allow
// rules match, with the reference's namespaces (e6-pools, workspace-*),
// which scenarios that use those namespaces need.
func referenceQueryServices(t *testing.T, ctx context.Context, kubeconfig string) {
	t.Helper()
	if _, err := kubectl(ctx, kubeconfig, "apply", "-f", filepath.Join("testdata", "reference-queryservices.yaml")); err != nil {
		t.Fatal(err)
	}
}

// newSuite reaches the cluster a suite's scenarios run on: the local
// control plane p, or the kubeconfig's cluster (clusterUnderTest).
func newSuite(t *testing.T, p plane) *suite {
	t.Helper()
	return &suite{cluster: clusterUnderTest(t, p), root: gomod.RootForTest(t)}
}
