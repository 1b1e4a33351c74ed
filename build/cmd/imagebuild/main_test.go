package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/burstpool/burstpool/test/harness/ocireg"
)

func TestRun(t *testing.T) {
	addr, stop, err := ocireg.Serve(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	out := t.TempDir()
	o := options{
		main:      "./cmd/warm",
		name:      "warm",
		platforms: "linux/amd64,linux/arm64",
		user:      "65532:65532",
		dir:       filepath.Join("..", "..", ".."),
		out:       out,
		tagRepo:   "burstpool.local",
		layoutDir: filepath.Join(out, "layout"),
		push:      addr + "/burstpool/warm:v0.1.0",
		created:   "2026-01-01T00:00:00Z",
		extra:     list{"/warm=./cmd/warm"},
		labels:    list{"org.opencontainers.image.title=warm"},
	}
	if err := run(t.Context(), o); err != nil {
		t.Fatal(err)
	}

	for _, arch := range []string{"amd64", "arm64"} {
		img, err := tarball.ImageFromPath(filepath.Join(out, "warm-"+arch+".tar"), nil)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != arch || cf.Config.Entrypoint[0] != "/usr/local/bin/warm" || cf.Config.Labels["org.opencontainers.image.title"] != "warm" {
			t.Errorf("warm-%s.tar: architecture %s, entrypoint %v, labels %v", arch, cf.Architecture, cf.Config.Entrypoint, cf.Config.Labels)
		}
	}

	lp, err := layout.FromPath(o.layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	outer, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	om, err := outer.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(om.Manifests) != 1 {
		t.Fatalf("layout lists %d entries, want the one multi-platform index", len(om.Manifests))
	}
	local, err := outer.ImageIndex(om.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}

	ref, err := name.ParseReference(o.push)
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := remote.Index(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	pm, err := pushed.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range pm.Manifests {
		platforms = append(platforms, d.Platform.String())
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("pushed index: -want platforms, +got:\n%s", diff)
	}
	ld, err := local.Digest()
	if err != nil {
		t.Fatal(err)
	}
	pd, err := pushed.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if ld != pd {
		t.Errorf("index in the layout %s differs from the pushed index %s", ld, pd)
	}
}

func TestCreationTime(t *testing.T) {
	cases := map[string]struct {
		reason string
		flag   string
		env    string
		want   int64
	}{
		"Flag":    {reason: "-created wins.", flag: "2026-01-01T00:00:00Z", env: "5", want: 1767225600},
		"Env":     {reason: "SOURCE_DATE_EPOCH is the reproducible-builds convention.", env: "1700000000", want: 1700000000},
		"Default": {reason: "With neither, images are stamped with the Unix epoch.", want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("SOURCE_DATE_EPOCH", tc.env)
			if tc.env == "" {
				_ = os.Unsetenv("SOURCE_DATE_EPOCH")
			}
			got, err := creationTime(tc.flag)
			if err != nil {
				t.Fatalf("\n%s\ncreationTime(%q): %v", tc.reason, tc.flag, err)
			}
			if got.Unix() != tc.want {
				t.Errorf("\n%s\ncreationTime(%q): %d, want %d", tc.reason, tc.flag, got.Unix(), tc.want)
			}
		})
	}
}
