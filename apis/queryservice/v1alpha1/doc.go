// Package v1alpha1 ships in the function and the capacity provider: the
// subset of e6data's QueryService (e6data.io/v1alpha1) that burstpool reads,
// and the labels that tie executor pods and nodes to a Pool.
//
// +kubebuilder:object:generate=true
// +groupName=e6data.io
package v1alpha1
