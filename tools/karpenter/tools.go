//go:build tools

// Package karpenter pins Karpenter with its kwok cloud provider.
package karpenter

import _ "sigs.k8s.io/karpenter/kwok"
