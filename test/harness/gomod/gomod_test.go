package gomod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRootFromSubfolder finds the checkout from this package's folder,
// through RootForTest and so Root.
func TestRootFromSubfolder(t *testing.T) {
	root := RootForTest(t)
	want, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if root != want {
		t.Errorf("RootForTest() = %s, want %s", root, want)
	}
}

func TestDeclares(t *testing.T) {
	cases := map[string]struct {
		reason string
		gomod  string
		want   bool
	}{
		"Plain":   {reason: "A module line names the module.", gomod: "module " + Path + "\n\ngo 1.26.0\n", want: true},
		"Quoted":  {reason: "go.mod may quote the path.", gomod: "module \"" + Path + "\"\n", want: true},
		"Other":   {reason: "Another module is not burstpool.", gomod: "module " + Path + "/tools/kube\n", want: false},
		"Comment": {reason: "A mention in a comment is no declaration.", gomod: "// module " + Path + "\n", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := declares([]byte(tc.gomod), Path); got != tc.want {
				t.Errorf("%s\ndeclares() = %t, want %t", tc.reason, got, tc.want)
			}
		})
	}
}

func TestDirOfARequiredModule(t *testing.T) {
	// go-cmp is required by go.mod, so it is in the module cache already.
	d, err := Dir(t.Context(), "github.com/google/go-cmp", "v0.7.0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "cmp", "compare.go")); err != nil || !strings.Contains(d, "go-cmp@v0.7.0") {
		t.Errorf("Dir() = %s, want the go-cmp@v0.7.0 module folder (%v)", d, err)
	}
}
