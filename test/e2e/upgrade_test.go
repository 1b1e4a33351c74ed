package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/internal/warmup"
	"github.com/burstpool/burstpool/test/harness/devplane"
)

// upgradeExecutors are the executors TestLifecycle/Upgrade runs on the reference's
// burst-pool (4.1) through the upgrade: analytics-cluster's, burst from
// two to three, and reporting-cluster's one (examples/queryservices.yaml,
// which step 7 applies).
var upgradeExecutors = []struct {
	ns, qs string
	n      int32
}{
	{analyticsNS, "analytics-cluster", 3},
	{reportingNS, "reporting-cluster", 1},
}

// upgradePools are the pools step 7 creates: burst-pool, which runs the
// executors, and r7gd-pool, which holds warm slots only.
var upgradePools = []string{"burst-pool", "r7gd-pool"}

// upgradeByDoc upgrades an installation that docs/install.md's Steps made
// to the next release exactly as its Upgrading section says, and returns
// the release the installation runs then, while pools
// run and burst: step 3 again, then the section's sh blocks, with VERSION
// the next release. Both releases are made for ghcr.io/burstpool and
// served from its mirror (installByDoc); the next one is built from the
// same checkout with its own version linked into the function and the
// provider (burstpool_build_info), and the function's default warmup
// helper image is the release's own, so the two differ as releases do.
//
// It checks that the new Configuration, Function and Provider revisions
// are active and healthy and the old ones inactive; that the provider's
// Deployment is the new revision's, under provider-burstpool; that the
// local runtimes run the new revisions' programs (their build info says
// the new version) and the new function composed the pools (their warmup
// DaemonSets name the new release's helper image); that no executor was
// evicted, replaced or restarted and no composed object deleted or
// recreated (UIDs before and after); that, sampled every second through
// the upgrade (continuity), each PoolCapacity's occupied executors never
// fell, its cost and node-seconds and executor start counts never went
// back (to zero or else) and its cost's start stayed, and the claim never
// showed fewer occupied executors than ran; that the new provider's
// counters go on from the status's totals; and that the upgraded
// installation bursts.
func upgradeByDoc(t *testing.T, d *docPlane) string {
	ctx := t.Context()
	s, c := d.Stack, d.Client
	next := nextPatch(t, d.tag)
	const pool = "burst-pool"

	// The pools run and burst on the installed release.
	sched := executorScheduling(t, c, poolNS, pool)
	want := 0
	for _, x := range upgradeExecutors {
		cpu, mem := devplane.ExecutorResources(mustQS(t, ctx, c, x.ns, x.qs))
		if err := c.Create(ctx, devplane.ExecutorDeployment(x.ns, x.qs, "us-docker.pkg.dev/e6data-analytics/e6-engine/executor:3.0.218", x.n-1, cpu, mem, sched)); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		want += int(x.n - 1)
	}
	waitUpgradeExecutors(t, c, pool, want, "the executors Running on "+pool+" before the upgrade")
	for _, x := range upgradeExecutors {
		if err := devplane.ScaleExecutors(ctx, c, x.ns, x.qs, x.n); err != nil {
			t.Fatal(err)
		}
	}
	want = 0
	for _, x := range upgradeExecutors {
		want += int(x.n)
	}
	took := waitUpgradeExecutors(t, c, pool, want, "a burst Running on "+pool+" before the upgrade")
	t.Logf("%d executors Running on %s (%s) on %s, after a burst in %s", want, pool, d.tag, poolNS, took.Round(100*time.Millisecond))
	eventually(t, waitStatus, "the claim and the PoolCapacities count the executors and the pools' cost", func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, poolNS, pool)
		if err != nil || int(st.OccupiedExecutors) != want {
			return false, fmt.Errorf("claim occupied %d (%v)", st.OccupiedExecutors, err)
		}
		for _, p := range upgradePools {
			o, err := atProvider(ctx, c, p)
			if err != nil || o.Cost == nil || o.Cost.NodeSeconds == "0" {
				return false, fmt.Errorf("pool %s counts no cost yet (%v)", p, err)
			}
		}
		return true, nil
	})
	buildInfo(t, ctx, s, d.tag)
	eventually(t, waitStatus, "the warmup DaemonSets of "+pool+" name the installed release's helper image", func(ctx context.Context) (bool, error) {
		return warmupImagesAre(ctx, c, pool, docRegistry+"/warm:"+d.tag)
	})
	fnBefore, provBefore := s.Revisions()
	cfgBefore, err := devplane.ActiveRevision(ctx, c, "Configuration", devplane.ConfigurationName, waitQuick)
	if err != nil {
		t.Fatal(err)
	}
	var composed []composedObject
	for _, p := range upgradePools {
		composed = append(composed, mustComposedObjects(t, ctx, s, poolNS, p)...)
	}
	ran := map[string]map[types.UID]string{}
	restarts := map[types.UID]int32{}
	for _, x := range upgradeExecutors {
		ran[x.ns] = mustRunningExecutors(t, ctx, c, x.ns, pool)
		maps.Copy(restarts, executorRestarts(t, ctx, c, x.ns, pool))
	}
	countedBefore := nodeSecondsCounted(t, ctx, s, pool, poolNS)

	if err := s.Release(ctx, next); err != nil {
		t.Fatal(err)
	}

	// The upgrade, as the doc says, watched throughout.
	watch := watchContinuity(ctx, c, pool, want, ran)
	stopFollowing := followRevisions(ctx, s)
	// Stopped before the stack is.
	defer func() { _ = stopFollowing() }()
	upgradeStart := time.Now()
	d.run(t, installDoc+", step 3 of the new release", docStep(t, d.steps, 3))
	for i, b := range docBlocks(t, filepath.Join(d.root, installDoc), "Upgrading") {
		d.run(t, fmt.Sprintf("%s, Upgrading block %d (VERSION=%s)", installDoc, i+1, next), b, "VERSION="+next)
	}
	t.Logf("%s -> %s: the doc's upgrade ran in %s", d.tag, next, time.Since(upgradeStart).Round(100*time.Millisecond))

	// The new revisions are active and healthy, and the local runtimes
	// run them.
	active := map[string]string{}
	for kind, name := range map[string]string{"Configuration": devplane.ConfigurationName, "Function": devplane.FunctionName, "Provider": devplane.ProviderName} {
		active[kind] = revisionUpgraded(t, ctx, c, kind, name, docRegistry+"/"+packageRepo(kind)+":"+next)
	}
	if active["Configuration"] == cfgBefore || active["Function"] == fnBefore || active["Provider"] == provBefore {
		t.Fatalf("the active revisions %v are those of %s", active, d.tag)
	}
	took = eventually(t, waitReconcile, "the local function and provider run the new revisions", func(ctx context.Context) (bool, error) {
		fn, prov := s.Revisions()
		return fn == active["Function"] && prov == active["Provider"], fmt.Errorf("running %s and %s", fn, prov)
	})
	handedOver := time.Now()
	if err := stopFollowing(); err != nil {
		t.Fatalf("cannot run the new revisions: %v", err)
	}
	t.Logf("new revisions %v running %s after the doc's upgrade", active, took.Round(100*time.Millisecond))
	buildInfo(t, ctx, s, next)
	dep, err := devplane.RevisionDeployment(ctx, c, active["Provider"])
	if err != nil {
		t.Fatal(err)
	}
	if sa, img := dep.Spec.Template.Spec.ServiceAccountName, dep.Spec.Template.Spec.Containers[0].Image; sa != devplane.ProviderServiceAccount || !strings.HasSuffix(img, "/provider-burstpool:"+next) {
		t.Errorf("the new provider Deployment %s runs %s as %q, want the %s image as %s", dep.Name, img, sa, next, devplane.ProviderServiceAccount)
	}
	eventually(t, waitReconcile, "the old provider revision's Deployment is gone", func(ctx context.Context) (bool, error) {
		_, err := devplane.RevisionDeployment(ctx, c, provBefore)
		return err != nil, fmt.Errorf("ProviderRevision %s still has its Deployment", provBefore)
	})

	// The new function composes the pools, the new provider observes
	// them.
	helper := docRegistry + "/warm:" + next
	took = eventually(t, waitStatus, "the warmup DaemonSets of "+pool+" name the new release's helper image "+helper, func(ctx context.Context) (bool, error) {
		return warmupImagesAre(ctx, c, pool, helper)
	})
	t.Logf("warmup DaemonSets composed by the new function %s after the doc's upgrade", took.Round(100*time.Millisecond))
	eventually(t, waitStatus, "the new provider writes every PoolCapacity", func(ctx context.Context) (bool, error) {
		for _, p := range upgradePools {
			o, err := atProvider(ctx, c, p)
			if err != nil || o.Cost == nil || !o.Cost.AccountedUntil.After(handedOver) {
				return false, fmt.Errorf("pool %s's cost accounted until %v, before the hand-over at %v (%v)", p, o.Cost, handedOver, err)
			}
		}
		return true, nil
	})
	eventually(t, waitStatus, "the new provider's counters go on from the status's totals", func(ctx context.Context) (bool, error) {
		o, err := atProvider(ctx, c, pool)
		if err != nil || o.Cost == nil {
			return false, fmt.Errorf("no cost (%v)", err)
		}
		got, total := nodeSecondsCounted(t, ctx, s, pool, poolNS), decimalOf(t, o.Cost.NodeSeconds)
		return got >= countedBefore && got > total-1e-5 && got < total+1e-5, fmt.Errorf("burstpool_pool_node_seconds_total %v (before the upgrade %v), status %v", got, countedBefore, total)
	})

	samples, broken, noted := watch.stop()
	t.Logf("continuity sampled %d times through the upgrade; noted, as docs/capacity.md's Limits say of a provider that starts: %v", samples, noted)
	for _, b := range broken {
		t.Error(b)
	}
	if lost := lostComposed(ctx, c, composed); len(lost) > 0 {
		t.Errorf("the upgrade deleted or recreated composed objects: %v", lost)
	}
	for _, x := range upgradeExecutors {
		if lost := lostExecutors(ran[x.ns], mustRunningExecutors(t, ctx, c, x.ns, pool)); len(lost) > 0 {
			t.Errorf("executors of %s/%s gone through the upgrade: %v", x.ns, x.qs, lost)
		}
		for uid, n := range executorRestarts(t, ctx, c, x.ns, pool) {
			if n != restarts[uid] {
				t.Errorf("executor %s of %s restarted through the upgrade (%d restarts, %d before)", ran[x.ns][uid], x.ns, n, restarts[uid])
			}
		}
	}

	// The upgraded installation bursts.
	if err := devplane.ScaleExecutors(ctx, c, upgradeExecutors[0].ns, upgradeExecutors[0].qs, upgradeExecutors[0].n+1); err != nil {
		t.Fatal(err)
	}
	took = waitUpgradeExecutors(t, c, pool, want+1, "a burst Running on "+pool+" after the upgrade")
	eventually(t, waitStatus, "the claim counts the burst after the upgrade", func(ctx context.Context) (bool, error) {
		_, st, err := readPool(ctx, s, poolNS, pool)
		return err == nil && int(st.OccupiedExecutors) == want+1, fmt.Errorf("occupied %d (%v)", st.OccupiedExecutors, err)
	})
	t.Logf("burst on %s after the upgrade Running in %s", next, took.Round(100*time.Millisecond))
	return next
}

// nextPatch is the release after tag in its minor series: v0.1.0 gives
// v0.1.1.
func nextPatch(t *testing.T, tag string) string {
	t.Helper()
	m := regexp.MustCompile(`^(v\d+\.\d+\.)(\d+)$`).FindStringSubmatch(tag)
	if m == nil {
		t.Fatalf("the release %q is not vX.Y.Z", tag)
	}
	n, _ := strconv.Atoi(m[2])
	return m[1] + strconv.Itoa(n+1)
}

// packageRepo is the repository of burstpool's package of kind under the
// registry: burstpool, function-pool-compose, provider-burstpool.
func packageRepo(kind string) string {
	switch kind {
	case "Function":
		return "function-pool-compose"
	case "Provider":
		return "provider-burstpool"
	}
	return "burstpool"
}

// revisionUpgraded waits until the package kind/name's active revision is
// the one of image and healthy (RevisionHealthy, and RuntimeHealthy for a
// Function or Provider), and every other revision of it inactive, and
// returns the active one.
func revisionUpgraded(t *testing.T, ctx context.Context, c client.Client, kind, name, image string) string {
	t.Helper()
	var active string
	eventually(t, waitReconcile, fmt.Sprintf("%s %s's active revision is %s's, healthy, and the others inactive", kind, name, image), func(ctx context.Context) (bool, error) {
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion("pkg.crossplane.io/v1")
		l.SetKind(kind + "RevisionList")
		if err := c.List(ctx, l, client.MatchingLabels{"pkg.crossplane.io/package": name}); err != nil {
			return false, err
		}
		var states []string
		ok := true
		for _, r := range l.Items {
			state, _, _ := unstructured.NestedString(r.Object, "spec", "desiredState")
			img, _, _ := unstructured.NestedString(r.Object, "spec", "image")
			healthy := condition(&r, "RevisionHealthy") == "True" && (kind == "Configuration" || condition(&r, "RuntimeHealthy") == "True")
			states = append(states, fmt.Sprintf("%s %s %s healthy=%t", r.GetName(), img, state, healthy))
			if img == image {
				ok = ok && state == "Active" && healthy
				active = r.GetName()
			} else {
				ok = ok && state == "Inactive"
			}
		}
		return ok && active != "", fmt.Errorf("revisions %v", states)
	})
	return active
}

// buildInfo checks that the local provider and function say they are
// version (burstpool_build_info).
func buildInfo(t *testing.T, ctx context.Context, s *devplane.Stack, version string) {
	t.Helper()
	for component, addr := range map[string]string{"provider": s.MetricsAddr, "function": s.FunctionMetricsAddr} {
		m, err := devplane.Scrape(ctx, addr, "burstpool_build_info")
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`component="%s",version="%s"`, component, version)
		if len(m) != 1 || m[want] != 1 {
			t.Errorf("the %s says burstpool_build_info %v, want {%s} 1", component, m, want)
		}
	}
}

// waitUpgradeExecutors waits until n pool executors of pool run across
// the namespaces of upgradeExecutors, and returns how long that took.
func waitUpgradeExecutors(t *testing.T, c client.Client, pool string, n int, what string) time.Duration {
	t.Helper()
	return eventually(t, waitNodes, what, func(ctx context.Context) (bool, error) {
		got := 0
		for _, x := range upgradeExecutors {
			k, err := runningExecutors(ctx, c, x.ns, pool)
			if err != nil {
				return false, err
			}
			got += k
		}
		return got == n, fmt.Errorf("%d of %d executors Running", got, n)
	})
}

// executorRestarts are the container restarts of pool's executors in ns,
// by pod UID.
func executorRestarts(t *testing.T, ctx context.Context, c client.Client, ns, pool string) map[types.UID]int32 {
	t.Helper()
	out := map[types.UID]int32{}
	for _, p := range mustExecutorPods(t, ctx, c, ns, pool) {
		for _, cs := range p.Status.ContainerStatuses {
			out[p.UID] += cs.RestartCount
		}
	}
	return out
}

// warmupImagesAre reports whether the warmup DaemonSets of pool run the
// warmup helper image: their install and pause containers
// (internal/warmup DaemonSet); the other one pulls the warmed image.
func warmupImagesAre(ctx context.Context, c client.Client, pool, image string) (bool, error) {
	ds, err := daemonSets(ctx, c, warmups(pool))
	if err != nil {
		return false, err
	}
	if len(ds) == 0 {
		return false, fmt.Errorf("pool %s has no warmup DaemonSet", pool)
	}
	var other []string
	for _, d := range ds {
		for _, ct := range slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers) {
			if (ct.Name == warmup.ContainerInstall || ct.Name == warmup.ContainerPause) && ct.Image != image {
				other = append(other, d.Name+"/"+ct.Name+": "+ct.Image)
			}
		}
	}
	return len(other) == 0, fmt.Errorf("helper containers of other images: %v", other)
}

// continuity samples, every second until stop, what an upgrade must not
// disturb: pool's executors (none gone, none replaced), each of
// upgradePools' PoolCapacity's counts, cost and executor start counts,
// which may only grow, and the count the claim shows, which may neither
// fall below the executors that run nor vanish. It notes, without
// failing, a PoolCapacity that reports Ready False (ClusterUnreachable):
// the new provider's observer took more than ten seconds to sync
// (docs/capacity.md, "Limits"); the claim showing no counts meanwhile
// fails.
type continuity struct {
	mu      sync.Mutex
	start   time.Time
	samples int
	// broken and noted hold what broke and what was noted, each in the
	// order first seen; first and times when (since the sampling started)
	// and how often.
	broken, noted []string
	first         map[string]time.Duration
	times         map[string]int
	done          chan struct{}
	stopped       chan struct{}
}

// watchContinuity starts sampling: pool runs occupied executors, those of
// ran (by namespace, then UID).
func watchContinuity(ctx context.Context, c client.Client, pool string, occupied int, ran map[string]map[types.UID]string) *continuity {
	w := &continuity{start: time.Now(), first: map[string]time.Duration{}, times: map[string]int{}, done: make(chan struct{}), stopped: make(chan struct{})}
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer close(w.stopped)
		last := map[string]pcSample{}
		for {
			select {
			case <-w.done:
				return
			case <-time.After(time.Second):
			}
			w.sample(ctx, c, pool, occupied, ran, last)
		}
	}()
	return w
}

// pcSample is what continuity compares of a PoolCapacity's status between
// samples.
type pcSample struct {
	since, accountedUntil time.Time
	nodeSeconds, dollars  float64
	starts                map[string]int64
	seen                  bool
}

// sample takes one sample and records what broke and what is noted.
func (w *continuity) sample(ctx context.Context, c client.Client, pool string, occupied int, ran map[string]map[types.UID]string, last map[string]pcSample) {
	var broken, noted []string
	for ns, before := range ran {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(ns), poolExecutors(pool)); err != nil {
			continue
		}
		for _, p := range pods.Items {
			if _, ok := before[p.UID]; !ok {
				broken = append(broken, fmt.Sprintf("executor %s/%s appeared (UID %s): it replaces one", ns, p.Name, p.UID))
			}
			if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				broken = append(broken, fmt.Sprintf("executor %s/%s is %s (deleting: %t)", ns, p.Name, p.Status.Phase, p.DeletionTimestamp != nil))
			}
		}
	}
	for _, p := range upgradePools {
		pc := &unstructured.Unstructured{}
		pc.SetGroupVersionKind(gvk(capacityAPI, "PoolCapacity"))
		err := c.Get(ctx, client.ObjectKey{Name: p + "-capacity"}, pc)
		if kerrors.IsNotFound(err) {
			broken = append(broken, "PoolCapacity of "+p+" gone")
			continue
		}
		if err != nil {
			continue
		}
		if st, reason, _ := conditionFields(pc, "Ready"); st == "False" {
			noted = append(noted, fmt.Sprintf("PoolCapacity of %s Ready=False (%s)", p, reason))
		}
		o, err := atProvider(ctx, c, p)
		if err != nil {
			continue
		}
		if p == pool && int(o.OccupiedExecutors) < occupied {
			broken = append(broken, fmt.Sprintf("PoolCapacity of %s counts %d occupied executors, %d run", p, o.OccupiedExecutors, occupied))
		}
		prev := last[p]
		if o.Cost == nil {
			if prev.seen {
				broken = append(broken, "PoolCapacity of "+p+" lost its cost")
			}
			continue
		}
		cur := pcSample{since: o.Cost.Since.Time, accountedUntil: o.Cost.AccountedUntil.Time, starts: map[string]int64{}, seen: true}
		cur.nodeSeconds, _ = strconv.ParseFloat(o.Cost.NodeSeconds, 64)
		cur.dollars, _ = strconv.ParseFloat(o.Cost.Dollars, 64)
		if o.ExecutorStarts != nil {
			for _, b := range o.ExecutorStarts.ByPlacement {
				cur.starts[string(b.Placement)] = b.Count
			}
		}
		if prev.seen {
			if !cur.since.Equal(prev.since) {
				broken = append(broken, fmt.Sprintf("PoolCapacity of %s: cost since %v, then %v", p, prev.since, cur.since))
			}
			if cur.nodeSeconds < prev.nodeSeconds || cur.dollars < prev.dollars || cur.accountedUntil.Before(prev.accountedUntil) {
				broken = append(broken, fmt.Sprintf("PoolCapacity of %s: cost went back from %v node-s, $%v until %v to %v node-s, $%v until %v",
					p, prev.nodeSeconds, prev.dollars, prev.accountedUntil, cur.nodeSeconds, cur.dollars, cur.accountedUntil))
			}
			for pl, n := range prev.starts {
				if cur.starts[pl] < n {
					broken = append(broken, fmt.Sprintf("PoolCapacity of %s: executor starts on %s went back from %d to %d", p, pl, n, cur.starts[pl]))
				}
			}
		}
		last[p] = cur
	}
	if n, found, conds, err := claimOccupied(ctx, c, pool); err == nil {
		switch {
		case !found:
			broken = append(broken, fmt.Sprintf("the claim %s shows no counts %s", pool, conds))
		case n < occupied:
			broken = append(broken, fmt.Sprintf("the claim %s counts %d occupied executors %s, %d run", pool, n, conds, occupied))
		}
	}
	w.record(broken, noted)
}

// record adds one sample's findings.
func (w *continuity) record(broken, noted []string) {
	at := time.Since(w.start)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	for _, f := range []struct {
		found []string
		into  *[]string
	}{{broken, &w.broken}, {noted, &w.noted}} {
		for _, b := range f.found {
			if _, ok := w.first[b]; !ok {
				*f.into = append(*f.into, b)
				w.first[b] = at
			}
			w.times[b]++
		}
	}
}

// claimOccupied reads how many occupied executors the Pool claim pool of
// poolNS shows, whether it shows a count at all, and its Synced and Ready
// conditions.
func claimOccupied(ctx context.Context, c client.Client, pool string) (int, bool, string, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk(claimAPI, "Pool"))
	if err := c.Get(ctx, client.ObjectKey{Namespace: poolNS, Name: pool}, u); err != nil {
		return 0, false, "", err
	}
	n, found, err := unstructured.NestedInt64(u.Object, "status", "occupiedExecutors")
	var conds []string
	for _, typ := range []string{"Synced", "Ready"} {
		st, reason, _ := conditionFields(u, typ)
		conds = append(conds, fmt.Sprintf("%s=%s %s", typ, st, reason))
	}
	return int(n), found, "(" + strings.Join(conds, ", ") + ")", err
}

// stop ends the sampling and returns how many samples were taken, and what
// broke and what was noted, each once, with when it was first seen and in
// how many samples.
func (w *continuity) stop() (samples int, broken, noted []string) {
	close(w.done)
	<-w.stopped
	w.mu.Lock()
	defer w.mu.Unlock()
	say := func(found []string) []string {
		out := make([]string, 0, len(found))
		for _, b := range found {
			out = append(out, fmt.Sprintf("%s (first %s into the upgrade, in %d samples)", b, w.first[b].Round(100*time.Millisecond), w.times[b]))
		}
		return out
	}
	return w.samples, say(w.broken), say(w.noted)
}
