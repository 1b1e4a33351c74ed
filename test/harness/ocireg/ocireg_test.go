package ocireg

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/burstpool/burstpool/build/image"
)

// writeImage writes a small image for platform p as a tarball and returns
// its path and the digest of the image the tarball holds. (An image tarball
// records configs and layers, not manifests: read back, its manifest has the
// media types the tarball reader chooses, so the digest is not the one of
// the image written.)
func writeImage(t *testing.T, p v1.Platform) (string, v1.Hash) {
	t.Helper()
	img, err := image.Build(image.BaseFiles(), image.Config{Platform: p, Entrypoint: []string{"/warm"}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), p.Architecture+".tar")
	if err := image.WriteTarball(path, "burstpool.local/test:"+p.Architecture, img); err != nil {
		t.Fatal(err)
	}
	back, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := back.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return path, d
}

func serve(t *testing.T) string {
	t.Helper()
	addr, stop, err := Serve(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// pull fetches the manifest ref names from the registry.
func pull(t *testing.T, ref string) *remote.Descriptor {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Get(r, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	return d
}

func TestServeRefusesOtherAddresses(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0"} {
		if _, _, err := Serve(t.Context(), addr); err == nil {
			t.Errorf("Serve(%q): got no error, want one: the registry listens on loopback only", addr)
		}
	}
}

func TestServeStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	addr, stop, err := Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := http.Get("http://" + addr + "/v2/")
	if err != nil {
		t.Fatalf("GET /v2/: %v", err)
	}
	_ = rsp.Body.Close()
	if rsp.StatusCode != http.StatusOK {
		t.Errorf("GET /v2/: status %d, want 200", rsp.StatusCode)
	}
	cancel()
	stop() // waits for the shutdown the cancel started
	stop() // a second call returns at once
	if rsp, err := http.Get("http://" + addr + "/v2/"); err == nil {
		_ = rsp.Body.Close()
		t.Errorf("GET /v2/ after stop: got status %d, want a refused connection", rsp.StatusCode)
	}
}

func TestPushXpkg(t *testing.T) {
	addr := serve(t)
	path, want := writeImage(t, v1.Platform{OS: "linux", Architecture: "amd64"})
	ref, err := PushXpkg(t.Context(), addr, "burstpool/function-pool-compose", "v0.1.0", path)
	if err != nil {
		t.Fatal(err)
	}
	if ref != addr+"/burstpool/function-pool-compose:v0.1.0" {
		t.Errorf("PushXpkg(...): reference %q, want %q", ref, addr+"/burstpool/function-pool-compose:v0.1.0")
	}
	// A second push of the same file changes nothing.
	if _, err := PushXpkg(t.Context(), addr, "burstpool/function-pool-compose", "v0.1.0", path); err != nil {
		t.Fatal(err)
	}
	if got := pull(t, ref); !got.MediaType.IsImage() || got.Digest != want {
		t.Errorf("pulled %s of digest %s, want an image of the pushed digest %s", got.MediaType, got.Digest, want)
	}
}

func TestPushXpkgIndex(t *testing.T) {
	addr := serve(t)
	amd, amdDigest := writeImage(t, v1.Platform{OS: "linux", Architecture: "amd64"})
	arm, armDigest := writeImage(t, v1.Platform{OS: "linux", Architecture: "arm64"})
	ref, err := PushXpkgIndex(t.Context(), addr, "burstpool/provider-burstpool", "v0.1.0", amd, arm)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := pull(t, ref).ImageIndex()
	if err != nil {
		t.Fatalf("pull index %s: %v", ref, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]v1.Hash{}
	for _, d := range m.Manifests {
		got[d.Platform.String()] = d.Digest
	}
	want := map[string]v1.Hash{"linux/amd64": amdDigest, "linux/arm64": armDigest}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PushXpkgIndex(...): -want platform digests, +got:\n%s", diff)
	}
}

func TestFile(t *testing.T) {
	addr := serve(t)
	var paths []string
	for _, arch := range []string{"amd64", "arm64"} {
		p := v1.Platform{OS: "linux", Architecture: arch}
		img, err := image.Build(append(image.BaseFiles(), image.File{Path: "/usr/local/bin/x", Mode: 0o755, Data: []byte("x for " + arch)}), image.Config{Platform: p, Entrypoint: []string{"/usr/local/bin/x"}})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), arch+".tar")
		if err := image.WriteTarball(path, "burstpool.local/test:"+arch, img); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	ref, err := PushXpkgIndex(t.Context(), addr, "burstpool/provider-burstpool", "v0.1.0", paths...)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		arch   string
		path   string
		want   string
		err    bool
	}{
		"ProgramOfThePlatform": {reason: "The index's image for the platform is read.", arch: "arm64", path: "/usr/local/bin/x", want: "x for arm64"},
		"Missing":              {reason: "A path the image lacks is an error.", arch: "amd64", path: "/usr/local/bin/y", err: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := File(t.Context(), ref, v1.Platform{OS: "linux", Architecture: tc.arch}, tc.path)
			if (err != nil) != tc.err {
				t.Fatalf("%s\nFile(...): error %v, want error %t", tc.reason, err, tc.err)
			}
			if string(got) != tc.want {
				t.Errorf("%s\nFile(...): %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}
