//go:build tools

// Package crossplane is test tooling: it pins Crossplane core, run out of
// cluster by the end-to-end suite and by make demo.
package crossplane

import _ "github.com/crossplane/crossplane/v2/cmd/crossplane"
