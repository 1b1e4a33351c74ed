package devplane

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/harness/ocireg"
)

// buildPackages builds burstpool's packages for this machine's
// architecture with hack/package.sh into out, with env added to the
// script's environment (REGISTRY and VERSION make a release's), and
// targets as its arguments.
func buildPackages(ctx context.Context, root, out string, env []string, targets ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "package.sh"), targets...) //nolint:gosec // the repository's own script
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "OUTPUT="+out, "PLATFORMS=linux/"+runtime.GOARCH), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hack/package.sh failed: %w\n%s", err, localcp.TailLines(string(b), 30))
	}
	return nil
}

// pushPackages pushes the packages hack/package.sh wrote into dir (for
// this machine's architecture) to the registry at addr, as
// path/NAME:tag, the burstpool-aws Configuration too where dir holds it,
// and returns the references of the three burstpool installs.
func pushPackages(ctx context.Context, addr, path, tag, dir string) (Packages, error) {
	var (
		refs Packages
		err  error
	)
	arch := runtime.GOARCH
	if refs.Configuration, err = ocireg.PushXpkg(ctx, addr, path+"/burstpool", tag, filepath.Join(dir, "burstpool.xpkg")); err != nil {
		return refs, err
	}
	if _, statErr := os.Stat(filepath.Join(dir, "burstpool-aws.xpkg")); statErr == nil {
		if _, err := ocireg.PushXpkg(ctx, addr, path+"/burstpool-aws", tag, filepath.Join(dir, "burstpool-aws.xpkg")); err != nil {
			return refs, err
		}
	}
	if refs.Function, err = ocireg.PushXpkgIndex(ctx, addr, path+"/function-pool-compose", tag, filepath.Join(dir, "function-pool-compose-"+arch+".xpkg")); err != nil {
		return refs, err
	}
	refs.Provider, err = ocireg.PushXpkgIndex(ctx, addr, path+"/provider-burstpool", tag, filepath.Join(dir, "provider-burstpool-"+arch+".xpkg"))
	return refs, err
}

// publish publishes the checkout as release version to the loopback
// registry under the release path: with hack/release.sh, or, with
// Config.ReleaseFor, as hack/package.sh makes the release for ReleaseFor,
// copied to the loopback registry as a mirror holds it (the warmup helper
// image left out: the simulated nodes pull nothing).
func (s *Stack) publish(ctx context.Context, version string) error {
	cfg := s.cfg
	out := filepath.Join(cfg.Dir, "out")
	if cfg.ReleaseFor == "" {
		return release(ctx, cfg.Root, out, s.registry+"/"+cfg.releasePath(), version)
	}
	dir := filepath.Join(out, "mirror", version)
	if err := buildPackages(ctx, cfg.Root, dir, []string{"REGISTRY=" + cfg.ReleaseFor, "VERSION=" + version}, "configuration", "aws", "function", "provider"); err != nil {
		return err
	}
	_, err := pushPackages(ctx, s.registry, cfg.releasePath(), version, filepath.Join(dir, "packages"))
	return err
}

// Release publishes the checkout as a further release, version, beside
// the one Prepare published (Config.Release): a release to upgrade to.
func (s *Stack) Release(ctx context.Context, version string) error {
	if !s.cfg.Release {
		return fmt.Errorf("cannot release %s: the stack installs packages built from the checkout, not a release", version)
	}
	return s.step("publish release "+version, func() error { return s.publish(ctx, version) })
}

// release runs hack/release.sh for this machine's architecture: it builds
// every package for registry and version into out and pushes them, with the
// warmup image, to registry (host:port/burstpool of a loopback registry).
func release(ctx context.Context, root, out, registry, version string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "release.sh")) //nolint:gosec // the repository's own script
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "OUTPUT="+out, "PLATFORMS=linux/"+runtime.GOARCH, "VERSION="+version, "REGISTRY="+registry)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hack/release.sh failed: %w\n%s", err, localcp.TailLines(string(b), 30))
	}
	return nil
}

// goBuild builds pkgs of the repository at root into the folder out.
func goBuild(ctx context.Context, root, out string, pkgs ...string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	args := append([]string{"build", "-o", out + "/"}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build failed: %w\n%s", err, b)
	}
	return nil
}
