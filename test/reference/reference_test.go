package reference

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// TestCopiesMatchReference fails when a copy in examples/pools/reference
// drifts from the manifest the reference text shows under its heading.
func TestCopiesMatchReference(t *testing.T) {
	root := gomod.RootForTest(t)
	text, found, folder := SeedForTest(t)
	if !found {
		t.Skipf("cannot check the copies for drift: the reference folder %s is not beside this checkout", folder)
	}
	for _, m := range Manifests {
		t.Run(m.Section, func(t *testing.T) {
			want, err := Extract(text, m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Read(root)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("%s drifted from the reference's manifest %s (-reference +copy):\n%s", m.File, m.Section, diff)
			}
		})
	}
}

// TestCopyDirHoldsOnlyTheReference keeps other manifests out of the folder
// whose files claim to be the reference's.
func TestCopyDirHoldsOnlyTheReference(t *testing.T) {
	root := gomod.RootForTest(t)
	entries, err := os.ReadDir(filepath.Join(root, CopyDir))
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	for _, m := range Manifests {
		want = append(want, m.File)
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s holds other files than the reference's manifests (-want +got):\n%s", CopyDir, diff)
	}
}

func TestExtract(t *testing.T) {
	text := "4. Example Manifests\n\n4.1 Basic Burst Pool\n\nkind: Pool\nspec:\n  a: 1\n\n  b: 2\n\n4.2 Explicit Instance Type Pool\n\nkind: Other\n\n5. Status & Lifecycle\n"
	cases := map[string]struct {
		m    Manifest
		want string
		err  bool
	}{
		"BlankLinesInsideKept": {m: Manifests[0], want: "kind: Pool\nspec:\n  a: 1\n\n  b: 2\n"},
		"EndsAtNextSection":    {m: Manifests[1], want: "kind: Other\n"},
		"MissingHeading":       {m: Manifests[2], err: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Extract(text, tc.m)
			if (err != nil) != tc.err {
				t.Fatalf("Extract: error %v, want error %t", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Extract (-want +got):\n%s", diff)
			}
		})
	}
}
