package ocireg

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// LayerEntry is one entry of an image layer: its tar header and content.
type LayerEntry struct {
	Header *tar.Header
	Data   []byte
}

// Layer reads every entry of img's layer i (0 is the bottom layer), in the
// layer's order, content included.
func Layer(img v1.Image, i int) ([]LayerEntry, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(layers) {
		return nil, fmt.Errorf("image has %d layers, no layer %d", len(layers), i)
	}
	rc, err := layers[i].Uncompressed()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	var out []LayerEntry
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("layer %d, %s: %w", i, h.Name, err)
		}
		out = append(out, LayerEntry{Header: h, Data: b})
	}
}
