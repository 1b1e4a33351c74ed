package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/remote"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// remoteEnv points every pool at the workload cluster of ProviderConfig
// west.
var remoteEnv = environmentConfig("burstpool", "  workloadCluster:\n    providerConfigName: west\n  clusterName: mgmt\n")

const remotePool = "  minExecutors: 2\n  maxExecutors: 10\n  executorsPerNode: 2\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n"

// summaryOf is the workload cluster summary the capacity provider
// publishes for the QueryServices qss (YAML) and the CRDs crds.
func summaryOf(t testing.TB, qss, crds []string) map[string]any {
	t.Helper()
	items := make([]any, 0, len(qss))
	for _, y := range qss {
		var q map[string]any
		if err := yaml.Unmarshal([]byte(y), &q); err != nil {
			t.Fatal(err)
		}
		md := q["metadata"].(map[string]any)
		ex, _ := q["spec"].(map[string]any)["executor"].(map[string]any)
		e := map[string]any{}
		for _, k := range []string{"image", "instanceType", "replicas", "nodeSelector", "poolRef"} {
			if v, ok := ex[k]; ok {
				e[k] = v
			}
		}
		if r, ok := ex["resources"].(map[string]any); ok {
			e["resources"] = map[string]any{"cpu": r["cpu"], "memory": r["memory"]}
		}
		s := map[string]any{"name": md["name"], "namespace": md["namespace"], "executor": e}
		if l, ok := md["labels"]; ok {
			s["labels"] = l
		}
		items = append(items, s)
	}
	cs := make([]any, 0, len(crds))
	for _, c := range crds {
		cs = append(cs, c)
	}
	return map[string]any{"crds": cs, "queryServices": items, "observedAt": now.Format(time.RFC3339)}
}

// observeAs turns a response's desired objects into observed ones: objects
// whose names are in statuses get that status, the PoolCapacity gets the
// summary (when not nil).
func observeAs(t testing.TB, rsp *fnv1.RunFunctionResponse, summary map[string]any, statuses map[string]map[string]any) map[string]string {
	t.Helper()
	return observe(t, rsp, func(n string, _ *unstructured.Unstructured) map[string]any {
		if st, ok := statuses[n]; ok {
			return st
		}
		if n == string(objects.ComposedRemoteCapacity) && summary != nil {
			return map[string]any{"atProvider": map[string]any{"workloadCluster": summary}}
		}
		return nil
	})
}

// remoteObjectStatus is an Object's status: the manifest it observed
// (nil: none) and its Synced condition.
func remoteObjectStatus(manifest map[string]any, synced, msg string) map[string]any {
	st := map[string]any{"conditions": []any{map[string]any{"type": "Synced", "status": synced, "reason": "ReconcileError", "message": msg}}}
	if manifest != nil {
		st["atProvider"] = map[string]any{"manifest": manifest}
	}
	return st
}

// notFound is the Synced message of an observe-only Object whose remote
// object does not exist.
const notFound = "cannot observe external resource: external resource does not exist"

func TestRemoteLifecycle(t *testing.T) {
	analytics := qs("analytics", "team-a", "burst", "pools", "ghcr.io/e6data/executor:3.1", "4", "16Gi", nil)
	s := scenario{XR: xpool("burst", "pools", remotePool), Environment: []string{remoteEnv}, QueryServices: []string{}}

	// 1. No summary yet: only the PoolCapacity, pointed at west.
	rsp := s.run(t)
	if f := fatal(rsp); f != "" {
		t.Fatal(f)
	}
	if diff := cmp.Diff([]string{"remote-capacity"}, desiredNames(rsp)); diff != "" {
		t.Fatalf("waiting: desired (-want +got):\n%s", diff)
	}
	c := desired(rsp, "remote-capacity")
	if want := remote.CapacityName("west", "pools", "burst"); c.GetName() != want {
		t.Errorf("PoolCapacity %s, want %s", c.GetName(), want)
	}
	if got, _, _ := unstructured.NestedString(c.Object, "spec", "providerConfigRef", "name"); got != "west" {
		t.Errorf("PoolCapacity providerConfigRef %q, want west", got)
	}
	if q, _, _ := unstructured.NestedMap(c.Object, "spec", "forProvider", "workloadCluster"); q == nil {
		t.Error("PoolCapacity asks for no workload cluster summary")
	}
	// The waiting PoolCapacity only counts: it knows no attachments or
	// tolerations yet, deletes and evicts nothing, opens no node and
	// releases no warm slot. It selects the nodes by spec.nodeSelector and
	// the pool's identity labels.
	var waiting any
	if err := yaml.Unmarshal([]byte(`
pool: {name: burst, namespace: pools}
nodeSelector: {e6data.io/pool: burst, e6data.io/pool-namespace: pools}
executorSelector: {e6data.io/executor-type: pool, e6data.io/pool: burst, e6data.io/pool-namespace: pools}
warmupSelector: {e6data.io/component: warmup, e6data.io/pool: burst, e6data.io/pool-namespace: pools}
executorsPerNode: 2
maxExecutors: 10
queryServices: []
suspend: false
tolerations: []
policies: {deleteFailedExecutors: false, enforceShares: false, unauthorizedExecutors: Report}
warmSlots:
  gate: e6data.io/warm-slot
  selector: {e6data.io/component: placeholder, e6data.io/pool: burst, e6data.io/pool-namespace: pools}
  slots: 0
`), &waiting); err != nil {
		t.Fatal(err)
	}
	fp, _, _ := unstructured.NestedMap(c.Object, "spec", "forProvider")
	delete(fp, "workloadCluster")
	if diff := cmp.Diff(waiting, normalize(fp)); diff != "" {
		t.Errorf("waiting PoolCapacity spec.forProvider (-want +got):\n%s", diff)
	}
	if got := conditions(rsp)[decision.CondProvisioned]; got != "FALSE/"+decision.ReasonWaitingForWorkload {
		t.Errorf("waiting: NodesProvisioned %s", got)
	}
	if msg := status(rsp)["message"]; !strings.Contains(fmt.Sprint(msg), "ProviderConfig west") {
		t.Errorf("waiting message %q names no ProviderConfig", msg)
	}

	// 2. The summary arrived: every remote object is an observe-only
	// Object of west; the PoolCapacity stays local.
	summary := summaryOf(t, []string{analytics}, kwokCRDs)
	s.Observed = observeAs(t, rsp, summary, nil)
	rsp = s.run(t)
	want := []string{"remote-access-policy", "remote-access-policy-binding", "remote-capacity", "remote-node-agent-priorityclass", "remote-nodeclass", "remote-nodepool", "remote-placeholder", "remote-placeholder-priorityclass"}
	got := []string{}
	for _, n := range desiredNames(rsp) {
		if !strings.HasPrefix(n, "remote-warmup") {
			got = append(got, n)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("composed (-want +got):\n%s", diff)
	}
	np := desired(rsp, "remote-nodepool")
	if np.GetKind() != remote.ObjectKind || np.GetAPIVersion() != remote.ObjectAPIVersion {
		t.Fatalf("remote-nodepool is %s", np.GetKind())
	}
	if diff := cmp.Diff("west-pools-nodepool-burst-nodepool-4ae4e2f7c6825e3a", np.GetName()); diff != "" {
		t.Errorf("Object name (-want +got):\n%s", diff)
	}
	checkObject(t, np, remote.PolicyObserve, "west", "mgmt/pools/burst")
	if got := conditions(rsp)[remote.CondWorkloadReachable]; got != "TRUE/"+remote.ReasonReachable {
		t.Errorf("reachable: %s", got)
	}

	// 3. The provider found no remote object of those names: full
	// management.
	notThere := map[string]map[string]any{}
	for _, n := range desiredNames(rsp) {
		if remote.IsObject(resource.Name(n)) {
			notThere[n] = remoteObjectStatus(nil, "False", notFound)
		}
	}
	s.Observed = observeAs(t, rsp, summary, notThere)
	rsp = s.run(t)
	for _, n := range desiredNames(rsp) {
		if remote.IsObject(resource.Name(n)) {
			checkObject(t, desired(rsp, n), remote.PolicyAll, "west", "mgmt/pools/burst")
		}
	}
	validateRemote(t, rsp)
	if got := conditions(rsp)[remote.CondWorkloadReachable]; got != "TRUE/"+remote.ReasonReachable {
		t.Errorf("absent remote objects are no connection problem: %s", got)
	}

	// 4. West's API server is down: the condition names west and quotes
	// the errors, and every object is still desired.
	down := map[string]map[string]any{}
	for _, n := range desiredNames(rsp) {
		if remote.IsObject(resource.Name(n)) {
			down[n] = remoteObjectStatus(nil, "False", "cannot get object: Get \"https://127.0.0.1:7443/apis/karpenter.sh/v1/nodepools/burst-nodepool\": dial tcp 127.0.0.1:7443: connect: connection refused")
		}
	}
	before := desiredNames(rsp)
	s.Observed = observeAs(t, rsp, summary, down)
	rsp = s.run(t)
	if diff := cmp.Diff(before, desiredNames(rsp)); diff != "" {
		t.Errorf("unreachable: desired objects changed (-before +after):\n%s", diff)
	}
	if got := conditions(rsp)[remote.CondWorkloadReachable]; got != "FALSE/"+remote.ReasonUnreachable {
		t.Errorf("unreachable: %s", got)
	}
	if ev := strings.Join(results(rsp), "\n"); !strings.Contains(ev, "WARNING "+remote.ReasonUnreachable+": cannot reach the workload cluster west") {
		t.Errorf("no event says west is unreachable:\n%s", ev)
	}
	for _, c := range rsp.GetConditions() {
		if c.GetType() == remote.CondWorkloadReachable && (!strings.Contains(c.GetMessage(), "ProviderConfig west") || !strings.Contains(c.GetMessage(), "connection refused")) {
			t.Errorf("unreachable message names neither the ProviderConfig nor the error: %s", c.GetMessage())
		}
	}
}

// validateRemote validates every desired object, and the manifest of
// every Object, against its kind's upstream schema (provider-kubernetes'
// Object included).
func validateRemote(t *testing.T, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatal(err)
	}
	kinds := reg.Kinds()
	if !slices.Contains(kinds, schema.FromAPIVersionAndKind(remote.ObjectAPIVersion, remote.ObjectKind)) {
		t.Fatal("the upstream schemas lack provider-kubernetes' Object")
	}
	for _, n := range desiredNames(rsp) {
		u := desired(rsp, n)
		objs := []*unstructured.Unstructured{u}
		if m, ok, _ := unstructured.NestedMap(u.Object, "spec", "forProvider", "manifest"); ok {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
		for _, o := range objs {
			if slices.Contains(kinds, o.GroupVersionKind()) {
				if err := reg.Validate(o); err != nil {
					t.Errorf("%s: %s %s is invalid: %v", n, o.GetKind(), o.GetName(), err)
				}
			}
		}
	}
}

// checkObject checks a wrapped object's policy, ProviderConfig, readiness
// and the owner mark on its manifest.
func checkObject(t *testing.T, o *unstructured.Unstructured, policy, pc, mark string) {
	t.Helper()
	p, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "managementPolicies")
	ref, _, _ := unstructured.NestedString(o.Object, "spec", "providerConfigRef", "name")
	rd, _, _ := unstructured.NestedString(o.Object, "spec", "readiness", "policy")
	m, _, _ := unstructured.NestedString(o.Object, "spec", "forProvider", "manifest", "metadata", "annotations", remote.AnnotationOwner)
	got := []string{strings.Join(p, ","), ref, rd, m}
	if diff := cmp.Diff([]string{policy, pc, "DeriveFromObject", mark}, got); diff != "" {
		t.Errorf("Object %s (-want +got):\n%s", o.GetName(), diff)
	}
}

// heldNodePool composes the remote pool spec in west, where another
// management cluster's pool already holds the NodePool's name (the rest is
// free), and returns the response to that.
func heldNodePool(t *testing.T, spec string) *fnv1.RunFunctionResponse {
	t.Helper()
	analytics := qs("analytics", "team-a", "burst", "pools", "ghcr.io/e6data/executor:3.1", "4", "16Gi", nil)
	s := scenario{XR: xpool("burst", "pools", spec), Environment: []string{remoteEnv}, QueryServices: []string{}}
	summary := summaryOf(t, []string{analytics}, kwokCRDs)
	s.Observed = observeAs(t, s.run(t), summary, nil)
	rsp := s.run(t)
	objs := map[string]map[string]any{}
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, objects.ComposedRemotePrefix) && n != "remote-capacity" {
			objs[n] = remoteObjectStatus(nil, "False", notFound)
		}
	}
	objs["remote-nodepool"] = remoteObjectStatus(map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": "burst-nodepool", "annotations": map[string]any{remote.AnnotationOwner: "other/pools/burst"}},
	}, "True", "")
	s.Observed = observeAs(t, rsp, summary, objs)
	return s.run(t)
}

func TestRemoteNameTaken(t *testing.T) {
	rsp := heldNodePool(t, remotePool)
	if got := conditions(rsp)[decision.CondProvisioned]; got != "FALSE/"+remote.ReasonNameTaken {
		t.Errorf("NodesProvisioned %s", got)
	}
	if got := fmt.Sprint(status(rsp)["message"]); !strings.Contains(got, "pool other/pools/burst") || !strings.Contains(got, "NodePool burst-nodepool") {
		t.Errorf("message names no holder: %s", got)
	}
	// Nothing is applied: every Object is kept as observed, observe-only.
	for _, n := range desiredNames(rsp) {
		if !remote.IsObject(resource.Name(n)) {
			continue
		}
		p, _, _ := unstructured.NestedStringSlice(desired(rsp, n).Object, "spec", "managementPolicies")
		if diff := cmp.Diff([]string{remote.PolicyObserve}, p); diff != "" {
			t.Errorf("%s management policies (-want +got):\n%s", n, diff)
		}
	}
}

func TestOwnership(t *testing.T) {
	const mark = "mgmt/pools/burst"
	obj := func(policy string, manifest map[string]any, synced, msg string) *structpb.Struct {
		st := remoteObjectStatus(manifest, synced, msg)
		s, err := structpb.NewStruct(map[string]any{"spec": map[string]any{"managementPolicies": []any{policy}}, "status": st})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	marked := func(owner string) map[string]any {
		md := map[string]any{"name": "burst-nodepool"}
		if owner != "" {
			md["annotations"] = map[string]any{remote.AnnotationOwner: owner}
		}
		return map[string]any{"metadata": md}
	}
	cases := map[string]struct {
		o                  *structpb.Struct
		policy, holderPart string
	}{
		"NotComposedYet":   {o: nil, policy: remote.PolicyObserve},
		"Absent":           {o: obj(remote.PolicyObserve, nil, "False", notFound), policy: remote.PolicyAll},
		"NotObservedYet":   {o: obj(remote.PolicyObserve, nil, "", ""), policy: remote.PolicyObserve},
		"Unreachable":      {o: obj(remote.PolicyObserve, nil, "False", "dial tcp: connection refused"), policy: remote.PolicyObserve},
		"OwnMark":          {o: obj(remote.PolicyObserve, marked(mark), "True", ""), policy: remote.PolicyAll},
		"AnotherPool":      {o: obj(remote.PolicyObserve, marked("mgmt/other/burst"), "True", ""), policy: remote.PolicyObserve, holderPart: "pool mgmt/other/burst"},
		"Unmarked":         {o: obj(remote.PolicyObserve, marked(""), "True", ""), policy: remote.PolicyObserve, holderPart: "did not compose"},
		"ManagedAlready":   {o: obj(remote.PolicyAll, marked(mark), "True", ""), policy: remote.PolicyAll},
		"ManagedUnreached": {o: obj(remote.PolicyAll, nil, "False", "connection refused"), policy: remote.PolicyAll},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			policy, holder := remote.Ownership(tc.o, mark)
			if policy != tc.policy || (tc.holderPart == "") != (holder == "") || !strings.Contains(holder, tc.holderPart) {
				t.Errorf("Ownership = %q, %q; want %q, holder containing %q", policy, holder, tc.policy, tc.holderPart)
			}
		})
	}
}

func TestReachability(t *testing.T) {
	mk := func(y string) *structpb.Struct { return mustStruct(t, y) }
	objErr := func(msg string) *structpb.Struct {
		return mk("apiVersion: " + remote.ObjectAPIVersion + "\nkind: Object\nmetadata: {name: west-nodepool-burst-nodepool}\nstatus:\n  conditions:\n  - {type: Synced, status: \"False\", message: \"" + msg + "\"}\n")
	}
	capDown := mk("apiVersion: " + objects.CapacityAPIVersion + "\nkind: PoolCapacity\nstatus:\n  conditions:\n  - {type: Ready, status: \"False\", reason: ClusterUnreachable, message: \"cannot get the kubeconfig secret crossplane-system/west\"}\n")
	cases := map[string]struct {
		observed map[resource.Name]*structpb.Struct
		want     string
		quotes   []string
	}{
		"Healthy":         {observed: map[resource.Name]*structpb.Struct{}, want: "True/" + remote.ReasonReachable},
		"AbsentIsNoError": {observed: map[resource.Name]*structpb.Struct{"remote-nodepool": objErr(notFound)}, want: "True/" + remote.ReasonReachable},
		"CapacityCannot":  {observed: map[resource.Name]*structpb.Struct{objects.ComposedRemoteCapacity: capDown}, want: "False/" + remote.ReasonUnreachable, quotes: []string{"kubeconfig secret", "ProviderConfig west"}},
		"SummaryUnread": {observed: map[resource.Name]*structpb.Struct{objects.ComposedRemoteCapacity: mk("apiVersion: " + objects.CapacityAPIVersion + "\nkind: PoolCapacity\nstatus:\n  conditions:\n  - {type: Synced, status: \"False\", message: \"cannot summarize: dial tcp 127.0.0.1:1: connect: connection refused\"}\n")},
			want: "False/" + remote.ReasonUnreachable, quotes: []string{"PoolCapacity: cannot summarize"}},
		"ConnectionError": {observed: map[resource.Name]*structpb.Struct{"remote-nodepool": objErr("dial tcp 127.0.0.1:1: connect: connection refused")}, want: "False/" + remote.ReasonUnreachable, quotes: []string{"west-nodepool-burst-nodepool", "connection refused"}},
		"RefusedByServer": {observed: map[resource.Name]*structpb.Struct{"remote-nodepool": objErr("NodePool.karpenter.sh is invalid")}, want: "False/" + remote.ReasonNotApplied, quotes: []string{"is invalid"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := remote.Reachability(tc.observed, "west")
			if got := string(c.Status) + "/" + c.Reason; got != tc.want {
				t.Errorf("Reachability = %s, want %s (%s)", got, tc.want, c.Message)
			}
			for _, q := range tc.quotes {
				if !strings.Contains(c.Message, q) {
					t.Errorf("message lacks %q: %s", q, c.Message)
				}
			}
		})
	}
}

// remoteRequest is benchRequest's pool targeting west: its QueryServices
// reach the function in the PoolCapacity's summary instead of as required
// resources, and its remote objects are observed through their Objects.
func remoteRequest(b testing.TB, n int) *fnv1.RunFunctionRequest {
	b.Helper()
	qss := make([]string, 0, n)
	for i := range n {
		qss = append(qss, realisticQS(i, fmt.Sprintf("qs-%04d", i), fmt.Sprintf("team-%d", i%50), "burst", "pools", fmt.Sprintf("ghcr.io/e6data/executor:3.%d", i%20), "4", "16Gi", map[string]string{"e6data.io/burst": "enabled"}))
	}
	s := scenario{
		XR:            xpool("burst", "pools", "  minExecutors: 4\n  maxExecutors: 200\n  executorsPerNode: 2\n  queryServiceSelector: {matchLabels: {e6data.io/burst: enabled}}\n"),
		QueryServices: []string{}, Environment: []string{remoteEnv}, Catalog: true,
	}
	f := &Function{now: func() time.Time { return now }}
	first, err := f.RunFunction(b.Context(), s.request(b))
	if err != nil || fatal(first) != "" {
		b.Fatalf("RunFunction: %v %s", err, fatal(first))
	}
	summary := summaryOf(b, qss, kwokCRDs)
	s.Observed = observeAs(b, first, summary, nil)
	second, err := f.RunFunction(b.Context(), s.request(b))
	if err != nil || fatal(second) != "" {
		b.Fatalf("RunFunction: %v %s", err, fatal(second))
	}
	// Observe the Objects as provider-kubernetes reports them: the remote
	// object whole, with a status, in atProvider.manifest.
	objs := map[string]map[string]any{}
	for _, name := range desiredNames(second) {
		if !remote.IsObject(resource.Name(name)) {
			continue
		}
		o := desired(second, name)
		m, _, _ := unstructured.NestedMap(o.Object, "spec", "forProvider", "manifest")
		m["status"] = map[string]any{
			"observedGeneration": 1, "desiredNumberScheduled": 3, "numberReady": 3,
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
		}
		objs[name] = map[string]any{
			"atProvider": map[string]any{"manifest": m},
			"conditions": []any{map[string]any{"type": "Synced", "status": "True"}, map[string]any{"type": "Ready", "status": "True"}},
		}
	}
	s.Observed = observeAs(b, second, summary, objs)
	req := s.request(b)
	req.Observed.Composite.Resource.Fields["status"] = second.GetDesired().GetComposite().GetResource().GetFields()["status"]
	return req
}

// TestRemoteRequestSize measures the request of one call for a pool with
// 1 and 500 QueryServices, local (QueryServices as required resources) and
// remote (the PoolCapacity's summary, the objects inside Objects).
func TestRemoteRequestSize(t *testing.T) {
	for _, n := range []int{1, 500} {
		local := proto.Size(benchRequest(t, n, 20, true))
		remote := remoteRequest(t, n)
		rs := proto.Size(remote)
		t.Logf("qs=%d: local request %d bytes, remote request %d bytes (%.2fx)", n, local, rs, float64(rs)/float64(local))
		rsp, err := (&Function{now: func() time.Time { return now }}).RunFunction(t.Context(), remote)
		if err != nil || fatal(rsp) != "" {
			t.Fatalf("RunFunction: %v %s", err, fatal(rsp))
		}
		if got := status(rsp)["phase"]; got == "Failed" || got == "Pending" {
			t.Fatalf("qs=%d: remote pool is %v: %v", n, got, status(rsp)["message"])
		}
		// The summary carries a few fields of each QueryService, the
		// required resources whole objects: the remote request must not
		// grow faster with QueryServices than the local one.
		if n == 500 && rs > local*3/2 {
			t.Errorf("qs=%d: remote request %d bytes, more than 1.5x the local %d", n, rs, local)
		}
	}
}

// BenchmarkRemoteRunFunction runs RunFunction on a remote pool at 1 and 500
// QueryServices.
func BenchmarkRemoteRunFunction(b *testing.B) {
	for _, n := range []int{1, 500} {
		b.Run(fmt.Sprintf("qs=%d", n), func(b *testing.B) {
			req := remoteRequest(b, n)
			benchRunFunction(b, &Function{now: func() time.Time { return now }, cache: &renderCache{}}, req, func(*fnv1.RunFunctionResponse) {})
			b.ReportMetric(float64(proto.Size(req)), "request-bytes")
		})
	}
}

// TestMovedToRemote: a pool composed locally, then pointed at west,
// observes west before it manages anything there, and no longer desires
// its local objects (Crossplane removes them from the management cluster,
// where nothing ran them).
func TestMovedToRemote(t *testing.T) {
	analytics := qs("analytics", "team-a", "burst", "pools", "ghcr.io/e6data/executor:3.1", "4", "16Gi", nil)
	local := scenario{XR: xpool("burst", "pools", remotePool), QueryServices: []string{analytics}, CRDs: kwokCRDs}
	rsp := local.run(t)
	if desired(rsp, "nodepool") == nil {
		t.Fatal("the local pool composes no NodePool")
	}
	moved := scenario{XR: xpool("burst", "pools", remotePool), Environment: []string{remoteEnv}, QueryServices: []string{}, Observed: observeAs(t, rsp, nil, nil)}
	rsp = moved.run(t)
	// Waiting for west's summary: the local objects are kept meanwhile.
	for _, n := range []string{"capacity", "nodepool", "remote-capacity"} {
		if desired(rsp, n) == nil {
			t.Errorf("waiting for west, the moved pool does not desire %s", n)
		}
	}
	// West's summary came: the local objects go, west is observed first.
	moved.Observed = observeAs(t, rsp, summaryOf(t, []string{analytics}, kwokCRDs), nil)
	rsp = moved.run(t)
	if desired(rsp, "capacity") != nil {
		t.Error("the moved pool still desires its local PoolCapacity")
	}
	for _, n := range []string{"nodepool", "nodeclass", "placeholder", "placeholder-priorityclass"} {
		if desired(rsp, n) != nil {
			t.Errorf("the moved pool still desires its local %s", n)
		}
		o := desired(rsp, objects.ComposedRemotePrefix+n)
		if o == nil {
			t.Errorf("the moved pool composes no %s in west", n)
			continue
		}
		checkObject(t, o, remote.PolicyObserve, "west", "mgmt/pools/burst")
	}
}
