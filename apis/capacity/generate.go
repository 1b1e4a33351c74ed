// Package capacity generates the capacity provider's deep copies and CRDs.
//
// The CRDs are written to package/provider/crds, the folder the provider's
// Crossplane package is built from.
package capacity

//go:generate sh -c "$(../../hack/tool.sh controller-gen) object paths=./v1alpha1/..."
//go:generate sh -c "$(../../hack/tool.sh controller-gen) crd paths=./v1alpha1/... output:crd:dir=../../package/provider/crds"
