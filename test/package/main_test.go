// Package packaging_test tests how burstpool is packaged: hack/validate.sh
// accepts valid Crossplane YAML and rejects broken YAML offline, runtime images
// built by build/image survive a push to and pull from the loopback registry of
// test/harness/ocireg with their platform, user and entrypoint, and crank
// embeds such an image in a Function package that Crossplane's own package
// fetcher pulls back from that registry.
//
// The tests that run crank fail, never skip, when the crank binary is
// missing: build it with `hack/tool.sh crank`.
package packaging_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// repoRoot is the root of the checkout that holds this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := gomod.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// crank returns the path of the pinned crank binary that hack/tool.sh
// caches, and fails the test when it has not been built.
func crank(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	script, err := os.ReadFile(filepath.Join(root, "hack", "tool.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// The file name of crank in the cache, as hack/tool.sh writes it.
	version := regexp.MustCompile(`(?m)^CRANK=(\S+)$`).FindSubmatch(script)
	file := regexp.MustCompile(`out="\$cache/(crank-[^"]*)"`).FindSubmatch(script)
	if version == nil || file == nil {
		t.Fatal("cannot find crank's version and cache file name in hack/tool.sh")
	}
	binName := strings.ReplaceAll(string(file[1]), "$CRANK", string(version[1]))
	cache := os.Getenv("BURSTPOOL_BIN_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				t.Fatal(err)
			}
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "burstpool", "bin")
	}
	bin := filepath.Join(cache, binName)
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("crank %s is missing at %s: build it with `hack/tool.sh crank` (5 to 9 minutes the first time)", version[1], bin)
	}
	return bin
}
