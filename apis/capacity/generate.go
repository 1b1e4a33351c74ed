// Package capacity builds: its go:generate lines write the capacity
// provider's deep copies and CRDs. No code of it ships; what it writes does.
//
// The CRDs are written to package/provider/crds, the folder the provider's
// Crossplane package is built from.
package capacity

//go:generate sh -c "$(../../hack/tool.sh controller-gen) object paths=./v1alpha1/..."
//go:generate sh -c "$(../../hack/tool.sh controller-gen) crd paths=./v1alpha1/... output:crd:dir=../../package/provider/crds"
