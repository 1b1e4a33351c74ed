// Package v1alpha1 ships in the capacity provider and the function: the
// capacity.e6data.io API, PoolCapacity, the managed resource that reports
// what a pool actually holds, and the ProviderConfig that tells the provider
// which cluster to watch.
//
// +kubebuilder:object:generate=true
// +groupName=capacity.e6data.io
// +versionName=v1alpha1
package v1alpha1
