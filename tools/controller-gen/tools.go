//go:build tools

// Package controllergen is build tooling: it pins controller-gen, which writes
// the CRDs and deep copies of burstpool's API types.
package controllergen

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
