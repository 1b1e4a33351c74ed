// Package input generates the CRD of the function's input into the function
// package.
package input

//go:generate sh -c "$(../../../hack/tool.sh controller-gen) object paths=./v1beta1/..."
//go:generate sh -c "$(../../../hack/tool.sh controller-gen) crd paths=./v1beta1/... output:crd:dir=../../../package/function/input"
//go:generate go run ../../../build/cmd/generate reference --settings --crd ../../../package/function/input/pool.fn.burstpool.io_inputs.yaml --out ../../../docs/settings-reference.md --title "Cluster settings reference"
