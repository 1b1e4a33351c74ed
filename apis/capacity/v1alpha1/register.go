package v1alpha1

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of the capacity API.
const (
	Group   = "capacity.e6data.io"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is the group and version of the capacity API.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the capacity types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds the capacity types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kinds, group kinds and GVKs of the capacity API.
var (
	PoolCapacityKind             = reflect.TypeOf(PoolCapacity{}).Name()
	PoolCapacityGroupKind        = schema.GroupKind{Group: Group, Kind: PoolCapacityKind}.String()
	PoolCapacityGroupVersionKind = SchemeGroupVersion.WithKind(PoolCapacityKind)

	ProviderConfigKind             = reflect.TypeOf(ProviderConfig{}).Name()
	ProviderConfigGroupVersionKind = SchemeGroupVersion.WithKind(ProviderConfigKind)

	ProviderConfigUsageKind                 = reflect.TypeOf(ProviderConfigUsage{}).Name()
	ProviderConfigUsageGroupVersionKind     = SchemeGroupVersion.WithKind(ProviderConfigUsageKind)
	ProviderConfigUsageListKind             = reflect.TypeOf(ProviderConfigUsageList{}).Name()
	ProviderConfigUsageListGroupVersionKind = SchemeGroupVersion.WithKind(ProviderConfigUsageListKind)

	ExecutorGateKind             = reflect.TypeOf(ExecutorGate{}).Name()
	ExecutorGateGroupVersionKind = SchemeGroupVersion.WithKind(ExecutorGateKind)
)

func init() {
	SchemeBuilder.Register(&PoolCapacity{}, &PoolCapacityList{})
	SchemeBuilder.Register(&ProviderConfig{}, &ProviderConfigList{})
	SchemeBuilder.Register(&ProviderConfigUsage{}, &ProviderConfigUsageList{})
	SchemeBuilder.Register(&ExecutorGate{}, &ExecutorGateList{})
}
