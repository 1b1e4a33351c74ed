package devplane

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/harness/ocireg"
)

// PublishProvider packs a Provider package named name that holds the CRD
// files crds and no runtime image (crank, as a provider's own build packs
// its package) and pushes it to the loopback registry as repo:tag: the
// copy a mirror holds of a third-party provider that an installation
// pulls as a dependency, whose controller the caller plays. It returns
// the package's reference.
func (s *Stack) PublishProvider(ctx context.Context, name, repo, tag string, crds ...string) (string, error) {
	var ref string
	err := s.step("publish a stand-in of "+repo+":"+tag, func() error {
		dir := filepath.Join(s.cfg.Dir, "standins", name)
		stage := filepath.Join(dir, "package")
		if err := os.MkdirAll(stage, 0o755); err != nil {
			return err
		}
		meta := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: " + name + "\n"
		if err := os.WriteFile(filepath.Join(stage, "crossplane.yaml"), []byte(meta), 0o644); err != nil { //nolint:gosec // a package staging copy
			return err
		}
		for _, f := range crds {
			b, err := os.ReadFile(f) //nolint:gosec // CRD files the caller names
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(stage, filepath.Base(f)), b, 0o644); err != nil { //nolint:gosec // a package staging copy
				return err
			}
		}
		xpkg := filepath.Join(dir, name+".xpkg")
		if err := crankBuild(ctx, s.cfg.Root, stage, xpkg); err != nil {
			return err
		}
		var err error
		ref, err = ocireg.PushXpkg(ctx, s.registry, repo, tag, xpkg)
		return err
	})
	return ref, err
}

// crankBuild packs the package staged in stage (its examples in
// stage/examples) into the file xpkg with crank, as hack/package.sh does.
func crankBuild(ctx context.Context, root, stage, xpkg string) error {
	crank, err := localcp.Tool(ctx, root, "crank")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, crank, "xpkg", "build", "--package-root", stage, "--examples-root", filepath.Join(stage, "examples"), "--package-file", xpkg) //nolint:gosec // pinned tool
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("crank xpkg build failed: %w\n%s", err, out)
	}
	return nil
}
