package devplane

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// buildPackages builds burstpool's packages for this machine's
// architecture with hack/package.sh into out.
func buildPackages(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "package.sh")) //nolint:gosec // the repository's own script
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "OUTPUT="+out, "PLATFORMS=linux/"+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hack/package.sh failed: %w\n%s", err, localcp.TailLines(string(b), 30))
	}
	return nil
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
