package packaging_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/pkgmeta"
)

// TestCompositionNamesTheDependencyFunction checks that the Composition's
// pipeline step names the Function that installing the Configuration alone
// creates. Crossplane's dependency resolver (v2.4.0,
// internal/controller/pkg/resolver NewPackage) names a package it installs
// for a dependency after the reference's repository path as a DNS label
// (crossplane-runtime's xpkg.ToDNSLabel, which keeps lowercase letters
// and digits and turns '.', '/', ':' and '-' into '-'; dependencyName is
// that rule for the names burstpool uses, without its 63-character cut):
// ghcr.io/burstpool/function-pool-compose becomes
// burstpool-function-pool-compose. A Composition naming another Function
// finds none, and every Pool stays unready.
func TestCompositionNamesTheDependencyFunction(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "crossplane.yaml")) //nolint:gosec // a file of the checkout
	if err != nil {
		t.Fatal(err)
	}
	deps, err := pkgmeta.DependsOn(b)
	if err != nil {
		t.Fatal(err)
	}

	installed := functionNames(t, deps)
	named := pipelineFunctions(t, filepath.Join(root, "apis", "composition.yaml"))
	if diff := cmp.Diff(installed, named); diff != "" {
		t.Errorf("the Composition's functions differ from those the Configuration's dependencies install (-installed +named):\n%s", diff)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path) //nolint:gosec // a file of the checkout
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// dependencyName is the name Crossplane gives the package it installs for a
// dependency whose repository path is repo (see above).
func dependencyName(repo string) string {
	return strings.NewReplacer(".", "-", "/", "-", ":", "-").Replace(repo)
}

// functionNames are the names Crossplane gives the Functions that deps
// install (dependencyName of each package's repository path).
func functionNames(t *testing.T, deps []pkgmeta.Dependency) []string {
	t.Helper()
	var out []string
	for _, d := range deps {
		if d.Kind != "Function" {
			continue
		}
		ref, err := name.ParseReference(d.Package)
		if err != nil {
			t.Fatalf("dependency %s: %v", d.Package, err)
		}
		out = append(out, dependencyName(ref.Context().RepositoryStr()))
	}
	return out
}

// pipelineFunctions are the functions the Composition at path names, step
// by step.
func pipelineFunctions(t *testing.T, path string) []string {
	t.Helper()
	var comp struct {
		Spec struct {
			Pipeline []struct {
				FunctionRef struct {
					Name string `json:"name"`
				} `json:"functionRef"`
			} `json:"pipeline"`
		} `json:"spec"`
	}
	readYAML(t, path, &comp)
	var out []string
	for _, s := range comp.Spec.Pipeline {
		out = append(out, s.FunctionRef.Name)
	}
	return out
}
