package e2e

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// TestScenarioName checks the names a scenario's namespaces and pool are
// derived from: DNS labels (RFC 1123, as Kubernetes requires of namespace
// names), one word of the scenario's name each.
func TestScenarioName(t *testing.T) {
	cases := map[string]struct {
		reason string
		name   string
		want   string
	}{
		"OneWord":    {reason: "a word is lower-cased", name: "Burst", want: "burst"},
		"Words":      {reason: "words are joined by -", name: "ScaleDown", want: "scale-down"},
		"LongWords":  {reason: "every capital starts a word", name: "NotAllowedQueryService", want: "not-allowed-query-service"},
		"Initialism": {reason: "capitals in a row are one word, the last starting the next word when lower case follows", name: "APIServerRestart", want: "api-server-restart"},
		"Ending":     {reason: "capitals that end the name are one word", name: "RestartAPI", want: "restart-api"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, scenarioName(tc.name)); diff != "" {
				t.Errorf("%s\nscenarioName(%q): -want, +got:\n%s", tc.reason, tc.name, diff)
			}
		})
	}
}

// TestRequireSkipsOnKubeconfig checks that a scenario runs on a cluster
// that offers what it needs and is skipped, naming what is missing, on a
// kubeconfig's cluster that does not.
func TestRequireSkipsOnKubeconfig(t *testing.T) {
	cases := map[string]struct {
		reason      string
		k           *cluster
		needs       []capability
		wantSkipped bool
	}{
		"NeedsNothing": {reason: "a scenario that needs no capability runs on any cluster", k: &cluster{mode: "kubeconfig x"}, wantSkipped: false},
		"LocalHasAll": {reason: "the local control plane offers the simulated cloud", k: &cluster{mode: localMode, caps: []capability{simulatedCloud, restartableRuntimes}},
			needs: []capability{simulatedCloud}, wantSkipped: false},
		"KubeconfigLacks": {reason: "a kubeconfig's cluster has no simulated cloud", k: &cluster{mode: "kubeconfig x"},
			needs: []capability{simulatedCloud}, wantSkipped: true},
		"KubeconfigLacksWorkloadClusters": {reason: "a kubeconfig's cluster has no workload clusters beside it", k: &cluster{mode: "kubeconfig x"},
			needs: []capability{workloadClusters, ownSettings}, wantSkipped: true},
	}
	for name, tc := range cases {
		var scenario *testing.T
		t.Run(name, func(t *testing.T) {
			scenario = t
			tc.k.require(t, tc.needs...)
		})
		if diff := cmp.Diff(tc.wantSkipped, scenario.Skipped()); diff != "" {
			t.Errorf("%s\n%s skipped: -want, +got:\n%s", tc.reason, name, diff)
		}
	}
}

// TestInDump checks what a failed scenario's dump holds of a cluster
// others share: what is in its namespaces or is about its pools, nothing
// of another scenario's.
func TestInDump(t *testing.T) {
	obj := func(kind, ns, name string, labels map[string]string, involved string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind}}
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(labels)
		if involved != "" {
			u.Object["involvedObject"] = map[string]any{"name": involved}
		}
		return u
	}
	namespaces, pools := []string{"e6-pools-scale-down", "workspace-scale-down"}, []string{"e2e-scale-down"}
	cases := map[string]struct {
		reason string
		o      *unstructured.Unstructured
		want   bool
	}{
		"PodInOwnNamespace": {reason: "whatever runs in the scenario's namespaces", o: obj("Pod", "workspace-scale-down", "x", nil, ""), want: true},
		"PodElsewhere":      {reason: "another scenario's pod", o: obj("Pod", "workspace-burst", "x", nil, ""), want: false},
		"NodePool":          {reason: "composed objects are named after the pool", o: obj("NodePool", "", "e2e-scale-down-nodepool", nil, ""), want: true},
		"OtherNodePool": {reason: "a pool whose name starts with the scenario's pool's is another pool",
			o: obj("NodePool", "", "e2e-scale-down2-nodepool", nil, ""), want: false},
		"XPool": {reason: "Crossplane labels a composite with its claim's name",
			o: obj("XPool", "", "e2e-scale-down-abcde", map[string]string{"crossplane.io/claim-name": "e2e-scale-down"}, ""), want: true},
		"Node": {reason: "pool nodes carry the pool label",
			o: obj("Node", "", "kwok-1", map[string]string{qsv1.LabelPool: "e2e-scale-down"}, ""), want: true},
		"NodeIAMRole": {reason: "node IAM objects are named <namespace>.<pool>-...",
			o: obj("Role", "", "e6-pools-scale-down.e2e-scale-down-node-role", nil, ""), want: true},
		"EventAboutPoolCapacity": {reason: "events about the pool's objects, wherever they are",
			o: obj("Event", "default", "e.1", nil, "e2e-scale-down-capacity"), want: true},
		"EventAboutOtherPool": {reason: "events about another pool's objects",
			o: obj("Event", "default", "e.2", nil, "e2e-burst-capacity"), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, inDump(tc.o, namespaces, pools)); diff != "" {
				t.Errorf("%s\ninDump: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDumpFiles checks that each kind of a dump has a file of its own.
func TestDumpFiles(t *testing.T) {
	seen := map[string]string{}
	for i, k := range dumpKinds {
		f := dumpFile(i)
		if other, ok := seen[f]; ok {
			t.Errorf("%s %s and %s are both dumped to %s", k.apiVersion, k.kind, other, f)
		}
		seen[f] = k.apiVersion + " " + k.kind
	}
}

// TestPlanesOfferWhatScenariosNeed checks that every scenario runs on its
// suite's local control plane: require fails a scenario there when the
// plane lacks a capability it needs.
func TestPlanesOfferWhatScenariosNeed(t *testing.T) {
	suites := map[string]struct {
		p         plane
		scenarios []scenario
	}{
		"TestPool":           {p: sharedPlane, scenarios: poolScenarios},
		"TestCapacityBuffer": {p: bufferPlane, scenarios: bufferScenarios},
		"TestNodeGroupPool":  {p: nodeGroupPlane, scenarios: nodeGroupScenarios},
		"TestLinodePool":     {p: linodePlane, scenarios: linodeScenarios},
		"TestRemoteClusters": {p: remotePlane, scenarios: remoteScenarios},
		"TestFaults":         {p: faultPlane, scenarios: faultScenarios},
	}
	for name, s := range suites {
		k := &cluster{mode: localMode, caps: s.p.caps}
		for _, sc := range s.scenarios {
			for _, c := range sc.needs {
				if !k.has(c) {
					t.Errorf("%s/%s needs %s, which its local control plane does not offer", name, sc.name, c)
				}
			}
		}
	}
}
