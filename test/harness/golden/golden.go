// Package golden is test harness: it checks that a generated file committed
// to the repository is what its generator writes from the committed input
// today, so a change to a generator or its input that was not regenerated
// fails a test; and it compares what a test renders with the golden file
// under the test's testdata/, which go test -update rewrites.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// Current fails t unless the file out equals what generate makes of the
// file in; both paths are relative to the repository root. It returns the
// committed file.
func Current(t testing.TB, in, out string, generate func(in []byte) ([]byte, error)) []byte {
	t.Helper()
	root := gomod.RootForTest(t)
	src, err := os.ReadFile(filepath.Join(root, in))
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(src)
	if err != nil {
		t.Fatalf("generating %s from %s: %v", out, in, err)
	}
	got, err := os.ReadFile(filepath.Join(root, out))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale; run make generate (-want +got):\n%s", out, diff)
	}
	return got
}

// update makes File write what a test rendered instead of comparing it.
// Every test binary that uses this package has the flag: go test -update.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with what the tests render, then review the diff")

// File fails t unless got equals the golden file at path (relative to the
// test's package folder, so go test runs it from there). With -update it
// writes got to path first, creating its folder.
func File(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from what the test rendered (go test -update rewrites it; review the diff): -want, +got:\n%s", path, diff)
	}
}
