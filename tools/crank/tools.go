//go:build tools

// Package crank pins the Crossplane CLI (render, beta validate, xpkg build).
package crank

import _ "github.com/crossplane/crossplane/v2/cmd/crank"
