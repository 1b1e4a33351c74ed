// Command imagebuild builds the runtime images of burstpool's packages
// (hack/package.sh runs it): per platform, the OCI runtime image of a Go
// program, built without a container engine as a static binary on an empty
// base, run as 65532:65532. It writes one image tarball per platform (what
// `crank xpkg build --embed-runtime-image-tarball` embeds) and can also write
// or push a multi-platform index of them.
//
//	imagebuild -main ./functions/pool-compose -name function-pool-compose \
//	    -extra /warm=./cmd/warm -platform linux/amd64,linux/arm64 \
//	    -label org.opencontainers.image.source=https://github.com/burstpool/burstpool \
//	    -out _output/images
//
// writes _output/images/function-pool-compose-amd64.tar and
// function-pool-compose-arm64.tar and prints their paths, one a line.
// Timestamps come from -created or SOURCE_DATE_EPOCH (else the Unix epoch),
// so a rebuild of the same source gives the same digests.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/pkg/errors"

	"github.com/burstpool/burstpool/build/image"
)

// list is a flag that may be given many times.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

type options struct {
	main, name, binPath, platforms, user, ldflags, dir, out, tagRepo, layoutDir, push, created string
	extra, labels, args                                                                        list
}

func main() {
	var o options
	flag.StringVar(&o.main, "main", "", "Go main package the image runs, e.g. ./functions/pool-compose (required)")
	flag.StringVar(&o.name, "name", "", "image name, used for file names and the default binary path (default: last element of -main)")
	flag.StringVar(&o.binPath, "path", "", "path of the main binary in the image (default /usr/local/bin/NAME)")
	flag.Var(&o.extra, "extra", "extra program as /path/in/image=./main/package (repeatable), e.g. /warm=./cmd/warm")
	flag.StringVar(&o.platforms, "platform", "linux/amd64,linux/arm64", "comma-separated platforms")
	flag.Var(&o.labels, "label", "image label KEY=VALUE (repeatable)")
	flag.Var(&o.args, "arg", "default argument of the entrypoint (repeatable), e.g. --address=:9443")
	flag.StringVar(&o.user, "user", image.NonRoot, "uid:gid the image runs as")
	flag.StringVar(&o.ldflags, "ldflags", "", "extra -ldflags for every binary, after -s -w")
	flag.StringVar(&o.dir, "dir", ".", "directory the go command runs in (the module root)")
	flag.StringVar(&o.out, "out", "_output/images", "folder for the per-platform tarballs NAME-ARCH.tar")
	flag.StringVar(&o.tagRepo, "tag-repo", "burstpool.local", "repository prefix of the tag recorded in each tarball (REPO/NAME:ARCH)")
	flag.StringVar(&o.layoutDir, "layout", "", "also write an OCI image layout holding the multi-platform index to this folder")
	flag.StringVar(&o.push, "push", "", "also push the multi-platform index to this reference (plain HTTP on loopback)")
	flag.StringVar(&o.created, "created", "", "creation time, RFC 3339 (default: SOURCE_DATE_EPOCH, else the Unix epoch)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.main == "" {
		return errors.New("-main is required")
	}
	if o.name == "" {
		o.name = path.Base(o.main)
	}
	if o.binPath == "" {
		o.binPath = "/usr/local/bin/" + o.name
	}
	created, err := creationTime(o.created)
	if err != nil {
		return err
	}
	labels := map[string]string{}
	for _, l := range o.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return errors.Errorf("label %q: want KEY=VALUE", l)
		}
		labels[k] = v
	}
	spec := image.Spec{
		Main:   image.Program{Package: o.main, Path: o.binPath},
		Config: image.Config{User: o.user, Labels: labels, Created: created, Cmd: o.args},
	}
	for _, e := range o.extra {
		p, err := image.ParseProgram(e)
		if err != nil {
			return err
		}
		spec.Extra = append(spec.Extra, p)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return errors.Wrapf(err, "cannot make output folder %s", o.out)
	}

	c := image.Compiler{Dir: o.dir, LDFlags: o.ldflags}
	var imgs []v1.Image
	for _, ps := range strings.Split(o.platforms, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(ps))
		if err != nil {
			return errors.Wrapf(err, "cannot parse platform %q", ps)
		}
		start := time.Now()
		img, err := c.Image(ctx, spec, *p)
		if err != nil {
			return err
		}
		arch := p.Architecture + p.Variant
		file := filepath.Join(o.out, o.name+"-"+arch+".tar")
		if err := image.WriteTarball(file, o.tagRepo+"/"+o.name+":"+arch, img); err != nil {
			return err
		}
		d, err := img.Digest()
		if err != nil {
			return errors.Wrap(err, "cannot compute image digest")
		}
		fmt.Fprintf(os.Stderr, "imagebuild: %s %s %s (%s)\n", p.String(), file, d, time.Since(start).Round(time.Second))
		fmt.Println(file)
		imgs = append(imgs, img)
	}
	if o.layoutDir == "" && o.push == "" {
		return nil
	}
	idx, err := image.Index(imgs...)
	if err != nil {
		return err
	}
	if o.layoutDir != "" {
		lp, err := layout.Write(o.layoutDir, empty.Index)
		if err != nil {
			return errors.Wrapf(err, "cannot write OCI layout %s", o.layoutDir)
		}
		if err := lp.AppendIndex(idx); err != nil {
			return errors.Wrapf(err, "cannot write OCI layout %s", o.layoutDir)
		}
	}
	if o.push != "" {
		ref, err := name.ParseReference(o.push)
		if err != nil {
			return errors.Wrapf(err, "cannot parse reference %q", o.push)
		}
		if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return errors.Wrapf(err, "cannot push %s", o.push)
		}
		fmt.Fprintf(os.Stderr, "imagebuild: pushed %s\n", ref)
	}
	return nil
}

// creationTime reads -created, else SOURCE_DATE_EPOCH, else the epoch.
func creationTime(flagValue string) (time.Time, error) {
	if flagValue != "" {
		t, err := time.Parse(time.RFC3339, flagValue)
		return t, errors.Wrapf(err, "cannot parse -created %q", flagValue)
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, errors.Wrapf(err, "cannot parse SOURCE_DATE_EPOCH %q", s)
		}
		return time.Unix(sec, 0), nil
	}
	return time.Unix(0, 0), nil
}
