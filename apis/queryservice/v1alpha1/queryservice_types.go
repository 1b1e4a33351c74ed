package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// QueryService is the subset of e6data's QueryService that burstpool reads.
// Real QueryServices carry many more fields; the CRD shipped for clusters
// without e6data's operator preserves them, and decoding ignores them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=qs,categories=e6data
// +kubebuilder:subresource:status
type QueryService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec QueryServiceSpec `json:"spec,omitempty"`

	// Status is owned by e6data's operator; burstpool does not read it.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`
}

// QueryServiceList is a list of QueryServices.
//
// +kubebuilder:object:root=true
type QueryServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []QueryService `json:"items"`
}

// QueryServiceSpec holds the executor settings burstpool reads.
//
// +kubebuilder:pruning:PreserveUnknownFields
type QueryServiceSpec struct {
	// Executor describes the QueryService's executors.
	// +optional
	Executor Executor `json:"executor,omitempty"`
}

// Executor describes a QueryService's executors.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Executor struct {
	// Image of the executor container. Pools with autoCollectImages keep it
	// warm on their nodes.
	// +optional
	Image string `json:"image,omitempty"`

	// Replicas is the number of regular executors, on the QueryService's own
	// nodes.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Resources one executor requests. Pool nodes must fit executorsPerNode
	// of them.
	// +optional
	Resources ExecutorResources `json:"resources,omitempty"`

	// InstanceType of the QueryService's regular nodes; pools that inherit
	// node configuration from this QueryService use it.
	// +optional
	InstanceType string `json:"instanceType,omitempty"`

	// NodeSelector of the executor pods. A kubernetes.io/arch entry sets the
	// architecture of the pools the QueryService attaches to when they name
	// no instance type, family or architecture.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// PoolRef names the Pool the QueryService bursts onto.
	// +optional
	PoolRef *PoolReference `json:"poolRef,omitempty"`

	// Autoscaling bounds the executor count.
	// +optional
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
}

// ExecutorResources is one executor's request.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ExecutorResources struct {
	// CPU one executor requests.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// Memory one executor requests.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// PoolReference names a Pool claim.
type PoolReference struct {
	// Name of the Pool.
	Name string `json:"name"`

	// Namespace of the Pool. Defaults to the QueryService's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// Autoscaling bounds a QueryService's executors.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Autoscaling struct {
	// Enabled turns executor autoscaling on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// MaxExecutors is the most executors the QueryService scales to, regular
	// and pool together.
	// +optional
	MaxExecutors *int32 `json:"maxExecutors,omitempty"`
}

// GroupVersionKind of QueryService.
var GroupVersionKind = schema.GroupVersionKind{Group: "e6data.io", Version: "v1alpha1", Kind: "QueryService"}

// AddToScheme registers QueryService and QueryServiceList with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	gv := GroupVersionKind.GroupVersion()
	s.AddKnownTypes(gv, &QueryService{}, &QueryServiceList{})
	metav1.AddToGroupVersion(s, gv)
	return nil
}
