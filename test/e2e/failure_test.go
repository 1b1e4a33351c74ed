package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// TestFailedStartCleansUp starts a control plane whose kwok exits at once:
// Up must fail with kwok's log tail, stop everything it started and leave no
// state behind, and a second Up in the same folder must then work.
func TestFailedStartCleansUp(t *testing.T) {
	t.Parallel()
	bins, err := localcp.ToolBinaries(t.Context(), gomod.RootForTest(t))
	if err != nil {
		t.Fatalf("cannot get the control plane binaries (run `hack/tool.sh all` or `make tools`): %v", err)
	}
	broken := filepath.Join(t.TempDir(), "kwok")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho kwok cannot start: broken on purpose\nexit 3\n"), 0o755); err != nil { //nolint:gosec // an executable test script
		t.Fatal(err)
	}
	bad := bins
	bad.Kwok = broken
	dir := t.TempDir()
	cfg := localcp.Config{Dir: dir, Binaries: bad, SkipKarpenter: true, SkipCrossplane: true, StopWithParent: true}

	c, err := localcp.Up(t.Context(), cfg)
	if err == nil {
		_ = c.Down()
		t.Fatal("Up succeeded with a kwok that exits at once")
	}
	for _, want := range []string{"kwok exited while starting", "broken on purpose"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Up error does not contain %q:\n%v", want, err)
		}
	}
	if _, serr := os.Stat(filepath.Join(dir, "state.json")); !os.IsNotExist(serr) {
		t.Errorf("state.json is left after a failed Up (stat error %v)", serr)
	}

	cfg.Binaries = bins
	c, err = localcp.Up(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Up after a failed Up in the same folder: %v", err)
	}
	t.Cleanup(func() { _ = c.Down() })
	if _, err := localcp.Up(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("a second Up on a running folder: error %v, want one saying it is already running", err)
	}
}
