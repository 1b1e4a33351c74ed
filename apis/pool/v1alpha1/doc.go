// Package v1alpha1 ships in the function and, as the XRD generated from it, in
// the Configuration package: the Pool API (group e6data.io, version v1alpha1),
// a shared, warm, burstable pool of nodes that several QueryServices draw
// executors from. Platform teams create Pools as claims in a namespace; the
// Crossplane XRD in apis/definition.yaml is generated from these types, so the
// schema, its defaults and its admission rules live here only.
//
// +kubebuilder:object:generate=true
// +groupName=e6data.io
// +versionName=v1alpha1
package v1alpha1
