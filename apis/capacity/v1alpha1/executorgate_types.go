package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProviderServiceAccount is the name of the capacity provider's service
// account (deploy/provider/runtimeconfig.yaml fixes it): the only identity
// the executor gate's guard lets remove the gate from an executor.
const ProviderServiceAccount = "provider-burstpool"

// DefaultProviderNamespace is the namespace the capacity provider runs in
// when it does not say otherwise: Crossplane's.
const DefaultProviderNamespace = "crossplane-system"

// An ExecutorGateSpec is one pool's executor gate: which new pods the
// static admission policies of deploy/provider/executor-gate.yaml hold at
// Gate, and who may release them.
type ExecutorGateSpec struct {
	// Pool is the Pool claim the gate holds executors of; admission
	// messages name it.
	Pool PoolRef `json:"pool"`

	// Gate is the scheduling gate new executors are admitted with.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	Gate string `json:"gate"`

	// Namespaces are the attached QueryServices' namespaces: only pods
	// created there are gated, and only there are gate removals and
	// executors created bound refused.
	// +kubebuilder:validation:MinItems=1
	// +listType=set
	Namespaces []string `json:"namespaces"`

	// Selector holds the labels of the pool's executors: a pod is gated
	// when it carries every one of them.
	// +kubebuilder:validation:MinProperties=1
	Selector map[string]string `json:"selector"`

	// ProviderNamespace is the namespace of the capacity provider's
	// service account provider-burstpool, the only identity that may
	// remove Gate from an executor.
	// +kubebuilder:default=crossplane-system
	// +kubebuilder:validation:MinLength=1
	// +optional
	ProviderNamespace string `json:"providerNamespace,omitempty"`
}

// +kubebuilder:object:root=true

// An ExecutorGate parameterises the static executor gate admission
// policies (deploy/provider/executor-gate.yaml) for one pool: the capacity
// provider writes one per PoolCapacity that holds executors back, owned by
// the PoolCapacity and labelled with its pool, and the policies' bindings
// select every ExecutorGate as a parameter. Nothing else reads it.
// +kubebuilder:printcolumn:name="POOL",type="string",JSONPath=".spec.pool.name"
// +kubebuilder:printcolumn:name="POOL-NAMESPACE",type="string",JSONPath=".spec.pool.namespace"
// +kubebuilder:printcolumn:name="GATE",type="string",JSONPath=".spec.gate"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:resource:scope=Cluster,categories={burstpool}
type ExecutorGate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ExecutorGateSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// ExecutorGateList contains a list of ExecutorGate.
type ExecutorGateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExecutorGate `json:"items"`
}
