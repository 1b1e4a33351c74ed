package packaging_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/burstpool/burstpool/build/image"
	"github.com/burstpool/burstpool/test/harness/ocireg"
)

var platforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"},
	{OS: "linux", Architecture: "arm64"},
}

// helloSpec is a runtime image of testdata/hello with the warmup helper.
func helloSpec() image.Spec {
	return image.Spec{
		Main:  image.Program{Package: "./test/package/testdata/hello", Path: "/usr/local/bin/hello"},
		Extra: []image.Program{{Package: "./cmd/warm", Path: "/warm"}},
		Config: image.Config{
			Labels:  map[string]string{"org.opencontainers.image.title": "hello"},
			Cmd:     []string{"--address=:9443"},
			Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		},
	}
}

// buildTarballs builds the hello image for every platform and writes one
// tarball each, returned in the order of platforms.
func buildTarballs(t *testing.T) []string {
	t.Helper()
	c := image.Compiler{Dir: repoRoot(t)}
	dir := t.TempDir()
	paths := make([]string, 0, len(platforms))
	for _, p := range platforms {
		img, err := c.Image(t.Context(), helloSpec(), p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "hello-"+p.Architecture+".tar")
		if err := image.WriteTarball(path, "burstpool.local/hello:"+p.Architecture, img); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// summary is what a test checks of a pulled runtime image.
type summary struct {
	Platform   string
	User       string
	Entrypoint []string
	Cmd        []string
	Labels     map[string]string
	// Files maps each regular file of the runtime layer to its mode.
	Files map[string]int64
}

// summarize reads img's config and its first layer (the runtime layer), and
// returns the summary and the content of /usr/local/bin/hello.
func summarize(t *testing.T, img v1.Image) (summary, []byte) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	s := summary{
		Platform:   cf.Platform().String(),
		User:       cf.Config.User,
		Entrypoint: cf.Config.Entrypoint,
		Cmd:        cf.Config.Cmd,
		Labels:     map[string]string{},
		Files:      map[string]int64{},
	}
	for k, v := range cf.Config.Labels {
		// crank adds a label per package layer; only the image's own count here.
		if !strings.HasPrefix(k, "io.crossplane.xpkg:") {
			s.Labels[k] = v
		}
	}
	entries, err := ocireg.Layer(img, 0)
	if err != nil {
		t.Fatal(err)
	}
	var hello []byte
	for _, e := range entries {
		if e.Header.Typeflag != tar.TypeReg {
			continue
		}
		s.Files["/"+e.Header.Name] = e.Header.Mode
		if e.Header.Name == "usr/local/bin/hello" {
			hello = e.Data
		}
	}
	return s, hello
}

func wantSummary(arch string) summary {
	return summary{
		Platform:   "linux/" + arch,
		User:       "65532:65532",
		Entrypoint: []string{"/usr/local/bin/hello"},
		Cmd:        []string{"--address=:9443"},
		Labels:     map[string]string{"org.opencontainers.image.title": "hello"},
		Files: map[string]int64{
			"/etc/group":           0o644,
			"/etc/passwd":          0o644,
			"/usr/local/bin/hello": 0o755,
			"/warm":                0o755,
		},
	}
}

// runIfNative runs the hello binary taken from an image when the image's
// architecture is this machine's: it must start with nothing around it.
func runIfNative(t *testing.T, arch string, bin []byte) {
	t.Helper()
	if arch != runtime.GOARCH || runtime.GOOS != "linux" {
		return
	}
	path := filepath.Join(t.TempDir(), "hello")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), path)
	cmd.Env = []string{} // a static binary needs no environment
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "hello from ") {
		t.Errorf("hello binary from the %s image: output %q, error %v; want it to greet", arch, out, err)
	}
}

func TestRuntimeImageThroughRegistry(t *testing.T) {
	tarballs := buildTarballs(t)
	addr := serveRegistry(t)

	t.Run("PerPlatform", func(t *testing.T) {
		for i, p := range platforms {
			_, _, bin := pushRuntime(t, addr, "burstpool/hello", p.Architecture, tarballs[i])
			runIfNative(t, p.Architecture, bin)
		}
	})

	t.Run("Index", func(t *testing.T) {
		ref, err := ocireg.PushXpkgIndex(t.Context(), addr, "burstpool/hello", "multi", tarballs...)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range platforms {
			checkRuntime(t, ref, &p, p.Architecture)
		}
	})
}

func TestRuntimeImageIsReproducible(t *testing.T) {
	c := image.Compiler{Dir: repoRoot(t)}
	p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	var digests []v1.Hash
	for range 2 {
		img, err := c.Image(t.Context(), helloSpec(), p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds of the same source: digests %s and %s, want equal", digests[0], digests[1])
	}
}

// TestFunctionPackageEmbedsRuntime builds a Function package around a
// runtime image tarball with crank, as hack/package.sh does, and checks
// that the package pulled from the registry still runs that image.
func TestFunctionPackageEmbedsRuntime(t *testing.T) {
	bin := crank(t)
	tarballs := buildTarballs(t)
	addr := serveRegistry(t)

	root := t.TempDir()
	meta, err := os.ReadFile(filepath.Join("testdata", "valid", "function.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "crossplane.yaml"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	xpkgs := make([]string, 0, len(platforms))
	for i, p := range platforms {
		xpkg := filepath.Join(t.TempDir(), "function-buckets-"+p.Architecture+".xpkg")
		xpkgs = append(xpkgs, xpkg)
		cmd := exec.CommandContext(t.Context(), bin, "xpkg", "build", "--package-root", root,
			"--examples-root", filepath.Join(root, "examples"), "--embed-runtime-image-tarball", tarballs[i], "--package-file", xpkg)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("crank xpkg build: %v\n%s", err, out.String())
		}
		ref, img, _ := pushRuntime(t, addr, "burstpool/function-buckets", p.Architecture, xpkg)
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		if len(layers) != 2 {
			t.Fatalf("package %s has %d layers, want the runtime layer and the package layer", ref, len(layers))
		}
		pkgLayer, err := layers[1].Digest()
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := cf.Config.Labels["io.crossplane.xpkg:"+pkgLayer.String()]; got != "base" {
			t.Errorf("package %s: label of the package layer is %q, want \"base\" (how Crossplane finds package.yaml)", ref, got)
		}
		extract(t, bin, ref)
	}

	// One multi-platform reference for both packages, as a release pushes them.
	ref, err := ocireg.PushXpkgIndex(t.Context(), addr, "burstpool/function-buckets", "v0.1.0", xpkgs...)
	if err != nil {
		t.Fatal(err)
	}
	extract(t, bin, ref)
}

// extract pulls the package ref with Crossplane's own package fetcher
// (crank xpkg extract) and checks that its package.yaml is the Function's.
func extract(t *testing.T, crankBin, ref string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "package.gz")
	cmd := exec.CommandContext(t.Context(), crankBin, "xpkg", "extract", ref, "--output", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("crank xpkg extract %s: %v\n%s", ref, err, b)
	}
	f, err := os.Open(out) //nolint:gosec // G304: a file in the test's own folder.
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "kind: Function") || !strings.Contains(string(b), "name: function-buckets") {
		t.Errorf("crank xpkg extract %s: package.yaml lacks the Function metadata:\n%s", ref, b)
	}
}

// serveRegistry starts a loopback registry that stops when the test ends.
func serveRegistry(t *testing.T) string {
	t.Helper()
	addr, stop, err := ocireg.Serve(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// pushRuntime pushes the image or package tarball at path to the registry
// at addr as repo:arch, and checks the runtime image pulled back with
// checkRuntime. It returns the reference, the image and its hello binary.
func pushRuntime(t *testing.T, addr, repo, arch, path string) (string, v1.Image, []byte) {
	t.Helper()
	ref, err := ocireg.PushXpkg(t.Context(), addr, repo, arch, path)
	if err != nil {
		t.Fatal(err)
	}
	img, bin := checkRuntime(t, ref, nil, arch)
	return ref, img, bin
}

// checkRuntime pulls ref (resolved to platform p when given) and checks its
// runtime layer and config against wantSummary(arch). It returns the image
// and its hello binary.
func checkRuntime(t *testing.T, ref string, p *v1.Platform, arch string) (v1.Image, []byte) {
	t.Helper()
	img := pullImage(t, ref, p)
	got, bin := summarize(t, img)
	if diff := cmp.Diff(wantSummary(arch), got); diff != "" {
		t.Errorf("runtime image pulled from %s (platform %v): -want, +got:\n%s", ref, p, diff)
	}
	return img, bin
}

// pullImage pulls ref, resolving an index to platform p when p is given.
func pullImage(t *testing.T, ref string, p *v1.Platform) v1.Image {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	opts := []remote.Option{remote.WithContext(t.Context())}
	if p != nil {
		opts = append(opts, remote.WithPlatform(*p))
	}
	img, err := remote.Image(r, opts...)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	return img
}
