// Package pkgmeta is test harness: it reads the dependencies of Crossplane
// package metadata (meta.pkg.crossplane.io Configuration, Function or
// Provider), from a crossplane.yaml or a package's package.yaml.
package pkgmeta

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Dependency is one entry of the metadata's spec.dependsOn.
type Dependency struct {
	Kind    string `json:"kind"`
	Package string `json:"package"`
	Version string `json:"version"`
}

// DependsOn returns spec.dependsOn of the first YAML document of b, the
// package metadata (a package.yaml holds the metadata first, then its
// objects).
func DependsOn(b []byte) ([]Dependency, error) {
	first, _, _ := bytes.Cut(b, []byte("\n---"))
	var meta struct {
		Spec struct {
			DependsOn []Dependency `json:"dependsOn"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(first, &meta); err != nil {
		return nil, fmt.Errorf("cannot read the package metadata: %w", err)
	}
	return meta.Spec.DependsOn, nil
}
