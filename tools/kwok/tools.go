//go:build tools

// Package kwok is test tooling: it pins kwok, which makes fake Nodes Ready and
// bound Pods Running.
package kwok

import _ "sigs.k8s.io/kwok/cmd/kwok"
