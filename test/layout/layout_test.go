// Package layout_test tests the repository's layout: what ships (apis,
// functions, internal, cmd) builds without any package of build/ or test/,
// so the folders tell the truth about what runs in a user's cluster.
package layout_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

func TestShippedCodeImportsNoBuildOrTestPackage(t *testing.T) {
	root := gomod.RootForTest(t)
	// The packages that ship and everything they link, tests left out.
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./apis/...", "./functions/...", "./internal/...", "./cmd/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list of the shipped packages: %v", err)
	}
	var found []string
	for _, p := range strings.Fields(string(out)) {
		for _, dir := range []string{"/build/", "/test/"} {
			if strings.HasPrefix(p, gomod.Path+dir) {
				found = append(found, p)
			}
		}
	}
	if len(found) > 0 {
		t.Errorf("shipped code links packages that only build or test burstpool: %v", found)
	}
}
