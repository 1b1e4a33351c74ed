package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/reference"
)

// referencePools are the reference's Karpenter-mode pools and the
// instance types their specs imply on the simulated AWS cloud: 4.1 what
// analytics-cluster runs, 4.2 and 4.4 their named types, 4.5 an r7gd size.
var referencePools = []struct {
	section, pool string
	typeOK        func(string) bool
	want          string
}{
	{"4.1", "burst-pool", func(s string) bool { return s == "r7gd.4xlarge" }, "r7gd.4xlarge (analytics-cluster's)"},
	{"4.2", "high-memory-pool", func(s string) bool { return s == "r7gd.16xlarge" }, "r7gd.16xlarge"},
	{"4.4", "shared-node-pool", func(s string) bool { return s == "r6gd.8xlarge" }, "r6gd.8xlarge"},
	{"4.5", "prewarmed-pool", func(s string) bool { return strings.HasPrefix(s, "r7gd.") }, "an r7gd size"},
}

// burstAnalytics is how many pool executors analytics-cluster bursts onto
// burst-pool.
const burstAnalytics = 3

// testReferenceManifests applies the reference's Karpenter-mode manifests
// as written with kubectl, with QueryServices their allow rules match, and
// checks that each pool becomes Active on the AWS-named kwok type its spec
// implies and that executors burst onto the basic burst pool.
func testReferenceManifests(t *testing.T, ctx context.Context, s *devplane.Stack, root string) {
	kc := s.Cluster.Kubeconfig
	c := s.Client
	if _, err := kubectl(ctx, kc, "apply", "-f", filepath.Join("testdata", "reference-queryservices.yaml")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, m := range reference.Manifests {
		if m.Section == "4.3" {
			continue // Linode: TestLinodePool, on a cluster without Karpenter
		}
		out, err := kubectl(ctx, kc, "apply", "-f", m.Path(root))
		if err != nil {
			t.Fatalf("reference manifest %s: %v", m.Section, err)
		}
		t.Logf("%s: %s", m.File, strings.TrimSpace(out))
	}
	for _, p := range referencePools {
		took := eventually(t, waitSlow, p.section+" "+p.pool+" Active on "+p.want, func(ctx context.Context) (bool, error) {
			_, st, err := readPool(ctx, s, poolNS, p.pool)
			if err != nil {
				return false, err
			}
			return st.Phase == "Active" && p.typeOK(st.DerivedInstanceType), fmt.Errorf("phase %s type %q: %s", st.Phase, st.DerivedInstanceType, st.Message)
		})
		t.Logf("%s %s Active: %s after apply", p.section, p.pool, (time.Since(start) - 0).Round(100*time.Millisecond))
		_ = took
	}

	// Warm slots (minExecutors) launch nodes of the pools' types.
	for _, p := range []struct{ pool, want string }{{"burst-pool", "r7gd.4xlarge"}, {"shared-node-pool", "r6gd.8xlarge"}, {"prewarmed-pool", "r7gd."}} {
		eventually(t, waitNodes, p.pool+"'s warm slots on "+p.want+" kwok nodes", func(ctx context.Context) (bool, error) {
			types, err := nodeTypes(ctx, c, p.pool)
			if err != nil || len(types) == 0 {
				return false, fmt.Errorf("nodes of %s-nodepool: %v (%v)", p.pool, types, err)
			}
			for _, it := range types {
				if !strings.HasPrefix(it, p.want) {
					return false, fmt.Errorf("a node of type %s", it)
				}
			}
			return true, nil
		})
	}

	// analytics-cluster bursts onto burst-pool (4.1); reporting-cluster
	// onto high-memory-pool (4.2), which scales from zero.
	for _, e := range []struct {
		ns, qs, pool, cpu, mem string
		n                      int32
	}{
		{analyticsNS, "analytics-cluster", "burst-pool", "8", "60Gi", burstAnalytics},
		{reportingNS, "reporting-cluster", "high-memory-pool", "30", "200Gi", 1},
	} {
		if err := c.Create(ctx, devplane.ExecutorDeployment(e.ns, e.qs, "us-docker.pkg.dev/e6data-analytics/e6-engine/executor:3.0.217", e.n, e.cpu, e.mem, executorScheduling(t, c, poolNS, e.pool))); err != nil {
			t.Fatal(err)
		}
	}
	took := waitExecutors(t, waitDisruption, "analytics-cluster's executors Running on burst-pool's r7gd.4xlarge nodes", c, analyticsNS, "burst-pool", burstAnalytics)
	t.Logf("4.1 burst -> %d executors Running: %s", burstAnalytics, took.Round(100*time.Millisecond))
	// 4.2 pins r7gd.16xlarge on spot: its NodePool offers that type first
	// and stand-ins of the same CPU and memory, so that one dry spot
	// market does not stop the burst (docs/sizing.md, "How spot sets are
	// chosen"); Karpenter launches whichever is cheapest.
	offered, err := nodePoolTypes(ctx, c, "high-memory-pool")
	if err != nil || !slices.Contains(offered, "r7gd.16xlarge") {
		t.Fatalf("high-memory-pool's NodePool offers %v (%v); want r7gd.16xlarge among them", offered, err)
	}
	eventually(t, waitDisruption, fmt.Sprintf("reporting-cluster's executor Running on a node of high-memory-pool of an offered type %v", offered), func(ctx context.Context) (bool, error) {
		n, err := runningExecutors(ctx, c, reportingNS, "high-memory-pool")
		if n != 1 {
			return false, fmt.Errorf("%d Running (%v)", n, err)
		}
		types, err := nodeTypes(ctx, c, "high-memory-pool")
		return err == nil && len(types) > 0 && !slices.ContainsFunc(types, func(s string) bool { return !slices.Contains(offered, s) }), fmt.Errorf("node types %v (%v)", types, err)
	})
	eventually(t, waitStatus, "burst-pool's allocation in the reference's shape", func(ctx context.Context) (bool, error) {
		p, err := claim(ctx, s, "burst-pool")
		if err != nil {
			return false, err
		}
		if m := allocationOf(p, analyticsNS, "analytics-cluster"); m != nil {
			pe, _ := m["poolExecutors"].(int64)
			re, _ := m["regularExecutors"].(int64)
			at, _ := m["allocatedAt"].(string)
			return pe == burstAnalytics && re == 4 && at != "", fmt.Errorf("allocation %v", m)
		}
		return false, fmt.Errorf("no allocation of analytics-cluster in %s", countsOf(p))
	})
}

// nodeTypes are the instance types of the nodes Karpenter launched for
// pool's NodePool.
func nodeTypes(ctx context.Context, c client.Client, pool string) ([]string, error) {
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes, client.MatchingLabels{"karpenter.sh/nodepool": pool + "-nodepool"}); err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nodes.Items {
		out = append(out, n.Labels[corev1.LabelInstanceTypeStable])
	}
	return out, nil
}

// nodePoolTypes are the instance types pool's NodePool offers: the values
// of its node.kubernetes.io/instance-type requirement.
func nodePoolTypes(ctx context.Context, c client.Client, pool string) ([]string, error) {
	np, err := readNodePool(ctx, c, pool)
	if err != nil {
		return nil, err
	}
	reqs, _, err := unstructured.NestedSlice(np.Object, "spec", "template", "spec", "requirements")
	if err != nil {
		return nil, err
	}
	for _, r := range reqs {
		m, _ := r.(map[string]any)
		if m["key"] != corev1.LabelInstanceTypeStable {
			continue
		}
		vals, _, _ := unstructured.NestedStringSlice(m, "values")
		return vals, nil
	}
	return nil, fmt.Errorf("NodePool %s-nodepool has no %s requirement", pool, corev1.LabelInstanceTypeStable)
}

// testTroubleshootingCommands runs the commands of the reference's section
// 7 as written, with -n e6-pools where a namespaced object needs it, and
// checks what they print.
func testTroubleshootingCommands(t *testing.T, ctx context.Context, s *devplane.Stack) {
	kc := s.Cluster.Kubeconfig
	ns := []string{"-n", poolNS}
	run := func(t *testing.T, line string, extra ...string) string {
		t.Helper()
		return refCommand{line: line, extra: extra}.run(t, ctx, kc)
	}

	t.Run("GetPool", func(t *testing.T) {
		// Columns of the reference, and 0 where a pool has nothing: the
		// prewarmed pool runs no executors.
		// The reference's columns come first; Crossplane adds its claim
		// columns (SYNCED, READY, CONNECTION-SECRET, AGE) after them.
		header, rows := table(run(t, "kubectl get pool", ns...))
		if len(header) < 5 || !slices.Equal(header[:5], []string{"NAME", "PHASE", "AVAILABLE", "OCCUPIED", "TOTAL"}) {
			t.Errorf("kubectl get pool header %v, want NAME PHASE AVAILABLE OCCUPIED TOTAL first", header)
		}
		byName := map[string][]string{}
		for _, r := range rows {
			byName[r[0]] = r
			// A blank counter would shift the next column into its place.
			for _, f := range r[2:min(5, len(r))] {
				if _, err := strconv.Atoi(f); err != nil {
					t.Errorf("kubectl get pool row %v: %q where a count belongs; every counter is written, 0 included", r, f)
				}
			}
		}
		if r := byName["prewarmed-pool"]; len(r) < 5 || r[3] != "0" {
			t.Errorf("prewarmed-pool row %v: want OCCUPIED 0", r)
		}
		if r := byName["burst-pool"]; len(r) < 5 || r[1] != "Active" || r[3] != strconv.Itoa(burstAnalytics) {
			t.Errorf("burst-pool row %v: want Active with %d occupied", r, burstAnalytics)
		}
		out := run(t, "kubectl get pool burst-pool -o yaml", ns...)
		for _, f := range []string{"totalExecutors:", "availableExecutors:", "occupiedExecutors:", "currentNodes:", "allocations:", "cachedImages:", "attachedQueryServices:"} {
			if !strings.Contains(out, f) {
				t.Errorf("kubectl get pool burst-pool -o yaml lacks %s", f)
			}
		}
		if out := run(t, "kubectl describe pool burst-pool", ns...); !strings.Contains(out, "Events:") || !strings.Contains(out, "burst-pool") {
			t.Errorf("kubectl describe pool burst-pool printed no pool and events:\n%s", out)
		}
	})

	t.Run("WatchPool", func(t *testing.T) {
		wctx, cancel := context.WithTimeout(ctx, watchWindow)
		defer cancel()
		out, _ := kubectl(wctx, kc, append(refCommand{line: "kubectl get pool -w"}.args(), ns...)...)
		checkInReference(t, "kubectl get pool -w")
		if !strings.Contains(out, "burst-pool") {
			t.Errorf("kubectl get pool -w printed no burst-pool within %s:\n%s", watchWindow, out)
		}
	})

	t.Run("QueryServices", func(t *testing.T) {
		out := run(t, "kubectl get qs analytics-cluster -o jsonpath='{.spec.executor.poolRef}'", "-n", analyticsNS)
		if v, err := jsonValues(out); err != nil || len(v) != 1 || v[0].(map[string]any)["name"] != "burst-pool" {
			t.Errorf("poolRef of analytics-cluster: %v (%v)", v, err)
		}
		out = run(t, "kubectl get qs analytics-cluster -o jsonpath='{.metadata.labels}'", "-n", analyticsNS)
		if v, err := jsonValues(out); err != nil || len(v) != 1 || v[0].(map[string]any)["e6data.io/pool"] != "burst-pool" {
			t.Errorf("labels of analytics-cluster: %v (%v)", v, err)
		}
		out = run(t, "kubectl get pool burst-pool -o jsonpath='{.status.attachedQueryServices}' | jq", ns...)
		v, err := jsonValues(out)
		if err != nil || len(v) != 1 {
			t.Fatalf("attachedQueryServices: %v (%v)", v, err)
		}
		var names []string
		for _, a := range v[0].([]any) {
			m := a.(map[string]any)
			q := m["queryService"].(map[string]any)
			names = append(names, fmt.Sprintf("%v/%v compatible=%v", q["namespace"], q["name"], m["compatible"]))
		}
		slices.Sort(names)
		want := []string{analyticsNS + "/analytics-cluster compatible=true", "workspace-huge/huge-cluster compatible=false"}
		if !slices.Equal(names, want) {
			t.Errorf("attachedQueryServices %v, want %v", names, want)
		}
		out = run(t, "kubectl get pool burst-pool -o jsonpath='{.status.attachedQueryServices[?(@.compatible==false)]}' | jq", ns...)
		v, err = jsonValues(out)
		if err != nil || len(v) != 1 {
			t.Fatalf("attachedQueryServices[?(@.compatible==false)]: %v (%v), want huge-cluster alone", v, err)
		}
		m := v[0].(map[string]any)
		if q := m["queryService"].(map[string]any); q["name"] != "huge-cluster" || q["namespace"] != "workspace-huge" || m["message"] == "" || m["requiredCpu"] != "120" || m["requiredMemory"] != "500Gi" {
			t.Errorf("incompatible QueryService %v, want huge-cluster (120 CPU, 500Gi) with a message", m)
		}
	})

	t.Run("Capacity", func(t *testing.T) {
		out := run(t, "kubectl get pool burst-pool -o jsonpath='{.status.allocations}' | jq", ns...)
		v, err := jsonValues(out)
		if err != nil || len(v) != 1 {
			t.Fatalf("allocations: %v (%v)", v, err)
		}
		found := false
		for _, a := range v[0].([]any) {
			m := a.(map[string]any)
			q := m["queryService"].(map[string]any)
			if q["name"] == "analytics-cluster" {
				found = m["poolExecutors"] == float64(burstAnalytics) && m["regularExecutors"] == float64(4) && m["allocatedAt"] != nil
			}
		}
		if !found {
			t.Errorf("allocations %v: want analytics-cluster with poolExecutors %d, regularExecutors 4 and allocatedAt", v[0], burstAnalytics)
		}
		out = run(t, "kubectl get pool burst-pool -o jsonpath='{.status.availableExecutors}'", ns...)
		if _, err := strconv.Atoi(out); err != nil {
			t.Errorf("availableExecutors printed %q, want a number", out)
		}
		out = run(t, "kubectl get nodes -l karpenter.sh/nodepool=burst-pool-nodepool")
		if _, rows := table(out); len(rows) < burstAnalytics {
			t.Errorf("kubectl get nodes -l karpenter.sh/nodepool=burst-pool-nodepool lists %d nodes, want at least %d:\n%s", len(rows), burstAnalytics, out)
		}
		out = run(t, "kubectl get nodepool burst-pool-nodepool -o yaml")
		if !strings.Contains(out, "r7gd.4xlarge") {
			t.Errorf("NodePool burst-pool-nodepool does not name r7gd.4xlarge:\n%s", out)
		}
		// The simulated cloud's NodeClass kind is KWOKNodeClass: Karpenter's
		// kwok provider launches nodes only for it. EC2NodeClass is not
		// served there, as kubectl says; the kwok equivalent is.
		checkInReference(t, "kubectl get ec2nodeclass burst-pool-nodeclass -o yaml")
		if _, err := kubectl(ctx, kc, "get", "ec2nodeclass", "burst-pool-nodeclass", "-o", "yaml"); err == nil || !strings.Contains(err.Error(), "doesn't have a resource type") {
			t.Errorf("kubectl get ec2nodeclass on the kwok cloud: %v, want that the server has no such type", err)
		}
		if out, err := kubectl(ctx, kc, "get", "kwoknodeclass", "burst-pool-nodeclass", "-o", "yaml"); err != nil || !strings.Contains(out, "kind: KWOKNodeClass") {
			t.Errorf("kubectl get kwoknodeclass burst-pool-nodeclass: %v\n%s", err, out)
		}
	})

	t.Run("Warmup", func(t *testing.T) {
		out := run(t, "kubectl get pool burst-pool -o jsonpath='{.status.cachedImages}' | jq", ns...)
		v, err := jsonValues(out)
		if err != nil || len(v) != 1 || len(v[0].([]any)) == 0 {
			t.Fatalf("cachedImages: %v (%v)", v, err)
		}
		img := v[0].([]any)[0].(map[string]any)
		for _, f := range []string{"image", "hash", "source", "warmupStatus", "daemonSetName", "nodesReady", "nodesTotal"} {
			if _, ok := img[f]; !ok {
				t.Errorf("cachedImages[0] lacks %s: %v", f, img)
			}
		}
		ds := img["daemonSetName"].(string)
		_, rows := table(run(t, "kubectl get ds -l e6data.io/pool=burst-pool", ns...))
		var listed []string
		for _, r := range rows {
			listed = append(listed, r[0])
		}
		if !slices.Contains(listed, ds) {
			t.Errorf("kubectl get ds -l e6data.io/pool=burst-pool lists %v, want %s", listed, ds)
		}
		// The reference's example name, burst-pool-warmup-a1b2c3d4, with
		// this image's hash.
		checkInReference(t, "kubectl describe ds burst-pool-warmup-a1b2c3d4")
		if out, err := kubectl(ctx, kc, "describe", "ds", ds, "-n", poolNS); err != nil || !strings.Contains(out, ds) {
			t.Errorf("kubectl describe ds %s: %v\n%s", ds, err, out)
		}
		out = run(t, "kubectl get pods -l e6data.io/component=warmup -o wide", ns...)
		if header, rows := table(out); len(rows) == 0 || !slices.Contains(header, "NODE") {
			t.Errorf("kubectl get pods -l e6data.io/component=warmup -o wide:\n%s", out)
		}
		if out := run(t, "kubectl get secret e6data-registry-secret", ns...); !strings.Contains(out, "e6data-registry-secret") {
			t.Errorf("kubectl get secret e6data-registry-secret:\n%s", out)
		}
		// 4.2 pulls with its pullSecret.
		dss, err := daemonSets(ctx, s.Client, client.InNamespace(poolNS), warmups("high-memory-pool"))
		if err != nil || len(dss) == 0 {
			t.Fatalf("high-memory-pool's warmup DaemonSets: %d (%v)", len(dss), err)
		}
		for _, d := range dss {
			if ps := d.Spec.Template.Spec.ImagePullSecrets; len(ps) != 1 || ps[0].Name != "e6data-registry-secret" {
				t.Errorf("DaemonSet %s pulls with %v, want the pool's pullSecret e6data-registry-secret", d.Name, ps)
			}
		}

		// Forced recreation: the DaemonSets come back.
		before := len(listed)
		run(t, "kubectl delete ds -l e6data.io/pool=burst-pool,e6data.io/component=warmup", ns...)
		took := eventually(t, waitNodes, "the warmup DaemonSets come back", func(ctx context.Context) (bool, error) {
			l, err := daemonSets(ctx, s.Client, client.InNamespace(poolNS), warmups("burst-pool"))
			if err != nil {
				return false, err
			}
			fresh := 0
			for _, d := range l {
				if d.DeletionTimestamp == nil {
					fresh++
				}
			}
			return fresh == before, fmt.Errorf("%d of %d DaemonSets", fresh, before)
		})
		t.Logf("warmup DaemonSets deleted -> recreated: %s", took.Round(100*time.Millisecond))
	})
}
