package main

import (
	"maps"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// composedFrom runs s until its objects are composed and healthy, the way
// Crossplane calls the function on each reconcile, and returns them as
// observed. A remote pool (one whose settings name a workload cluster)
// first composes only its PoolCapacity; the capacity provider's summary
// brings the rest.
func composedFrom(t *testing.T, s scenario) map[string]string {
	t.Helper()
	// The workload cluster holds the scenario's QueryServices.
	qss := s.QueryServices
	if len(qss) == 0 {
		qss = []string{qs("analytics", "team-a", "burst", "pools", "ghcr.io/e6data/executor:3.1", "4", "16Gi", nil)}
	}
	summary := summaryOf(t, qss, kwokCRDs)
	status := func(n string, u *unstructured.Unstructured) map[string]any {
		if n == string(objects.ComposedRemoteCapacity) {
			return map[string]any{"atProvider": map[string]any{"workloadCluster": summary, "totalExecutors": int64(4), "nodes": map[string]any{"ready": int64(2)}},
				"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		}
		if strings.HasPrefix(n, objects.ComposedRemotePrefix) {
			m := u.DeepCopy().Object["spec"].(map[string]any)["forProvider"].(map[string]any)["manifest"]
			return map[string]any{"atProvider": map[string]any{"manifest": m}, "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		}
		return healthy(2, 2)(n, u)
	}
	for range 3 {
		rsp := s.run(t)
		if f := fatal(rsp); f != "" {
			t.Fatalf("composing: %s", f)
		}
		s.Observed = observe(t, rsp, status)
	}
	return s.Observed
}

// found is the XPool's status of a pool composed from its
// EnvironmentConfig (condition SettingsFound True).
const found = "  conditions:\n  - {type: SettingsFound, status: \"True\", reason: Found}\n  - {type: NodesProvisioned, status: \"True\", reason: Provisioned}\n"

// defaults is the XPool's status of a pool composed from the
// Composition's defaults.
const defaults = "  conditions:\n  - {type: SettingsFound, status: \"False\", reason: UsingDefaults}\n"

// lost are the observed objects that rsp no longer desires: Crossplane
// deletes them.
func lost(observed map[string]string, rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(observed)) {
		if _, ok := rsp.GetDesired().GetResources()[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// TestNoFaultRemovesCapacity replays each fault that made the function
// leave a composed pool's objects out of desired state, which Crossplane
// then deletes (composed resources a function no longer desires are
// garbage collected: Crossplane's "Composition Functions" documentation,
// "desired state"). Every case composes the pool first, then runs the
// fault.
func TestNoFaultRemovesCapacity(t *testing.T) {
	remoteSettings := environmentConfig("burstpool", "  workloadCluster:\n    providerConfigName: west\n  clusterName: mgmt\n")
	lkeSettings := environmentConfig("burstpool", "  provisioning:\n    method: lke\n    clusterId: \"777\"\n    manageNodePool: true\n")
	local := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs}
	type want struct {
		Lost []string
		// Conditions are the reasons of the conditions named.
		Conditions map[string]string
		Phase      string
	}
	cases := map[string]struct {
		reason string
		before scenario
		// fault turns the composed pool's scenario into the faulty one.
		fault func(s scenario) scenario
		want  want
	}{
		"SettingsMissingRemotePool": {
			reason: "A remote pool whose workload cluster came from its EnvironmentConfig keeps every Object when the EnvironmentConfig is deleted, and is Pending saying which one.",
			before: scenario{XR: xpool("burst", "pools", remotePool), Environment: []string{remoteSettings}, QueryServices: []string{}},
			fault: func(s scenario) scenario {
				s.Environment = nil
				return s
			},
			want: want{Conditions: map[string]string{"SettingsFound": "FALSE/SettingsNotFound", "NodesProvisioned": "FALSE/SettingsNotFound", "CapacityObserved": "TRUE/Observed"}, Phase: "Pending"},
		},
		"SettingsRenamedLKEPool": {
			reason: "A managed LKE pool whose cluster ID came from its EnvironmentConfig keeps its cloud node pool when the EnvironmentConfig is renamed.",
			before: scenario{XR: xpool("burst", "pools", basicSpec), Environment: []string{lkeSettings}, QueryServices: allQS, CRDs: linodeCRDs},
			fault: func(s scenario) scenario {
				// The input still selects burstpool by name: Crossplane
				// finds no EnvironmentConfig of that name and supplies
				// none.
				s.Environment = nil
				return s
			},
			want: want{Conditions: map[string]string{"SettingsFound": "FALSE/SettingsNotFound", "NodesProvisioned": "FALSE/SettingsNotFound"}, Phase: "Pending"},
		},
		"SettingsInvalidRemotePool": {
			reason: "A remote pool whose EnvironmentConfig gains a setting of the wrong type keeps every Object, and is Pending naming the field.",
			before: scenario{XR: xpool("burst", "pools", remotePool), Environment: []string{remoteSettings}, QueryServices: []string{}},
			fault: func(s scenario) scenario {
				s.Environment = []string{remoteSettings + "  warmup: not-an-object\n"}
				return s
			},
			want: want{Conditions: map[string]string{"SettingsFound": "TRUE/Found", "NodesProvisioned": "FALSE/SettingsInvalid"}, Phase: "Pending"},
		},
		"NameTakenAfterComposing": {
			reason: "A pool that composed its objects and then finds its PriorityClass name held by another namespace's pool (a create race) keeps what it composed and refuses to compose more.",
			before: local,
			fault: func(s scenario) scenario {
				s.Existing = map[string]string{"placeholder-priorityclass": "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: burst-placeholder\n  labels: {e6data.io/pool: burst, e6data.io/pool-namespace: other}\n"}
				return s
			},
			want: want{Conditions: map[string]string{"NodesProvisioned": "FALSE/NameTaken"}, Phase: "Failed"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.before
			s.Observed = composedFrom(t, s)
			if len(s.Environment) > 0 {
				s.XR = withStatus(s.XR, found)
			} else {
				s.XR = withStatus(s.XR, defaults)
			}
			rsp := tc.fault(s).run(t)
			got := want{Lost: lost(s.Observed, rsp), Conditions: map[string]string{}, Phase: status(rsp)["phase"].(string)}
			c := conditions(rsp)
			for k := range tc.want.Conditions {
				got.Conditions[k] = c[k]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n%d objects composed before the fault; after it (-want +got):\n%s", tc.reason, len(s.Observed), diff)
			}
		})
	}
}

// TestRefusedRemotePoolEvictsNothing replays a remote pool refused its
// names in the workload cluster (another management cluster's pool holds
// its NodePool) whose PoolCapacity still carried its eviction and share
// policies: the capacity provider evicts the pods its selectors find,
// which may be the other pool's.
func TestRefusedRemotePoolEvictsNothing(t *testing.T) {
	spec := remotePool + "  unauthorizedExecutors: Evict\n  queryServiceLimits: {maxPoolExecutors: 2, enforce: true}\n"
	rsp := heldNodePool(t, spec)

	if got := conditions(rsp)["NodesProvisioned"]; got != "FALSE/NameTaken" {
		t.Fatalf("NodesProvisioned %s, want FALSE/NameTaken", got)
	}
	c := desired(rsp, string(objects.ComposedRemoteCapacity))
	if c == nil {
		t.Fatal("the refused pool desires no PoolCapacity: it would no longer count its own executors")
	}
	got, _, _ := unstructured.NestedMap(c.Object, "spec", "forProvider", "policies")
	want := map[string]any{"deleteFailedExecutors": false, "unauthorizedExecutors": "Report", "enforceShares": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the refused pool's PoolCapacity policies (-want +got):\n%s", diff)
	}
}

// TestStaleCapacityIsUnknown replays a PoolCapacity whose watch of the
// pool's cluster fell behind (Stale=True) or that cannot reach it
// (Ready=False): the Pool showed its last figures as current.
func TestStaleCapacityIsUnknown(t *testing.T) {
	const since = "2026-11-22T11:40:00Z"
	cases := map[string]struct {
		reason     string
		conditions []any
		wantCounts bool
		wantCond   string
	}{
		"Current": {
			reason:     "A current PoolCapacity's figures are the Pool's counts.",
			conditions: []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Stale", "status": "False"}},
			wantCounts: true, wantCond: "TRUE/Observed",
		},
		"Stale": {
			reason:     "A stale PoolCapacity's figures are left out, and CapacityObserved says since when.",
			conditions: []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Stale", "status": "True", "reason": "ObserverBehind", "message": "watch failing"}},
			wantCond:   "FALSE/Stale",
		},
		"Unreachable": {
			reason:     "A PoolCapacity that cannot reach the pool's cluster (Ready=False) is stale too.",
			conditions: []any{map[string]any{"type": "Ready", "status": "False", "reason": "ClusterUnreachable", "message": "connection refused"}},
			wantCond:   "FALSE/Stale",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := runWithCapacity(t, func(st map[string]any) {
				st["conditions"] = tc.conditions
				st["atProvider"].(map[string]any)["lastObservedTime"] = since
			})
			st := status(rsp)
			var counts []string
			for _, k := range []string{"totalExecutors", "availableExecutors", "occupiedExecutors", "pendingExecutors", "currentNodes"} {
				if _, ok := st[k]; ok {
					counts = append(counts, k)
				}
			}
			if got := len(counts) == 5; got != tc.wantCounts || (!got && len(counts) > 0) {
				t.Errorf("%s\nstatus counts %v, want all five: %v", tc.reason, counts, tc.wantCounts)
			}
			if got := conditions(rsp)["CapacityObserved"]; got != tc.wantCond {
				t.Errorf("%s\nCapacityObserved %s, want %s", tc.reason, got, tc.wantCond)
			}
			if msg := conditionMessage(rsp, "CapacityObserved"); !tc.wantCounts && !strings.Contains(msg, since) {
				t.Errorf("%s\nCapacityObserved message %q does not say since when (%s)", tc.reason, msg, since)
			}
		})
	}
}

// TestOverdueBlocksBursts checks that what the PoolCapacity says is
// overdue (executors at the executor gate, nodes closed past openAfter)
// reaches the Pool as its BurstsUnblocked condition, naming the nodes.
func TestOverdueBlocksBursts(t *testing.T) {
	cases := map[string]struct {
		reason   string
		overdue  map[string]any
		stale    bool
		want     string
		wantText string
	}{
		"NothingOverdue": {
			reason: "A PoolCapacity that reports nothing overdue: True.",
			want:   "TRUE/NothingOverdue",
		},
		"Overdue": {
			reason:   "Executors gated and a node closed past their bounds: False, naming the node.",
			overdue:  map[string]any{"executors": int64(2), "nodes": int64(1), "nodeNames": []any{"ip-10-0-1-7"}},
			want:     "FALSE/ExecutorsGatedPastBound",
			wantText: "1 pool node(s) still carry the startup taint e6data.io/warming well past warmup.openAfter: ip-10-0-1-7",
		},
		"StaleOverdue": {
			reason:  "A stale PoolCapacity's figures, overdue ones included, are not current: Unknown.",
			overdue: map[string]any{"executors": int64(2)},
			stale:   true,
			want:    "UNKNOWN/CapacityNotCurrent",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := runWithCapacity(t, func(st map[string]any) {
				if tc.overdue != nil {
					st["atProvider"].(map[string]any)["overdue"] = tc.overdue
				}
				if tc.stale {
					st["conditions"] = []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "Stale", "status": "True", "reason": "ObserverBehind"}}
				}
			})
			if got := conditions(rsp)[decision.CondBurstsUnblocked]; got != tc.want {
				t.Errorf("%s\nBurstsUnblocked %s, want %s", tc.reason, got, tc.want)
			}
			if msg := conditionMessage(rsp, decision.CondBurstsUnblocked); !strings.Contains(msg, tc.wantText) {
				t.Errorf("%s\nBurstsUnblocked message %q does not contain %q", tc.reason, msg, tc.wantText)
			}
		})
	}
}

// TestExistingNamesKept checks the move to names that hold the pool's
// namespace: an object composed under the earlier names keeps its name.
// Renaming a composed object makes Crossplane delete it and create
// another; provider-kubernetes deletes an Object's workload cluster object
// with it (its NodePool, and Karpenter then the nodes), and provider-aws
// deletes an IAM role whose external name changes for a new one.
func TestExistingNamesKept(t *testing.T) {
	renamed := func(observed map[string]string, names map[string]string) map[string]string {
		out := map[string]string{}
		for n, y := range observed {
			out[n] = y
			newName, ok := names[n]
			if !ok {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON([]byte(y)); err != nil {
				t.Fatal(err)
			}
			u.SetName(newName)
			if n == string(objects.ComposedNodeRole) {
				u.SetAnnotations(map[string]string{objects.AnnotationExternalName: "test-cluster-burst-node"})
			}
			b, err := u.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			out[n] = string(b)
		}
		return out
	}
	cases := map[string]struct {
		reason string
		s      scenario
		// earlier are the names the objects were composed under, by
		// composed-resource name.
		earlier map[string]string
	}{
		"RemoteObjects": {
			reason: "A remote pool's Objects and PoolCapacity keep the names they were composed under.",
			s:      scenario{XR: xpool("burst", "pools", remotePool), Environment: []string{remoteEnv}, QueryServices: []string{}},
			earlier: map[string]string{
				"remote-capacity": "west-pools-burst-capacity", "remote-nodepool": "west-nodepool-burst-nodepool",
				"remote-nodeclass": "west-kwoknodeclass-burst-nodeclass",
			},
		},
		"NodeIAM": {
			reason:  "A pool's node IAM objects keep their names, and the role its IAM name.",
			s:       scenario{Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, nodeIAMSettings)}, XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: awsCRDs},
			earlier: map[string]string{"node-iam-role": "burst-node-role", "node-iam-access-entry": "burst-node-access"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.s
			s.Observed = renamed(composedFrom(t, s), tc.earlier)
			if len(s.Environment) > 0 {
				s.XR = withStatus(s.XR, found)
			}
			rsp := s.run(t)
			got := map[string]string{}
			for n := range tc.earlier {
				if u := desired(rsp, n); u != nil {
					got[n] = u.GetName()
				}
			}
			if diff := cmp.Diff(tc.earlier, got); diff != "" {
				t.Errorf("%s\nnames (-want +got):\n%s", tc.reason, diff)
			}
			if role := desired(rsp, string(objects.ComposedNodeRole)); role != nil {
				if n := role.GetAnnotations()[objects.AnnotationExternalName]; n != "test-cluster-burst-node" {
					t.Errorf("%s\nthe role's IAM name is %q, want the earlier test-cluster-burst-node", tc.reason, n)
				}
			}
		})
	}
}

// TestNamesDoNotCollide replays pools whose management-cluster objects
// shared names: remote Objects left out the pool's namespace and joined
// parts with dashes, so team-a/burst and team/a-burst (or team-a/burst and
// team-b/burst) wanted one Object, and two pools of one name wanted one
// node IAM role. Objects, PoolCapacities and IAM managed resources are
// cluster-scoped, and Crossplane composes an object of a taken name for
// neither or replaces it (provider-aws adopts an IAM role by its external
// name), so one pool hid or replaced another's.
func TestNamesDoNotCollide(t *testing.T) {
	remote := func(pool, ns string) scenario {
		return scenario{XR: xpool(pool, ns, remotePool), Environment: []string{remoteEnv},
			QueryServices: []string{qs("analytics", "team-a", pool, ns, "ghcr.io/e6data/executor:3.1", "4", "16Gi", nil)}}
	}
	iam := func(pool, ns string) scenario {
		spec := "  minExecutors: 2\n  maxExecutors: 8\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n"
		return scenario{Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, nodeIAMSettings)}, XR: xpool(pool, ns, spec), CRDs: awsCRDs,
			QueryServices: []string{qs("analytics", "team-a", pool, ns, "ghcr.io/e6data/executor:3.1", "8", "60Gi", nil)}}
	}
	remoteKinds := map[string]bool{"Object": true, "PoolCapacity": true}
	iamKinds := map[string]bool{"Role": true, "RolePolicyAttachment": true, "AccessEntry": true, "ClusterUsage": true, "IAM role": true}
	cases := map[string]struct {
		reason string
		a, b   scenario
		// kinds are those whose names the pools must not share: a
		// local pool's own cluster-scoped names are guarded by the
		// name-taken check instead.
		kinds map[string]bool
	}{
		"RemotePoolNamespaces": {reason: "Remote pools burst of team-a and of team-b share no Object or PoolCapacity name.", a: remote("burst", "team-a"), b: remote("burst", "team-b"), kinds: remoteKinds},
		"RemoteDashes":         {reason: "Remote pools team-a/burst and team/a-burst share no Object or PoolCapacity name.", a: remote("burst", "team-a"), b: remote("a-burst", "team"), kinds: remoteKinds},
		"NodeIAM":              {reason: "Pools burst of team-a and of team-b share no node IAM object or role name.", a: iam("burst", "team-a"), b: iam("burst", "team-b"), kinds: iamKinds},
	}
	// names are the cluster-scoped objects a pool composes in the
	// management cluster, and its node role's IAM name.
	names := func(t *testing.T, s scenario, kinds map[string]bool) map[string]bool {
		observed := composedFrom(t, s)
		out := map[string]bool{}
		for _, y := range observed {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON([]byte(y)); err != nil {
				t.Fatal(err)
			}
			if kinds[u.GetKind()] {
				out[u.GetKind()+" "+u.GetName()] = true
			}
			if n := u.GetAnnotations()["crossplane.io/external-name"]; n != "" && kinds["IAM role"] {
				out["IAM role "+n] = true
			}
		}
		return out
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := names(t, tc.a, tc.kinds), names(t, tc.b, tc.kinds)
			var shared []string
			for n := range a {
				if b[n] {
					shared = append(shared, n)
				}
			}
			slices.Sort(shared)
			if len(a) < 2 || len(shared) > 0 {
				t.Errorf("%s\n%d names, shared: %v", tc.reason, len(a), shared)
			}
		})
	}
}

// TestSettingsAvailability checks what the SettingsFound condition
// remembers: a pool composed from its EnvironmentConfig waits when it is
// not found; a new pool, or one composed from the Composition's defaults,
// goes on from the defaults and says so; a pool being deleted never waits.
func TestSettingsAvailability(t *testing.T) {
	composed := map[string]string{"capacity": "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: burst-capacity}\n"}
	cases := map[string]struct {
		reason      string
		environment []string
		status      string
		observed    map[string]string
		deleting    bool
		want        string
		wantPending bool
	}{
		"Found": {
			reason:      "A pool whose EnvironmentConfig is found says where its settings come from.",
			environment: []string{environmentConfig("burstpool", "  clusterName: prod\n")},
			want:        "TRUE/Found",
		},
		"NewPoolWithoutSettings": {
			reason: "A pool with nothing composed goes on from the Composition's defaults, and says the EnvironmentConfig is not found.",
			want:   "FALSE/UsingDefaults",
		},
		"ComposedFromDefaults": {
			reason:   "A pool composed from the defaults before goes on from them.",
			status:   defaults,
			observed: composed,
			want:     "FALSE/UsingDefaults",
		},
		"ComposedFromSettings": {
			reason:   "A pool composed from its EnvironmentConfig waits for it, keeping its objects.",
			status:   found,
			observed: composed,
			want:     "FALSE/SettingsNotFound", wantPending: true,
		},
		"Deleting": {
			reason:   "A pool being deleted does not wait for its settings.",
			status:   found,
			observed: composed,
			deleting: true,
			want:     "",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := xpool("burst", "pools", basicSpec)
			if tc.deleting {
				xr = strings.Replace(xr, "metadata:\n", "metadata:\n  deletionTimestamp: \"2026-11-22T12:00:00Z\"\n", 1)
			}
			if tc.status != "" {
				xr = withStatus(xr, tc.status)
			}
			s := scenario{XR: xr, Environment: tc.environment, Observed: tc.observed, QueryServices: allQS, CRDs: kwokCRDs}
			rsp := s.run(t)
			got := conditions(rsp)["SettingsFound"]
			pending := status(rsp)["phase"] == "Pending"
			if got != tc.want || pending != tc.wantPending {
				t.Errorf("%s\nSettingsFound %q, Pending %v; want %q, %v", tc.reason, got, pending, tc.want, tc.wantPending)
			}
			if l := lost(tc.observed, rsp); len(l) > 0 && !tc.deleting {
				t.Errorf("%s\nlost %v", tc.reason, l)
			}
		})
	}
}

// runWithCapacity composes the basic burst pool, observes what it composed
// healthy (3 nodes, 4 executors) with the PoolCapacity's status changed by
// patch, and composes it again.
func runWithCapacity(t *testing.T, patch func(status map[string]any)) *fnv1.RunFunctionResponse {
	t.Helper()
	s := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs}
	s.Observed = observe(t, s.run(t), func(n string, u *unstructured.Unstructured) map[string]any {
		st := healthy(3, 4)(n, u)
		if n == "capacity" {
			patch(st)
		}
		return st
	})
	return s.run(t)
}
