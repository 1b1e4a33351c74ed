package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group, version and kinds of the Pool API.
const (
	Group   = "e6data.io"
	Version = "v1alpha1"

	// ClaimKind is the namespaced claim tenants create.
	ClaimKind = "Pool"
	// CompositeKind is the cluster-scoped composite resource behind a claim.
	CompositeKind = "XPool"
)

var (
	// SchemeGroupVersion is the group and version of the Pool API.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// CompositeGroupVersionKind is the GVK of XPool.
	CompositeGroupVersionKind = SchemeGroupVersion.WithKind(CompositeKind)

	// ClaimGroupVersionKind is the GVK of Pool.
	ClaimGroupVersionKind = SchemeGroupVersion.WithKind(ClaimKind)
)

// AddToScheme registers Pool and PoolList with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &Pool{}, &PoolList{})
	return nil
}
