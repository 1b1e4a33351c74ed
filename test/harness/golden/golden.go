// Package golden is test harness: it checks that a generated file committed
// to the repository is what its generator writes from the committed input
// today, so a change to a generator or its input that was not regenerated
// fails a test.
package golden

import (
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
