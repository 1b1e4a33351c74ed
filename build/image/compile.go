package image

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/pkg/errors"
)

// Program is a Go main package and where its binary sits in an image.
type Program struct {
	// Package is the main package as the go command names it, for example
	// ./functions/pool-compose, resolved in the Compiler's Dir.
	Package string
	// Path is the binary's absolute path in the image, e.g. /warm.
	Path string
}

// ParseProgram parses "PATH=PACKAGE", for example "/warm=./cmd/warm".
func ParseProgram(s string) (Program, error) {
	p, pkg, ok := strings.Cut(s, "=")
	if !ok || !path.IsAbs(p) || pkg == "" {
		return Program{}, errors.Errorf("program %q: want /path/in/image=./go/main/package", s)
	}
	return Program{Package: pkg, Path: p}, nil
}

// A Compiler cross-compiles Go main packages with the go command into
// static binaries: CGO_ENABLED=0, -trimpath, -ldflags "-s -w", no VCS
// stamp, so that the same source gives the same bytes on any machine.
type Compiler struct {
	// Dir is the directory the go command runs in (the module's root).
	Dir string
	// Go is the go command; empty means "go" on PATH.
	Go string
	// LDFlags are appended to "-s -w -buildid=", e.g. "-X main.version=v1".
	LDFlags string
}

// Compile builds pkg for platform p and returns the binary. It blocks until
// the go command exits; the go command's output is part of the error.
func (c Compiler) Compile(ctx context.Context, pkg string, p v1.Platform) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "imagebuild-")
	if err != nil {
		return nil, errors.Wrap(err, "cannot make a folder for the binary")
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	out := filepath.Join(tmp, "bin")

	goCmd := c.Go
	if goCmd == "" {
		goCmd = "go"
	}
	ldflags := strings.TrimSpace("-s -w -buildid= " + c.LDFlags)
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, pkg)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if p.Architecture == "arm" && p.Variant != "" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, errors.Wrapf(err, "cannot build %s for %s: %s", pkg, p.String(), strings.TrimSpace(stderr.String()))
	}
	b, err := os.ReadFile(out) //nolint:gosec // G304: the path is in a folder this function made.
	return b, errors.Wrapf(err, "cannot read the binary of %s", pkg)
}

// Spec describes a runtime image: its main program, the programs that ride
// along (the warmup helper /warm), and its labels.
type Spec struct {
	// Main is the program the image runs (its entrypoint).
	Main Program
	// Extra programs are copied into the image beside Main.
	Extra []Program
	// Config supplies the user, environment, labels and creation time; its
	// Platform and Entrypoint are set by Image.
	Config Config
}

// Image compiles every program of s for platform p and assembles them, with
// BaseFiles, into one image (see Build).
func (c Compiler) Image(ctx context.Context, s Spec, p v1.Platform) (v1.Image, error) {
	files := BaseFiles()
	for _, prog := range append([]Program{s.Main}, s.Extra...) {
		if !path.IsAbs(prog.Path) {
			return nil, errors.Errorf("program %s: image path %q is not absolute", prog.Package, prog.Path)
		}
		b, err := c.Compile(ctx, prog.Package, p)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: prog.Path, Mode: 0o755, Data: b})
	}
	cfg := s.Config
	cfg.Platform = p
	cfg.Entrypoint = []string{s.Main.Path}
	img, err := Build(files, cfg)
	return img, errors.Wrapf(err, "cannot assemble the image of %s for %s", s.Main.Package, p.String())
}
