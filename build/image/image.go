// Package image builds the runtime images of burstpool's packages: OCI images
// of static Go programs, assembled without a container engine, of one layer of
// files on an empty base, a non-root user and an entrypoint. The same files and
// configuration always give the same image digest, because every timestamp in
// the image is the one the caller names.
package image

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/pkg/errors"
)

// NonRoot is the user and group an image runs as unless its Config names
// another: the conventional "nonroot" ids of distroless images, numeric so
// that the kubelet can check runAsNonRoot without reading /etc/passwd.
const NonRoot = "65532:65532"

// File is one regular file of an image.
type File struct {
	// Path is where the file sits in the image, absolute: /usr/local/bin/x.
	Path string
	// Mode holds the permission bits, for example 0o755.
	Mode int64
	// Data is the file's content.
	Data []byte
}

// Config describes an image apart from its files.
type Config struct {
	// Platform is the operating system and architecture the files run on.
	Platform v1.Platform
	// Entrypoint is the command the image runs.
	Entrypoint []string
	// Cmd holds the entrypoint's default arguments, which a pod's args
	// replace. Images of network programs pass the in-pod listen addresses
	// here, since the programs themselves default to loopback.
	Cmd []string
	// User is "uid:gid"; empty means NonRoot.
	User string
	// Env holds KEY=VALUE entries; PATH is set when missing.
	Env []string
	// Labels are the image's config labels (org.opencontainers.image.*).
	Labels map[string]string
	// Created is the time written into the config, the history and every
	// file header. The zero time means the Unix epoch.
	Created time.Time
}

// BaseFiles are the files every image holds besides its programs: account
// entries for root and the non-root user, so that programs that look up
// their user find one.
func BaseFiles() []File {
	return []File{
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{Path: "/etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnonroot:x:65532:\n")},
	}
}

// Build returns an image of one layer that holds files (and their parent
// directories, plus a world-writable /tmp) on an empty base, with the OCI
// media types. Build is deterministic: equal arguments give equal digests.
func Build(files []File, cfg Config) (v1.Image, error) {
	created := cfg.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC().Truncate(time.Second)
	if cfg.Platform.OS == "" || cfg.Platform.Architecture == "" {
		return nil, errors.New("image platform needs an OS and an architecture")
	}
	if len(cfg.Entrypoint) == 0 {
		return nil, errors.New("image needs an entrypoint")
	}

	data, err := layerTar(files, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, errors.Wrap(err, "cannot make image layer")
	}

	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "imagebuild: " + strings.Join(cfg.Entrypoint, " "),
		},
	})
	if err != nil {
		return nil, errors.Wrap(err, "cannot add image layer")
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, errors.Wrap(err, "cannot read image config")
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: created}
	cf.OS = cfg.Platform.OS
	cf.Architecture = cfg.Platform.Architecture
	cf.Variant = cfg.Platform.Variant
	cf.OSVersion = cfg.Platform.OSVersion
	user := cfg.User
	if user == "" {
		user = NonRoot
	}
	env := append([]string(nil), cfg.Env...)
	if !hasKey(env, "PATH") {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	cf.Config = v1.Config{
		User:       user,
		Entrypoint: append([]string(nil), cfg.Entrypoint...),
		Cmd:        append([]string(nil), cfg.Cmd...),
		Env:        env,
		WorkingDir: "/",
		Labels:     cfg.Labels,
	}
	img, err = mutate.ConfigFile(img, cf)
	return img, errors.Wrap(err, "cannot set image config")
}

func hasKey(env []string, key string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, key+"=") {
			return true
		}
	}
	return false
}

// layerTar writes files, their parent directories and /tmp into a tar
// stream, sorted by path, owned by root, all stamped with created.
func layerTar(files []File, created time.Time) ([]byte, error) {
	dirs := map[string]int64{"tmp": 0o1777}
	byPath := map[string]File{}
	for _, f := range files {
		p := strings.TrimPrefix(path.Clean("/"+f.Path), "/")
		if p == "" || !path.IsAbs(f.Path) {
			return nil, errors.Errorf("image file path %q must be absolute and name a file", f.Path)
		}
		if _, dup := byPath[p]; dup {
			return nil, errors.Errorf("image file %q is given twice", f.Path)
		}
		byPath[p] = f
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := dirs[d]; !ok {
				dirs[d] = 0o755
			}
		}
	}
	for p := range byPath {
		if _, ok := dirs[p]; ok {
			return nil, errors.Errorf("image path /%s is both a file and a directory", p)
		}
	}

	names := make([]string, 0, len(dirs)+len(byPath))
	for d := range dirs {
		names = append(names, d)
	}
	for p := range byPath {
		names = append(names, p)
	}
	sort.Strings(names)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		h := &tar.Header{Name: n, ModTime: created, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		var data []byte
		if mode, ok := dirs[n]; ok {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, n+"/", mode
		} else {
			f := byPath[n]
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, f.Mode, int64(len(f.Data))
			data = f.Data
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, errors.Wrapf(err, "cannot write %s to image layer", n)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, errors.Wrapf(err, "cannot write %s to image layer", n)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, errors.Wrap(err, "cannot finish image layer")
	}
	return buf.Bytes(), nil
}

// Index returns an OCI image index of imgs, each listed under the platform
// its config names. Pushing the index gives one reference that each node
// resolves to the image of its own architecture.
func Index(imgs ...v1.Image) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, errors.Wrap(err, "cannot read image config")
		}
		p := cf.Platform()
		if p == nil {
			return nil, errors.New("image config names no platform")
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: p},
		})
	}
	return idx, nil
}

// WriteTarball writes img to path as an image tarball tagged tag (the format
// `crank xpkg build --embed-runtime-image-tarball` and `docker load` read).
// Such a tarball records the config and the layers but no manifest: readers
// rebuild the manifest with Docker media types, so the image read back has
// the same config and layers as img under another manifest digest. The file
// is replaced only once it is complete.
func WriteTarball(path, tag string, img v1.Image) error {
	ref, err := name.NewTag(tag, name.StrictValidation)
	if err != nil {
		return errors.Wrapf(err, "cannot parse image tag %q", tag)
	}
	tmp := path + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		_ = os.Remove(tmp)
		return errors.Wrapf(err, "cannot write image tarball %s", path)
	}
	return errors.Wrapf(os.Rename(tmp, path), "cannot write image tarball %s", path)
}
