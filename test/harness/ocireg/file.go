package ocireg

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// File reads the file at path (absolute, as the image holds it, such as
// /usr/local/bin/provider-burstpool) of the image ref pulls for platform
// (an index's image for it, or ref's image itself): the file of the
// image's flattened filesystem, so an upper layer's copy wins. It is what a
// container runtime would run from that image.
func File(ctx context.Context, ref string, platform v1.Platform, path string) ([]byte, error) {
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return nil, fmt.Errorf("cannot parse image reference %q: %w", ref, err)
	}
	img, err := remote.Image(r, remote.WithContext(ctx), remote.WithPlatform(platform))
	if err != nil {
		return nil, fmt.Errorf("cannot pull %s for %s: %w", ref, platform.String(), err)
	}
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	want := strings.TrimPrefix(path, "/")
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("image %s holds no %s", ref, path)
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read the filesystem of %s: %w", ref, err)
		}
		if strings.TrimPrefix(h.Name, "/") == want && h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("cannot read %s of %s: %w", path, ref, err)
			}
			return b, nil
		}
	}
}
