package packaging_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/test/harness/pkgmeta"
)

// TestReleaseNamesTheFunctionForAnyRegistry packs the Configuration as
// `make release` does for registries whose paths do not end in /burstpool
// (hack/package.sh with REGISTRY and VERSION) and checks that the
// Composition's pipeline names the Function that installing that
// Configuration creates: Crossplane names a dependency after its
// repository path (see TestCompositionNamesTheDependencyFunction), so
// registry.example.com/platform/function-pool-compose is installed as
// platform-function-pool-compose, and a Composition still naming
// burstpool-function-pool-compose composes no pool.
func TestReleaseNamesTheFunctionForAnyRegistry(t *testing.T) {
	crank(t) // fail early, naming the missing binary
	cases := map[string]struct {
		reason   string
		registry string
		want     string
	}{
		"TeamRegistry": {
			reason:   "A platform team's registry path names the function after its last folder.",
			registry: "registry.example.com/platform",
			want:     "platform-function-pool-compose",
		},
		"LoopbackAcme": {
			reason:   "A registry with a port, as the end-to-end suite's loopback one.",
			registry: "127.0.0.1:5000/acme",
			want:     "acme-function-pool-compose",
		},
		"Nested": {
			reason:   "Every folder of a nested path is part of the name.",
			registry: "registry.example.com/org/mirrors/crossplane",
			want:     "org-mirrors-crossplane-function-pool-compose",
		},
		"Published": {
			reason:   "The published registry keeps the checkout's name.",
			registry: "ghcr.io/burstpool",
			want:     "burstpool-function-pool-compose",
		},
	}
	for n, tc := range cases {
		t.Run(n, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.CommandContext(t.Context(), "hack/package.sh", "configuration") //nolint:gosec // the repository's own script
			cmd.Dir = repoRoot(t)
			cmd.Env = append(os.Environ(), "OUTPUT="+out, "REGISTRY="+tc.registry, "VERSION=v0.1.0")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("hack/package.sh configuration: %v\n%s", err, b)
			}
			stage := filepath.Join(out, "stage", "burstpool")
			b, err := os.ReadFile(filepath.Join(stage, "crossplane.yaml")) //nolint:gosec // a file the script wrote
			if err != nil {
				t.Fatal(err)
			}
			deps, err := pkgmeta.DependsOn(b)
			if err != nil {
				t.Fatal(err)
			}
			installed := functionNames(t, deps)
			named := pipelineFunctions(t, filepath.Join(stage, "composition.yaml"))
			if diff := cmp.Diff([]string{tc.want}, installed); diff != "" {
				t.Errorf("%s\nthe Function dependency's name: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(installed, named); diff != "" {
				t.Errorf("%s\nthe Composition's functions differ from those the released Configuration installs (-installed +named):\n%s", tc.reason, diff)
			}
		})
	}
}
