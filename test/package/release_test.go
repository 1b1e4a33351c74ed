package packaging_test

import (
	"archive/tar"
	"bytes"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/ocireg"
	"github.com/burstpool/burstpool/test/harness/pkgmeta"
)

// releaseVersion is the version the release test publishes.
const releaseVersion = "v0.1.0"

// release runs `make release` into a loopback registry and returns the
// registry prefix the packages were released under (ADDR/burstpool).
func release(t *testing.T) string {
	t.Helper()
	crank(t) // fail early, naming the missing binary
	registry := serveRegistry(t) + "/burstpool"
	cmd := exec.CommandContext(t.Context(), "make", "release", "VERSION="+releaseVersion, "REGISTRY="+registry) //nolint:gosec // the repository's own target
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "OUTPUT="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	return registry
}

// pullIndex pulls ref as a multi-platform index and returns its images by
// platform ("linux/amd64").
func pullIndex(t *testing.T, ref string) map[string]v1.Image {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(r, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("cannot pull %s as an index: %v", ref, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]v1.Image{}
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if d.Platform == nil {
			t.Fatalf("%s lists %s without a platform", ref, d.Digest)
		}
		out[d.Platform.String()] = img
	}
	return out
}

// file returns the content of the regular file path (no leading slash) in
// any layer of img, or nil.
func file(t *testing.T, img v1.Image, path string) []byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for i := range layers {
		entries, err := ocireg.Layer(img, i)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Header.Typeflag == tar.TypeReg && strings.TrimPrefix(e.Header.Name, "/") == path {
				return e.Data
			}
		}
	}
	return nil
}

// packageYAML reads the objects of a package's package.yaml: the package
// metadata first, then the CRDs, XRDs and Compositions.
func packageYAML(t *testing.T, img v1.Image) []map[string]any {
	t.Helper()
	b := file(t, img, "package.yaml")
	if b == nil {
		t.Fatal("the package holds no package.yaml")
	}
	var out []map[string]any
	for _, doc := range bytes.Split(b, []byte("\n---")) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// dependsOn reads spec.dependsOn of a package's metadata.
func dependsOn(t *testing.T, img v1.Image) []pkgmeta.Dependency {
	t.Helper()
	deps, err := pkgmeta.DependsOn(file(t, img, "package.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return deps
}

// TestRelease runs `make release VERSION=v0.1.0 REGISTRY=<loopback>` and
// pulls every released reference back: the Function, the Provider and the
// warmup image are indexes of linux/amd64 and linux/arm64; the
// Configurations depend on the released references with the constraint
// ">=v0.1.0 <v0.2.0" (Crossplane resolves dependency versions with
// Masterminds semver constraints, where a space means "and"), so a v0.1
// Configuration never pulls a later minor or major; the function defaults
// to the warmup image of the same release; and the runtime images pass no
// default arguments, which a DeploymentRuntimeConfig's args would replace.
func TestRelease(t *testing.T) {
	reg := release(t)
	ref := func(name string) string { return reg + "/" + name + ":" + releaseVersion }
	constraint := ">=v0.1.0 <v0.2.0"
	platforms := []string{"linux/amd64", "linux/arm64"}

	t.Run("Configuration", func(t *testing.T) {
		want := []pkgmeta.Dependency{
			{Kind: "Function", Package: reg + "/function-pool-compose", Version: constraint},
			{Kind: "Provider", Package: reg + "/provider-burstpool", Version: constraint},
		}
		if diff := cmp.Diff(want, dependsOn(t, pullImage(t, ref("burstpool"), nil))); diff != "" {
			t.Errorf("%s dependsOn: -want, +got:\n%s", ref("burstpool"), diff)
		}
	})

	// Every package carries examples (crank packs them into
	// .up/examples.yaml, where registries show them).
	t.Run("Examples", func(t *testing.T) {
		for _, pkg := range []string{"burstpool", "burstpool-aws"} {
			if file(t, pullImage(t, ref(pkg), nil), ".up/examples.yaml") == nil {
				t.Errorf("%s holds no examples", ref(pkg))
			}
		}
		for _, pkg := range []string{"function-pool-compose", "provider-burstpool"} {
			for p, img := range pullIndex(t, ref(pkg)) {
				if file(t, img, ".up/examples.yaml") == nil {
					t.Errorf("%s (%s) holds no examples", ref(pkg), p)
				}
			}
		}
	})

	// A Function declares what it may run in (meta.pkg.crossplane.io/v1
	// Function spec.capabilities); Crossplane v2 checks "composition"
	// before a Composition pipeline uses it.
	t.Run("FunctionCapabilities", func(t *testing.T) {
		for p, img := range pullIndex(t, ref("function-pool-compose")) {
			spec, _ := packageYAML(t, img)[0]["spec"].(map[string]any)
			if diff := cmp.Diff([]any{"composition"}, spec["capabilities"]); diff != "" {
				t.Errorf("%s (%s) capabilities: -want, +got:\n%s", ref("function-pool-compose"), p, diff)
			}
		}
	})

	t.Run("AWSConfiguration", func(t *testing.T) {
		deps := dependsOn(t, pullImage(t, ref("burstpool-aws"), nil))
		if len(deps) == 0 || deps[0] != (pkgmeta.Dependency{Kind: "Configuration", Package: reg + "/burstpool", Version: constraint}) {
			t.Errorf("%s depends on %+v, want first the released burstpool with %q", ref("burstpool-aws"), deps, constraint)
		}
	})

	warm := ref("warm")
	runtimes := map[string]string{"function-pool-compose": "usr/local/bin/function-pool-compose", "provider-burstpool": "usr/local/bin/provider-burstpool"}
	for pkg, bin := range runtimes {
		t.Run(pkg, func(t *testing.T) {
			imgs := pullIndex(t, ref(pkg))
			if diff := cmp.Diff(platforms, slices.Sorted(maps.Keys(imgs))); diff != "" {
				t.Errorf("%s platforms: -want, +got:\n%s", ref(pkg), diff)
			}
			for p, img := range imgs {
				cf, err := img.ConfigFile()
				if err != nil {
					t.Fatal(err)
				}
				if len(cf.Config.Cmd) != 0 {
					t.Errorf("%s (%s) has default arguments %q: a runtime config's args would drop them", ref(pkg), p, cf.Config.Cmd)
				}
				b := file(t, img, bin)
				if b == nil {
					t.Fatalf("%s (%s) holds no /%s", ref(pkg), p, bin)
				}
				if pkg == "function-pool-compose" && !bytes.Contains(b, []byte(warm)) {
					t.Errorf("the function of %s (%s) does not default to the released warmup image %s", ref(pkg), p, warm)
				}
				if pkg == "function-pool-compose" && !bytes.Contains(file(t, img, "package.yaml"), []byte("default: "+warm)) {
					t.Errorf("the input CRD of %s (%s) does not show the default %s", ref(pkg), p, warm)
				}
			}
		})
	}

	t.Run("Warm", func(t *testing.T) {
		imgs := pullIndex(t, warm)
		if diff := cmp.Diff(platforms, slices.Sorted(maps.Keys(imgs))); diff != "" {
			t.Errorf("%s platforms: -want, +got:\n%s", warm, diff)
		}
		for p, img := range imgs {
			if file(t, img, "warm") == nil {
				t.Errorf("%s (%s) holds no /warm, which warmup pods run", warm, p)
			}
		}
	})
}
