// Package ocireg is test harness: it serves an in-memory OCI registry on a
// loopback address and pushes Crossplane packages (.xpkg files) into it, so
// that a local control plane can install burstpool's packages without any
// outside registry.
//
// Clients reach the registry over plain HTTP: go-containerregistry, and so
// Crossplane's package manager, speak HTTP to registries on loopback
// addresses (127.0.0.0/8, localhost) without further configuration.
package ocireg

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/pkg/errors"
)

// Serve starts an in-memory registry listening on addr, which must be a
// loopback address ("127.0.0.1:0" picks a free port). It returns the
// address it listens on ("127.0.0.1:PORT"). The registry runs until stop is
// called or ctx is done; stop blocks until the server has shut down, and may
// be called more than once. Content lives only as long as the server.
func Serve(ctx context.Context, addr string) (string, func(), error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, errors.Wrapf(err, "cannot parse registry address %q", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", nil, errors.Errorf("registry address %q is not a loopback address", addr)
	}
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, errors.Wrapf(err, "cannot listen on %s", addr)
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				_ = srv.Close()
			}
			<-done
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-done:
		}
	}()
	return l.Addr().String(), stop, nil
}

// PushXpkg pushes the package file xpkgPath (an image tarball, as `crank
// xpkg build` writes it) to addr/repo:tag and returns that reference. It is
// idempotent: pushing the same file again leaves the registry unchanged.
func PushXpkg(ctx context.Context, addr, repo, tag, xpkgPath string) (string, error) {
	ref, err := name.NewTag(addr+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		return "", errors.Wrapf(err, "cannot make a reference for %s", xpkgPath)
	}
	img, err := tarball.ImageFromPath(xpkgPath, nil)
	if err != nil {
		return "", errors.Wrapf(err, "cannot read package %s", xpkgPath)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		return "", errors.Wrapf(err, "cannot push package %s to %s", xpkgPath, ref)
	}
	return ref.String(), nil
}

// PushXpkgIndex pushes the package files xpkgPaths, one per platform (as
// `crank xpkg build` writes them with an embedded runtime image of each
// architecture), as one multi-platform index to addr/repo:tag and returns
// that reference. Each package is listed under the platform its config names.
func PushXpkgIndex(ctx context.Context, addr, repo, tag string, xpkgPaths ...string) (string, error) {
	ref, err := name.NewTag(addr+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		return "", errors.Wrap(err, "cannot make a reference for the package index")
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range xpkgPaths {
		img, err := tarball.ImageFromPath(p, nil)
		if err != nil {
			return "", errors.Wrapf(err, "cannot read package %s", p)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return "", errors.Wrapf(err, "cannot read the config of package %s", p)
		}
		if cf.OS == "" || cf.Architecture == "" {
			return "", errors.Errorf("package %s names no platform: it has no runtime image", p)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: cf.Platform()},
		})
	}
	if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx)); err != nil {
		return "", errors.Wrapf(err, "cannot push the package index to %s", ref)
	}
	return ref.String(), nil
}
