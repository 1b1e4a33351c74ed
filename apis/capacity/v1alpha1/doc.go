// Package v1alpha1 ships in the capacity provider and the function: the
// capacity.e6data.io API, PoolCapacity, the managed resource that reports
// what a pool actually holds, the ProviderConfig that tells the provider
// which cluster to watch, and the ExecutorGate, one pool's parameters of the
// static executor gate admission policies.
//
// +kubebuilder:object:generate=true
// +groupName=capacity.e6data.io
// +versionName=v1alpha1
package v1alpha1
