//go:build tools

// Package providerkubernetes pins crossplane-contrib's provider-kubernetes,
// which applies a remote pool's objects to its workload cluster.
package providerkubernetes

import _ "github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
