package adversarial

import (
	"maps"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/apiserver"
	"github.com/burstpool/burstpool/test/harness/fnrun"
	"github.com/burstpool/burstpool/test/harness/gomod"
)

// These tests replay the faults that used to delete a pool's
// capacity: Crossplane deletes every composed resource a function leaves
// out of its desired state (Crossplane v2.4 internal/controller/
// apiextensions/composite: composed resources absent from the desired
// state are garbage collected), and provider-kubernetes deletes the
// workload cluster's object of a deleted Object. The function runs from its
// binary (fnrun) and reads the EnvironmentConfigs, QueryServices and the
// objects named after the pool from a real API server; the composed
// objects Crossplane would observe are the function's own desired objects
// of the previous reconcile, with the status their controllers report.

// faultCluster is an API server serving what the function fetches, and the
// function serving on 127.0.0.1.
type faultCluster struct {
	c client.Client
	f *fnrun.Function
}

func startFaultCluster(t *testing.T) faultCluster {
	t.Helper()
	ctrllog.SetLogger(logr.Discard())
	env := apiserver.Start(t, fnrun.CRDPaths(gomod.RootForTest(t))...)
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return faultCluster{c: c, f: fnrun.Start(t)}
}

// faultPool is one pool as Crossplane holds it between reconciles: its
// XPool, with the status and conditions the function set last, and its
// composed resources as observed.
type faultPool struct {
	xr       *unstructured.Unstructured
	observed map[string]*unstructured.Unstructured
	input    map[string]any
	// workload are the QueryServices of the pool's workload cluster,
	// which the capacity provider summarizes into a remote pool's
	// PoolCapacity.
	workload []any
}

func newFaultPool(t *testing.T, name, ns, spec string) *faultPool {
	t.Helper()
	xr, err := fnrun.XPool(name, ns, spec)
	if err != nil {
		t.Fatal(err)
	}
	return &faultPool{xr: xr, observed: map[string]*unstructured.Unstructured{}, input: faultInput}
}

// faultInput is the function input of the tests: the shipped defaults
// with an AWS cluster's node settings.
var faultInput = map[string]any{
	"apiVersion": "pool.fn.burstpool.io/v1beta1", "kind": "Input",
	"aws": map[string]any{"role": "KarpenterNodeRole", "subnetSelectorTerms": []any{map[string]any{"id": "subnet-1"}}, "securityGroupSelectorTerms": []any{map[string]any{"id": "sg-1"}}},
}

// reconcile composes p once as Crossplane does, then records what
// Crossplane would: the desired objects become the observed ones (Ready,
// with the status their controllers report), and the XPool gets the
// desired status and the conditions the response sets.
func (p *faultPool) reconcile(t *testing.T, fc faultCluster, status func(name string, u *unstructured.Unstructured) map[string]any) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := fc.f.Compose(t.Context(), fc.c, fnrun.Request{XR: p.xr, Observed: p.observed, Input: p.input})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			t.Fatalf("fatal result: %s", r.GetMessage())
		}
	}
	p.observed = map[string]*unstructured.Unstructured{}
	for n, u := range fnrun.Desired(rsp) {
		st := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Synced", "status": "True"}}}
		if strings.HasPrefix(n, "remote-") && n != "remote-capacity" {
			st["atProvider"] = map[string]any{"manifest": u.Object["spec"].(map[string]any)["forProvider"].(map[string]any)["manifest"]}
		}
		if u.GetKind() == "PoolCapacity" {
			ap := map[string]any{"totalExecutors": int64(4), "availableExecutors": int64(1), "occupiedExecutors": int64(3), "nodes": map[string]any{"ready": int64(2)}}
			if n == "remote-capacity" {
				ap["workloadCluster"] = map[string]any{"queryServices": p.workload, "crds": []any{"nodepools.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws"}}
			}
			st["atProvider"] = ap
		}
		if status != nil {
			maps.Copy(st, status(n, u))
		}
		u.Object["status"] = st
		p.observed[n] = u
	}
	xst := fnrun.Status(rsp)
	var conds []any
	for _, c := range rsp.GetConditions() {
		conds = append(conds, map[string]any{"type": c.GetType(), "status": strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_"), "reason": c.GetReason()})
	}
	xst["conditions"] = conds
	p.xr.Object["status"] = xst
	return rsp
}

// lostBy are the observed objects of before that rsp does not desire:
// Crossplane deletes them.
func lostBy(before map[string]*unstructured.Unstructured, rsp *fnv1.RunFunctionResponse) []string {
	d := fnrun.Desired(rsp)
	var out []string
	for _, n := range slices.Sorted(maps.Keys(before)) {
		if _, ok := d[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// faultCondition is "Status/Reason" of rsp's condition typ.
func faultCondition(rsp *fnv1.RunFunctionResponse, typ string) string {
	c, ok := fnrun.Conditions(rsp)[typ]
	if !ok {
		return ""
	}
	return strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_") + "/" + c.GetReason()
}

// workloadQS is a QueryService of a remote pool's workload cluster as the
// capacity provider summarizes it.
func workloadQS(name, ns, pool, poolNS string) map[string]any {
	return map[string]any{"name": name, "namespace": ns, "executor": map[string]any{
		"image": "registry.example.com/executor:1", "resources": map[string]any{"cpu": "4", "memory": "16Gi"},
		"poolRef": map[string]any{"name": pool, "namespace": poolNS},
	}}
}

const remoteSpec = "maxExecutors: 8\nminExecutors: 2\nallowedQueryServices: [{name: analytics}]\n"

// analyticsQS is QueryService ns/analytics, whose executors use pool
// ns/pool.
func analyticsQS(t *testing.T, ns, pool string) client.Object {
	t.Helper()
	return fixture.Unstructured(t, fixture.QueryService(fixture.QueryServiceOptions{Namespace: ns, Name: "analytics", Pool: fixture.Pool{Name: pool}}))
}

// settingsOf is an EnvironmentConfig named name with data (YAML, indented
// two spaces).
func settingsOf(t *testing.T, name, data string) client.Object {
	t.Helper()
	return decode(t, "apiVersion: apiextensions.crossplane.io/v1beta1\nkind: EnvironmentConfig\nmetadata: {name: "+name+"}\ndata:\n"+data)
}

// TestFaultSettingsUnavailable replays the EnvironmentConfig that gave
// pools their workload cluster or cluster ID going missing: deleted or
// renamed, the function read it as "no settings", turned a remote pool
// local (every remote-* Object deleted, and with it the workload cluster's
// NodePool and DaemonSets) and dropped a managed LKE pool's cloud node
// pool. Each pool composes first; then the EnvironmentConfig is deleted,
// or renamed (created anew under another name, the old one deleted), on
// the API server.
func TestFaultSettingsUnavailable(t *testing.T) {
	fc := startFaultCluster(t)
	fixture.Create(t, fc.c, fixture.Namespace("pools"),
		settingsOf(t, "burstpool", "  clusterName: mgmt\n  workloadCluster: {providerConfigName: west}\n"),
		settingsOf(t, "lke-settings", "  provisioning: {method: lke, clusterId: \"777\", manageNodePool: true}\n"))
	lkeInput := maps.Clone(faultInput)
	lkeInput["environmentConfig"] = map[string]any{"name": "lke-settings"}

	remote := newFaultPool(t, "burst", "pools", remoteSpec)
	remote.workload = []any{workloadQS("analytics", "pools", "burst", "pools")}
	lke := newFaultPool(t, "lke-burst", "pools", "maxExecutors: 8\nminExecutors: 2\nallowedQueryServices: [{name: analytics}]\n")
	lke.input = lkeInput
	fixture.Create(t, fc.c, analyticsQS(t, "pools", "lke-burst"))
	for range 3 {
		remote.reconcile(t, fc, nil)
		lke.reconcile(t, fc, nil)
	}
	if _, ok := lke.observed["cloud-nodepool"]; !ok {
		t.Fatalf("the LKE pool composed no cloud node pool: %v", slices.Sorted(maps.Keys(lke.observed)))
	}

	// The faults, on the API server.
	del := func(name string) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apiextensions.crossplane.io/v1beta1")
		u.SetKind("EnvironmentConfig")
		u.SetName(name)
		if err := fc.c.Delete(t.Context(), u); err != nil {
			t.Fatal(err)
		}
	}
	del("burstpool")
	fixture.Create(t, fc.c, settingsOf(t, "lke-settings-v2", "  provisioning: {method: lke, clusterId: \"777\", manageNodePool: true}\n"))
	del("lke-settings")

	type got struct {
		Lost             []string
		Phase            string
		SettingsFound    string
		NodesProvisioned string
	}
	want := got{Phase: "Pending", SettingsFound: "FALSE/SettingsNotFound", NodesProvisioned: "FALSE/SettingsNotFound"}
	for name, p := range map[string]*faultPool{"EnvironmentConfigDeletedRemotePool": remote, "EnvironmentConfigRenamedLKEPool": lke} {
		before := maps.Clone(p.observed)
		rsp := p.reconcile(t, fc, nil)
		g := got{Lost: lostBy(before, rsp), Phase: fnrun.Status(rsp)["phase"].(string), SettingsFound: faultCondition(rsp, "SettingsFound"), NodesProvisioned: faultCondition(rsp, "NodesProvisioned")}
		if diff := cmp.Diff(want, g); diff != "" {
			t.Errorf("%s: %d objects composed before the fault; after it (-want +got):\n%s", name, len(before), diff)
		}
		if msg := fnrun.Conditions(rsp)["SettingsFound"].GetMessage(); !strings.Contains(msg, "EnvironmentConfig ") || !strings.Contains(msg, "Restore") {
			t.Errorf("%s: SettingsFound message %q does not name the EnvironmentConfig and what to do", name, msg)
		}
		t.Logf("%s: %d composed objects, %d lost; claim: %s", name, len(before), len(g.Lost), fnrun.Status(rsp)["message"])
	}
}

// TestFaultNameTakenAfterComposing replays a create race for a pool's
// cluster-wide names: pool team-a/burst composed its objects, and the
// PriorityClass burst-placeholder on the API server is pool team-b/burst's.
// The "name taken" verdict desired nothing, so Crossplane deleted them all.
func TestFaultNameTakenAfterComposing(t *testing.T) {
	fc := startFaultCluster(t)
	fixture.Create(t, fc.c, fixture.Namespace("team-a"),
		settingsOf(t, "burstpool", "  clusterName: mgmt\n"),
		analyticsQS(t, "team-a", "burst"))
	p := newFaultPool(t, "burst", "team-a", "maxExecutors: 8\nminExecutors: 2\nallowedQueryServices: [{name: analytics}]\nprovisioning: {cloud: aws, method: karpenter}\n")
	for range 3 {
		p.reconcile(t, fc, nil)
	}
	// What the race left on the API server: team-a's PoolCapacity, as
	// the pool composed it, and team-b's PriorityClass.
	capacity := &unstructured.Unstructured{Object: maps.Clone(p.observed["capacity"].Object)}
	delete(capacity.Object, "status")
	if err := fc.c.Create(t.Context(), capacity); err != nil {
		t.Fatal(err)
	}
	fixture.Create(t, fc.c, decode(t, `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: burst-placeholder, labels: {e6data.io/pool: burst, e6data.io/pool-namespace: team-b}}
value: -10`))
	before := maps.Clone(p.observed)
	rsp := p.reconcile(t, fc, nil)
	if lost := lostBy(before, rsp); len(lost) > 0 {
		t.Errorf("%d objects composed; the name-taken verdict drops %v", len(before), lost)
	}
	if got := faultCondition(rsp, "NodesProvisioned"); got != "FALSE/NameTaken" {
		t.Errorf("NodesProvisioned %s, want FALSE/NameTaken", got)
	}
	msg, _ := fnrun.Status(rsp)["message"].(string)
	if !strings.Contains(msg, "pool team-b/burst") {
		t.Errorf("the claim does not name the holder: %q", msg)
	}
	t.Logf("%d composed objects, %d lost; claim: %s", len(before), len(lostBy(before, rsp)), msg)
}

// TestFaultRemoteNamesCollide replays remote pools whose management
// cluster Objects and PoolCapacity shared names: team-a/burst and
// team-b/burst (the namespace was left out), team-a/burst and team/a-burst
// (parts joined with dashes). One pool's Objects were the other's, so one
// pool hid or replaced another's objects in the workload cluster.
func TestFaultRemoteNamesCollide(t *testing.T) {
	fc := startFaultCluster(t)
	fixture.Create(t, fc.c, settingsOf(t, "burstpool", "  clusterName: mgmt\n  workloadCluster: {providerConfigName: west}\n"))
	names := func(name, ns string) map[string]bool {
		p := newFaultPool(t, name, ns, remoteSpec)
		p.workload = []any{workloadQS("analytics", ns, name, ns)}
		for range 3 {
			p.reconcile(t, fc, nil)
		}
		out := map[string]bool{}
		for _, u := range p.observed {
			if u.GetKind() == "Object" || u.GetKind() == "PoolCapacity" {
				out[u.GetKind()+" "+u.GetName()] = true
			}
		}
		return out
	}
	a := names("burst", "team-a")
	for other, b := range map[string]map[string]bool{"team-b/burst": names("burst", "team-b"), "team/a-burst": names("a-burst", "team")} {
		var shared []string
		for n := range a {
			if b[n] {
				shared = append(shared, n)
			}
		}
		slices.Sort(shared)
		if len(a) < 8 || len(shared) > 0 {
			t.Errorf("team-a/burst (%d objects) and %s share %v", len(a), other, shared)
		}
		t.Logf("team-a/burst and %s: %d objects each, %d names shared", other, len(a), len(shared))
	}
}

// TestFaultRefusedRemotePoolEvicts replays a remote pool refused its names
// in the workload cluster (another management cluster's pool holds its
// NodePool) whose PoolCapacity still carried unauthorizedExecutors: Evict
// and enforced shares: the capacity provider evicts the pods its
// selectors find on the workload cluster.
func TestFaultRefusedRemotePoolEvicts(t *testing.T) {
	fc := startFaultCluster(t)
	fixture.Create(t, fc.c, settingsOf(t, "burstpool", "  clusterName: mgmt\n  workloadCluster: {providerConfigName: west}\n"))
	p := newFaultPool(t, "burst", "pools", remoteSpec+"unauthorizedExecutors: Evict\nqueryServiceLimits: {maxPoolExecutors: 2, enforce: true}\n")
	p.workload = []any{workloadQS("analytics", "pools", "burst", "pools")}
	held := func(n string, u *unstructured.Unstructured) map[string]any {
		if n != "remote-nodepool" {
			return nil
		}
		return map[string]any{"atProvider": map[string]any{"manifest": map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]any{"name": "burst-nodepool", "annotations": map[string]any{"burstpool.e6data.io/owner": "other/pools/burst"}},
		}}}
	}
	p.reconcile(t, fc, nil)
	p.reconcile(t, fc, held)
	rsp := p.reconcile(t, fc, held)
	if got := faultCondition(rsp, "NodesProvisioned"); got != "FALSE/NameTaken" {
		t.Fatalf("NodesProvisioned %s, want FALSE/NameTaken", got)
	}
	c, ok := fnrun.Desired(rsp)["remote-capacity"]
	if !ok {
		t.Fatal("the refused pool desires no PoolCapacity")
	}
	got, _, _ := unstructured.NestedMap(c.Object, "spec", "forProvider", "policies")
	want := map[string]any{"deleteFailedExecutors": false, "unauthorizedExecutors": "Report", "enforceShares": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the refused pool's PoolCapacity policies (-want +got):\n%s", diff)
	}
}

// TestFaultStaleCapacity replays a PoolCapacity whose watch of the pool's
// cluster fell behind (Stale=True): the Pool showed its last figures as
// current numbers.
func TestFaultStaleCapacity(t *testing.T) {
	fc := startFaultCluster(t)
	fixture.Create(t, fc.c, fixture.Namespace("pools"), settingsOf(t, "burstpool", "  clusterName: mgmt\n"),
		analyticsQS(t, "pools", "burst"))
	p := newFaultPool(t, "burst", "pools", "maxExecutors: 8\nallowedQueryServices: [{name: analytics}]\nprovisioning: {cloud: aws, method: karpenter}\n")
	const since = "2026-11-22T11:40:00Z"
	stale := func(n string, u *unstructured.Unstructured) map[string]any {
		if u.GetKind() != "PoolCapacity" {
			return nil
		}
		return map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
			map[string]any{"type": "Stale", "status": "True", "reason": "ObserverBehind", "message": "the watch is failing"},
		}}
	}
	p.reconcile(t, fc, stale)
	if p.observed["capacity"] == nil {
		t.Fatal("the pool composed no PoolCapacity")
	}
	if err := unstructured.SetNestedField(p.observed["capacity"].Object, since, "status", "atProvider", "lastObservedTime"); err != nil {
		t.Fatal(err)
	}
	rsp := p.reconcile(t, fc, stale)
	st := fnrun.Status(rsp)
	var shown []string
	for _, k := range []string{"totalExecutors", "availableExecutors", "occupiedExecutors", "pendingExecutors", "currentNodes"} {
		if _, ok := st[k]; ok {
			shown = append(shown, k)
		}
	}
	if len(shown) > 0 {
		t.Errorf("a stale PoolCapacity's counts show as current: %v", shown)
	}
	if got := faultCondition(rsp, "CapacityObserved"); got != "FALSE/Stale" {
		t.Errorf("CapacityObserved %s, want FALSE/Stale", got)
	}
	if msg := fnrun.Conditions(rsp)["CapacityObserved"].GetMessage(); !strings.Contains(msg, since) {
		t.Errorf("CapacityObserved message %q does not say since when (%s)", msg, since)
	}
}
