//go:build tools

// Package golangcilint is test tooling: it pins golangci-lint, which make
// verify runs.
package golangcilint

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
