package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PoolPhase summarizes where a pool is in its life.
//
// +kubebuilder:validation:Enum=Pending;Creating;Active;Suspending;Suspended;Resuming;Failed;Deleting
type PoolPhase string

// Pool phases.
const (
	// PhasePending: the pool cannot be provisioned yet; Message says why
	// (for example a non-Karpenter cluster without nodeSelector).
	PhasePending PoolPhase = "Pending"
	// PhaseCreating: the NodePool, NodeClass or DaemonSets are not ready yet.
	PhaseCreating PoolPhase = "Creating"
	// PhaseActive: the pool can run executors.
	PhaseActive PoolPhase = "Active"
	// PhaseSuspending: suspend was asked for and capacity is draining.
	PhaseSuspending PoolPhase = "Suspending"
	// PhaseSuspended: no new capacity; warm images are kept.
	PhaseSuspended PoolPhase = "Suspended"
	// PhaseResuming: suspend was lifted and capacity is coming back.
	PhaseResuming PoolPhase = "Resuming"
	// PhaseFailed: the pool cannot be rendered; Message says what to fix.
	PhaseFailed PoolPhase = "Failed"
	// PhaseDeleting: the pool is being deleted.
	PhaseDeleting PoolPhase = "Deleting"
)

// PoolStatus is what burstpool observed and decided about a pool.
type PoolStatus struct {
	// Phase summarizes the pool's state.
	// +optional
	Phase PoolPhase `json:"phase,omitempty"`

	// Message explains the phase in words a person can act on.
	// +optional
	Message string `json:"message,omitempty"`

	// Cloud the pool runs on (detected, or from spec.provisioning).
	// +optional
	Cloud string `json:"cloud,omitempty"`

	// ProvisioningMethod that creates the pool's nodes.
	// +optional
	ProvisioningMethod string `json:"provisioningMethod,omitempty"`

	// DerivedInstanceType is the instance type the pool's nodes use.
	// +optional
	DerivedInstanceType string `json:"derivedInstanceType,omitempty"`

	// DerivedFrom says where DerivedInstanceType came from, for example
	// spec.instanceConfig.instanceType or QueryService/ns/name.
	// +optional
	DerivedFrom string `json:"derivedFrom,omitempty"`

	// TotalExecutors is the number of executor slots on Ready pool nodes,
	// capped at maxExecutors. It and the four counts below are absent
	// while the PoolCapacity's figures are not current (condition
	// CapacityObserved False with reason Stale, which says since when):
	// unknown, rather than numbers that may be wrong.
	// +optional
	TotalExecutors int32 `json:"totalExecutors"`

	// AvailableExecutors is TotalExecutors minus OccupiedExecutors.
	// +optional
	AvailableExecutors int32 `json:"availableExecutors"`

	// OccupiedExecutors is the number of pool executors running.
	// +optional
	OccupiedExecutors int32 `json:"occupiedExecutors"`

	// PendingExecutors is the number of pool executors waiting for a node.
	// +optional
	PendingExecutors int32 `json:"pendingExecutors"`

	// CurrentNodes is the number of Ready pool nodes.
	// +optional
	CurrentNodes int32 `json:"currentNodes"`

	// NodePoolName is the Karpenter NodePool (or cloud node pool) of the pool.
	// +optional
	NodePoolName string `json:"nodePoolName,omitempty"`

	// NodeClassName is the cloud NodeClass of the pool.
	// +optional
	NodeClassName string `json:"nodeClassName,omitempty"`

	// Allocations are the pool executors each QueryService holds.
	// +listType=atomic
	// +optional
	Allocations []Allocation `json:"allocations,omitempty"`

	// CachedImages are the images kept warm on pool nodes.
	// +listType=atomic
	// +optional
	CachedImages []CachedImage `json:"cachedImages,omitempty"`

	// AttachedQueryServices are the QueryServices that point at the pool,
	// with whether their executors fit its nodes.
	// +listType=atomic
	// +optional
	AttachedQueryServices []AttachedQueryService `json:"attachedQueryServices,omitempty"`

	// ExecutorScheduling is what a pool executor pod must carry to run on
	// the pool's nodes: every label, node selector entry and toleration
	// listed here, whatever taints spec.tolerations adds (a burstpool
	// extension; docs/queryservice.md describes the contract). Empty while
	// nothing picks the pool's nodes.
	// +optional
	ExecutorScheduling *ExecutorScheduling `json:"executorScheduling,omitempty"`

	// ExecutorFailures counts the pool executors whose latest failures the
	// pool's capacity reports (at most 20), by reason: OOMKilled,
	// ImagePullError, CrashLoopBackOff, ContainerConfigError, Evicted,
	// Disrupted, NodeLost or Error. The pool's PoolCapacity lists them with
	// their messages. A burstpool extension.
	// +listType=atomic
	// +optional
	ExecutorFailures []ExecutorFailureCount `json:"executorFailures,omitempty"`

	// UnauthorizedExecutors are pool executors of QueryServices that are
	// not attached to the pool, at most 20. A burstpool extension.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +optional
	UnauthorizedExecutors []UnauthorizedExecutor `json:"unauthorizedExecutors,omitempty"`

	// Sizing explains the pool's instance types: whether the type is
	// locked, the architecture and why, and every type the nodes may use
	// with how many executors each holds. A burstpool extension.
	// +optional
	Sizing *SizingStatus `json:"sizing,omitempty"`

	// Cost is what the pool's nodes cost now, per hour: in all, for each
	// attached QueryService (the share of nodes its executors request),
	// for warm slots (kept idle on purpose: placeholders, minExecutors)
	// and for waste (empty nodes), as the pool's PoolCapacity counts it
	// (docs/capacity.md). A burstpool extension.
	// +optional
	Cost *PoolCost `json:"cost,omitempty"`

	// WarmCapacity says what holds the pool's warm slots (minExecutors, or
	// the warm level of spec.warmPolicy):
	// low-priority placeholder pods, or a CapacityBuffer
	// (autoscaling.x-k8s.io) that an autoscaler keeps capacity for, and,
	// while the pool waits for an autoscaler to act on its CapacityBuffer,
	// since when. The WarmCapacity condition says why. A burstpool
	// extension.
	// +optional
	WarmCapacity *WarmCapacityStatus `json:"warmCapacity,omitempty"`

	// WarmPolicy says which policy set the pool's warm level now, why,
	// until when, and what the warm slots cost per hour; set when
	// spec.warmPolicy is. A burstpool extension.
	// +optional
	WarmPolicy *WarmPolicyStatus `json:"warmPolicy,omitempty"`
}

// Sources of a pool's warm level (status.warmPolicy.source).
const (
	// WarmFromMinExecutors: minExecutors set the level.
	WarmFromMinExecutors = "MinExecutors"
	// WarmFromWindow: an open window (or one opening within the lead
	// time) set it.
	WarmFromWindow = "Window"
	// WarmFromLearned: the capacity provider's learned level set it.
	WarmFromLearned = "Learned"
)

// WarmPolicyStatus is the warm level a pool holds now and why.
type WarmPolicyStatus struct {
	// Type is the pool's spec.warmPolicy.type.
	Type string `json:"type"`
	// Executors is the warm level now: the slots kept warm, running
	// executors included (warmCapacity.slots is what is left of it once
	// they are counted).
	Executors int32 `json:"executors"`
	// Source is what set the level: MinExecutors, Window or Learned.
	// +kubebuilder:validation:Enum=MinExecutors;Window;Learned
	Source string `json:"source"`
	// Reason says in a sentence why the level is what it is: the window or
	// the learned recommendation, and any cap that bound it.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Until is when the level is next revised: a window's lead before it
	// opens, its close, or when the learned level is next asked for;
	// absent while nothing on the clock changes it.
	// +optional
	Until *metav1.Time `json:"until,omitempty"`
	// DollarsPerHour is what the warm level's slots cost per hour, a
	// decimal: executors times the price of one slot, as the capacity
	// provider prices one for a learned level's cap (the highest hourly
	// price of the pool's node types, divided by executorsPerNode);
	// absent while no price is known.
	// +optional
	DollarsPerHour string `json:"dollarsPerHour,omitempty"`
}

// WarmCapacityStatus is what holds a pool's warm slots.
type WarmCapacityStatus struct {
	// Method holds the warm slots: Placeholders or CapacityBuffer.
	// +kubebuilder:validation:Enum=Placeholders;CapacityBuffer
	Method string `json:"method"`
	// Slots are the warm slots held now: the warm level (minExecutors, or
	// warmPolicy.executors under a warm policy) less the executors
	// running, zero while suspended or while no executor size is known.
	Slots int32 `json:"slots"`
	// CapacityBuffer names the pool's CapacityBuffer, in the pool's
	// namespace, when one is composed (with zero replicas while
	// placeholders hold the slots).
	// +optional
	CapacityBuffer string `json:"capacityBuffer,omitempty"`
	// AwaitingSince is when the pool began waiting for an autoscaler to
	// process its CapacityBuffer's current spec; absent while none waits.
	// +optional
	AwaitingSince *metav1.Time `json:"awaitingSince,omitempty"`
}

// PoolCost is what a pool's nodes cost now and since counting began, in
// US dollars (decimals in strings).
type PoolCost struct {
	// DollarsPerHour is what the pool's nodes cost now.
	DollarsPerHour string `json:"dollarsPerHour"`
	// WarmDollarsPerHour is what its warm slots cost now: the price of
	// keeping capacity ready for a burst.
	WarmDollarsPerHour string `json:"warmDollarsPerHour"`
	// WasteDollarsPerHour is what its empty nodes cost now.
	WasteDollarsPerHour string `json:"wasteDollarsPerHour"`
	// Dollars is what the pool's nodes cost since counting began.
	Dollars string `json:"dollars"`
	// WarmDollars is what its warm slots cost since counting began.
	WarmDollars string `json:"warmDollars"`
	// WasteDollars is what its empty nodes cost since counting began.
	WasteDollars string `json:"wasteDollars"`
	// Since is when counting began.
	Since metav1.Time `json:"since"`
	// QueryServices are the attached QueryServices, and any other whose
	// executors ran on the pool, with what they cost.
	// +listType=atomic
	// +optional
	QueryServices []QueryServiceCost `json:"queryServices,omitempty"`
	// ExecutorStarts is what warm slots buy, measured: the median time
	// from an executor's creation to running, on nodes that were there
	// before it and on nodes launched for it, beside WarmDollarsPerHour.
	// +kubebuilder:validation:MaxItems=2
	// +listType=atomic
	// +optional
	ExecutorStarts []ExecutorStartSummary `json:"executorStarts,omitempty"`
}

// ExecutorStartSummary is how long the pool's executors of one placement
// took to start.
type ExecutorStartSummary struct {
	// Placement is ExistingNode (a node there before the executor: a warm
	// slot or room on a used node) or NewNode (a node launched for it).
	Placement string `json:"placement"`
	// Executors is how many executors were counted.
	Executors int64 `json:"executors"`
	// P50Seconds is their median time from creation to running, in
	// seconds (a decimal).
	P50Seconds string `json:"p50Seconds"`
}

// QueryServiceCost is what one QueryService's use of a pool costs.
type QueryServiceCost struct {
	QueryService QueryServiceReference `json:"queryService"`
	// DollarsPerHour is what its executors' share of the pool's nodes
	// costs now.
	DollarsPerHour string `json:"dollarsPerHour"`
	// Dollars is what its share cost since counting began.
	Dollars string `json:"dollars"`
}

// ExecutorScheduling is the part of a pool executor's pod spec that the
// pool decides.
type ExecutorScheduling struct {
	// Labels every pool executor pod carries: the pool's name and
	// namespace and the pool executor type. The QueryService operator adds
	// e6data.io/query-service.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// NodeSelector picks the pool's nodes.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of every taint the pool puts on its nodes: the three
	// identity taints (name and namespace NoSchedule, name NoExecute) and
	// spec.tolerations (at most 32).
	// +kubebuilder:validation:MaxItems=35
	// +listType=atomic
	// +optional
	Tolerations []Toleration `json:"tolerations,omitempty"`

	// Annotations every pool executor pod carries so that its node is not
	// taken from under it while it runs: karpenter.sh/do-not-disrupt
	// "true" where Karpenter provisions the pool's nodes, and
	// cluster-autoscaler.kubernetes.io/safe-to-evict "false" where a
	// Cluster Autoscaler scales them (LKE, DOKS, CoreWeave). The pool's
	// placeholders never carry them.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SizingStatus is how burstpool sized the pool.
type SizingStatus struct {
	// ExecutorsHaveRun is true once an executor has run on the pool. From
	// then on the instance type changes only with
	// spec.instanceConfig.autoUpgrade, and only upward.
	// +optional
	ExecutorsHaveRun bool `json:"executorsHaveRun,omitempty"`

	// Kept says why the pool kept its type rather than the one its
	// attached QueryServices alone would get.
	// +optional
	Kept string `json:"kept,omitempty"`

	// Architecture of the pool's nodes, and ArchitectureFrom where it came
	// from.
	// +optional
	Architecture string `json:"architecture,omitempty"`
	// +optional
	ArchitectureFrom string `json:"architectureFrom,omitempty"`

	// ExecutorsPerNode is how many executors of the largest compatible
	// QueryService one node of the derived type holds.
	// +optional
	ExecutorsPerNode int32 `json:"executorsPerNode,omitempty"`

	// InstanceTypes are the types the pool's nodes may use, the derived
	// type first.
	// +listType=atomic
	// +optional
	InstanceTypes []OfferedInstanceType `json:"instanceTypes,omitempty"`
}

// OfferedInstanceType is one type the pool's nodes may use.
type OfferedInstanceType struct {
	// Name of the instance type.
	Name string `json:"name"`

	// ExecutorsPerNode is how many executors of the largest compatible
	// QueryService one node of it holds.
	// +optional
	ExecutorsPerNode int32 `json:"executorsPerNode,omitempty"`

	// Reason says why the type is in the set, with its figures.
	// +optional
	Reason string `json:"reason,omitempty"`
}

// ExecutorFailureCount is how many pool executors failed for one reason.
type ExecutorFailureCount struct {
	// Reason the executors failed.
	Reason string `json:"reason"`

	// Count of executors.
	Count int32 `json:"count"`
}

// UnauthorizedExecutor is a pool executor of a QueryService that is not
// attached to the pool.
type UnauthorizedExecutor struct {
	// Pod is the executor pod's name.
	Pod string `json:"pod"`

	// Namespace of the pod.
	Namespace string `json:"namespace"`

	// QueryService the pod's labels name.
	// +optional
	QueryService string `json:"queryService,omitempty"`
}

// Allocation is what one QueryService holds in the pool.
type Allocation struct {
	// QueryService names the QueryService.
	QueryService QueryServiceReference `json:"queryService"`

	// PoolExecutors is the number of pool executors the QueryService runs.
	PoolExecutors int32 `json:"poolExecutors"`

	// RegularExecutors is the number of executors the QueryService runs on
	// its own nodes.
	RegularExecutors int32 `json:"regularExecutors"`

	// AllocatedAt is when the QueryService first got a pool executor.
	// +optional
	AllocatedAt *metav1.Time `json:"allocatedAt,omitempty"`
}

// WarmupStatus tells whether an image is warm on the pool's nodes.
//
// +kubebuilder:validation:Enum=Ready;Pending;Failed
type WarmupStatus string

// Warmup statuses.
const (
	WarmupReady   WarmupStatus = "Ready"
	WarmupPending WarmupStatus = "Pending"
	WarmupFailed  WarmupStatus = "Failed"
)

// CachedImage is one image of the warm set.
type CachedImage struct {
	// Image reference.
	Image string `json:"image"`

	// Hash is the short stable hash that names the image's DaemonSet.
	// +optional
	Hash string `json:"hash,omitempty"`

	// Source says why the image is warm: cachedImages, or the QueryServices
	// whose executors use it.
	// +optional
	Source string `json:"source,omitempty"`

	// WarmupStatus is Ready when every pool node has pulled the image.
	// +optional
	WarmupStatus WarmupStatus `json:"warmupStatus,omitempty"`

	// DaemonSetName is the warmup DaemonSet of the image.
	// +optional
	DaemonSetName string `json:"daemonSetName,omitempty"`

	// NodesReady is the number of pool nodes with the image warm.
	NodesReady int32 `json:"nodesReady"`

	// NodesTotal is the number of pool nodes that should have it.
	NodesTotal int32 `json:"nodesTotal"`

	// UnusedSince is when the image left the warm set; it stays warm for
	// imageConfig.unusedImageRetention after that.
	// +optional
	UnusedSince *metav1.Time `json:"unusedSince,omitempty"`

	// Message explains a Pending or Failed warmup.
	// +optional
	Message string `json:"message,omitempty"`
}

// AttachedQueryService is a QueryService that points at the pool, and
// whether its executors fit the pool's nodes.
type AttachedQueryService struct {
	// QueryService names the QueryService.
	QueryService QueryServiceReference `json:"queryService"`

	// Compatible is true when the QueryService is attached and its
	// executors fit the pool's nodes; it is always written, false included.
	Compatible bool `json:"compatible"`

	// InstanceType the compatibility was checked against.
	// +optional
	InstanceType string `json:"instanceType,omitempty"`

	// RequiredCPU is one executor's CPU request.
	// +optional
	RequiredCPU string `json:"requiredCpu,omitempty"`

	// RequiredMemory is one executor's memory request.
	// +optional
	RequiredMemory string `json:"requiredMemory,omitempty"`

	// Message says why the QueryService is not attached or not compatible,
	// and what to change.
	// +optional
	Message string `json:"message,omitempty"`

	// LastChecked is when compatibility was last checked.
	// +optional
	LastChecked *metav1.Time `json:"lastChecked,omitempty"`

	// Attached is true when the pool allows the QueryService and its
	// poolRef names the pool (a burstpool extension: a QueryService that
	// points at the pool without being allowed is listed with false).
	Attached bool `json:"attached"`

	// MaxPoolExecutors is the attached QueryService's share of the pool
	// (spec.queryServiceLimits); unset when the pool bounds none (a
	// burstpool extension).
	// +optional
	MaxPoolExecutors int32 `json:"maxPoolExecutors,omitempty"`
}
