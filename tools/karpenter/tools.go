//go:build tools

// Package karpenter is test tooling: it pins Karpenter with its kwok cloud
// provider, which the local control plane runs.
package karpenter

import _ "sigs.k8s.io/karpenter/kwok"
