package e2e

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
		"OneWord":   {reason: "a word is lower-cased", name: "Burst", want: "burst"},
		"Words":     {reason: "words are joined by -", name: "ScaleDown", want: "scale-down"},
		"LongWords": {reason: "every capital starts a word", name: "NotAllowedQueryService", want: "not-allowed-query-service"},
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
