// Package apis builds: its go:generate lines write burstpool's CRDs, deep
// copies, the XPool XRD and the Pool field reference. No code of it ships;
// what it writes does.
//
// The Pool CRD in crds/ is the claim's schema: the XRD is generated from it,
// and the API tests install it into a real API server. The QueryService CRD
// goes to examples/crds/ for clusters that run without e6data's operator.
package apis

//go:generate sh -c "$(../hack/tool.sh controller-gen) object paths=./pool/... paths=./queryservice/..."
//go:generate sh -c "$(../hack/tool.sh controller-gen) crd paths=./pool/... output:crd:dir=./crds"
//go:generate sh -c "$(../hack/tool.sh controller-gen) crd paths=./queryservice/... output:crd:dir=../examples/crds"
//go:generate go run ../build/cmd/generate xrd --crd crds/e6data.io_pools.yaml --out definition.yaml
//go:generate go run ../build/cmd/generate reference --crd crds/e6data.io_pools.yaml --out ../docs/pool-reference.md --title "Pool reference"
