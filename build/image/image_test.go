package image

import (
	"archive/tar"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/burstpool/burstpool/test/harness/ocireg"
)

var amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}

func files() []File {
	return append(BaseFiles(),
		File{Path: "/usr/local/bin/fn", Mode: 0o755, Data: []byte("fn binary")},
		File{Path: "/warm", Mode: 0o755, Data: []byte("warm binary")},
	)
}

// entry is what a test reads back from a tar header.
type entry struct {
	Name     string
	Type     byte
	Mode     int64
	UID, GID int
	ModTime  time.Time
	Data     string
}

func layerEntries(t *testing.T, img v1.Image) []entry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("image has %d layers, want 1", len(layers))
	}
	mt, err := layers[0].MediaType()
	if err != nil {
		t.Fatal(err)
	}
	if mt != types.OCILayer {
		t.Errorf("layer media type %s, want %s", mt, types.OCILayer)
	}
	entries, err := ocireg.Layer(img, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]entry, 0, len(entries))
	for _, e := range entries {
		h := e.Header
		got = append(got, entry{Name: h.Name, Type: h.Typeflag, Mode: h.Mode, UID: h.Uid, GID: h.Gid, ModTime: h.ModTime.UTC(), Data: string(e.Data)})
	}
	return got
}

func TestBuildLayer(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	img, err := Build(files(), Config{Platform: amd64, Entrypoint: []string{"/usr/local/bin/fn"}, Created: created})
	if err != nil {
		t.Fatal(err)
	}
	dir := func(name string, mode int64) entry {
		return entry{Name: name, Type: tar.TypeDir, Mode: mode, ModTime: created}
	}
	file := func(name, data string, mode int64) entry {
		return entry{Name: name, Type: tar.TypeReg, Mode: mode, ModTime: created, Data: data}
	}
	want := []entry{
		dir("etc/", 0o755),
		file("etc/group", "root:x:0:\nnonroot:x:65532:\n", 0o644),
		file("etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n", 0o644),
		dir("tmp/", 0o1777),
		dir("usr/", 0o755),
		dir("usr/local/", 0o755),
		dir("usr/local/bin/", 0o755),
		file("usr/local/bin/fn", "fn binary", 0o755),
		file("warm", "warm binary", 0o755),
	}
	if diff := cmp.Diff(want, layerEntries(t, img)); diff != "" {
		t.Errorf("Build(...): -want layer entries, +got:\n%s", diff)
	}
}

func TestBuildConfig(t *testing.T) {
	cases := map[string]struct {
		reason string
		cfg    Config
		want   v1.ConfigFile
	}{
		"Defaults": {
			reason: "An image runs as 65532:65532 with a PATH, stamped with the Unix epoch, when the caller names no user, environment or time.",
			cfg:    Config{Platform: amd64, Entrypoint: []string{"/usr/local/bin/fn"}},
			want: v1.ConfigFile{
				Architecture: "amd64",
				OS:           "linux",
				Created:      v1.Time{Time: time.Unix(0, 0).UTC()},
				Config: v1.Config{
					User:       NonRoot,
					Entrypoint: []string{"/usr/local/bin/fn"},
					Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
					WorkingDir: "/",
				},
			},
		},
		"Explicit": {
			reason: "The caller's platform variant, user, environment, labels and time are kept as given.",
			cfg: Config{
				Platform:   v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"},
				Entrypoint: []string{"/fn", "serve"},
				User:       "1000:1000",
				Env:        []string{"PATH=/bin", "MODE=fast"},
				Labels:     map[string]string{"org.opencontainers.image.source": "https://github.com/burstpool/burstpool"},
				Created:    time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC),
			},
			want: v1.ConfigFile{
				Architecture: "arm64",
				Variant:      "v8",
				OS:           "linux",
				Created:      v1.Time{Time: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)},
				Config: v1.Config{
					User:       "1000:1000",
					Entrypoint: []string{"/fn", "serve"},
					Env:        []string{"PATH=/bin", "MODE=fast"},
					WorkingDir: "/",
					Labels:     map[string]string{"org.opencontainers.image.source": "https://github.com/burstpool/burstpool"},
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			img, err := Build(files(), tc.cfg)
			if err != nil {
				t.Fatalf("\n%s\nBuild(...): %v", tc.reason, err)
			}
			got, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			// History and RootFS follow from the layer; TestBuildLayer and
			// TestBuildIsDeterministic cover them.
			got.History, got.RootFS = nil, v1.RootFS{}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("\n%s\nBuild(...): -want config, +got:\n%s", tc.reason, diff)
			}
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
				t.Errorf("\n%s\nBuild(...): media types %s and %s, want OCI", tc.reason, m.MediaType, m.Config.MediaType)
			}
		})
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	digest := func(fs []File, created time.Time) v1.Hash {
		t.Helper()
		img, err := Build(fs, Config{Platform: amd64, Entrypoint: []string{"/warm"}, Created: created})
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first := digest(files(), at)
	reversed := files()
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	if again := digest(reversed, at); again != first {
		t.Errorf("Build of the same files in another order: digest %s, want %s", again, first)
	}
	if later := digest(files(), at.Add(time.Hour)); later == first {
		t.Errorf("Build at another time: digest %s, want a different one", later)
	}
}

func TestBuildErrors(t *testing.T) {
	ok := Config{Platform: amd64, Entrypoint: []string{"/warm"}}
	cases := map[string]struct {
		reason string
		files  []File
		cfg    Config
	}{
		"RelativePath": {
			reason: "A file path must be absolute, so that it is clear where the file lands.",
			files:  []File{{Path: "warm", Mode: 0o755}},
			cfg:    ok,
		},
		"RootPath": {
			reason: "The root is a folder, not a file.",
			files:  []File{{Path: "/", Mode: 0o755}},
			cfg:    ok,
		},
		"Duplicate": {
			reason: "Two files at one path would hide one of them.",
			files:  []File{{Path: "/warm", Mode: 0o755}, {Path: "/warm", Mode: 0o755}},
			cfg:    ok,
		},
		"FileAndFolder": {
			reason: "A path cannot be a file and the parent folder of another file.",
			files:  []File{{Path: "/bin", Mode: 0o755}, {Path: "/bin/warm", Mode: 0o755}},
			cfg:    ok,
		},
		"NoPlatform": {
			reason: "Nodes pick images by platform: it must be named.",
			files:  files(),
			cfg:    Config{Entrypoint: []string{"/warm"}},
		},
		"NoEntrypoint": {
			reason: "A runtime image must say what it runs.",
			files:  files(),
			cfg:    Config{Platform: amd64},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Build(tc.files, tc.cfg); err == nil {
				t.Errorf("\n%s\nBuild(...): got no error, want one", tc.reason)
			}
		})
	}
}

func TestParseProgram(t *testing.T) {
	cases := map[string]struct {
		reason  string
		in      string
		want    Program
		wantErr bool
	}{
		"Valid": {
			reason: "PATH=PACKAGE names where a main package's binary goes.",
			in:     "/warm=./cmd/warm",
			want:   Program{Package: "./cmd/warm", Path: "/warm"},
		},
		"RelativePath": {
			reason:  "The path in the image must be absolute.",
			in:      "warm=./cmd/warm",
			wantErr: true,
		},
		"NoPackage": {
			reason:  "A program needs a package.",
			in:      "/warm",
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseProgram(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("\n%s\nParseProgram(%q): error %v, want error: %t", tc.reason, tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nParseProgram(%q): -want, +got:\n%s", tc.reason, tc.in, diff)
			}
		})
	}
}

func TestIndex(t *testing.T) {
	var imgs []v1.Image
	for _, p := range []v1.Platform{amd64, {OS: "linux", Architecture: "arm64"}} {
		img, err := Build(files(), Config{Platform: p, Entrypoint: []string{"/warm"}})
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	idx, err := Index(imgs...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range m.Manifests {
		got = append(got, d.Platform.String())
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, got); diff != "" {
		t.Errorf("Index(...): -want platforms, +got:\n%s", diff)
	}
	if m.MediaType != types.OCIImageIndex {
		t.Errorf("Index(...): media type %s, want %s", m.MediaType, types.OCIImageIndex)
	}
}

func TestCompileReportsGoErrors(t *testing.T) {
	c := Compiler{Dir: t.TempDir()}
	_, err := c.Compile(t.Context(), "./nothing", amd64)
	if err == nil || !strings.Contains(err.Error(), "cannot build ./nothing for linux/amd64") {
		t.Errorf("Compile of a package that is not there: error %v, want one that names the package and platform", err)
	}
}
