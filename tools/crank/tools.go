//go:build tools

// Package crank is build and test tooling: it pins the Crossplane CLI (xpkg
// build for the packages; render and beta validate for the tests).
package crank

import _ "github.com/crossplane/crossplane/v2/cmd/crank"
