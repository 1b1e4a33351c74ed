package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PoolRef names the Pool claim a PoolCapacity reports on.
type PoolRef struct {
	// Name of the Pool claim.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Namespace of the Pool claim.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// AttachedQueryService is a QueryService attached to the pool.
type AttachedQueryService struct {
	// Name of the QueryService.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Namespace of the QueryService; its executor pods run there.
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`

	// RegularExecutors is how many executors the QueryService runs outside
	// the pool. It is reported back in its allocation.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RegularExecutors int32 `json:"regularExecutors,omitempty"`

	// MaxPoolExecutors is the QueryService's share of the pool: with
	// policies.enforceShares, executors above it are evicted (newest first)
	// while another QueryService below its share has executors waiting.
	// Zero means no bound.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxPoolExecutors int32 `json:"maxPoolExecutors,omitempty"`
}

// UnauthorizedExecutorPolicy says what to do with pool executors whose
// QueryService is not attached to the pool.
// +kubebuilder:validation:Enum=Report;Evict
type UnauthorizedExecutorPolicy string

// Unauthorized executor policies.
const (
	// UnauthorizedReport lists unauthorized executors in status only.
	UnauthorizedReport UnauthorizedExecutorPolicy = "Report"
	// UnauthorizedEvict lists them and deletes their pods.
	UnauthorizedEvict UnauthorizedExecutorPolicy = "Evict"
)

// Policies says what the provider may change in the cluster. Both default to
// observing only.
type Policies struct {
	// DeleteFailedExecutors deletes pool executor pods that failed (after
	// their failure is recorded in status), so they stop holding a slot.
	// +kubebuilder:default=false
	// +optional
	DeleteFailedExecutors bool `json:"deleteFailedExecutors,omitempty"`

	// EnforceShares evicts, through the Eviction API (so
	// PodDisruptionBudgets hold), the newest executors of a QueryService
	// above its maxPoolExecutors while another QueryService below its own
	// has executors Pending; never below a share.
	// +optional
	EnforceShares bool `json:"enforceShares,omitempty"`

	// UnauthorizedExecutors says what to do with pool executors whose
	// QueryService is not attached to the pool.
	// +kubebuilder:default=Report
	// +optional
	UnauthorizedExecutors UnauthorizedExecutorPolicy `json:"unauthorizedExecutors,omitempty"`
}

// PoolCapacityParameters says which nodes and pods make up a pool. The
// provider watches only nodes and pods that carry the pool label, so both
// selectors must name it.
// +kubebuilder:validation:XValidation:rule="'e6data.io/pool' in self.nodeSelector",message="nodeSelector must include the e6data.io/pool label"
// +kubebuilder:validation:XValidation:rule="'e6data.io/pool' in self.executorSelector",message="executorSelector must include the e6data.io/pool label"
// +kubebuilder:validation:XValidation:rule="!has(self.warmupSelector) || size(self.warmupSelector) == 0 || 'e6data.io/pool' in self.warmupSelector",message="warmupSelector must include the e6data.io/pool label"
type PoolCapacityParameters struct {
	// Pool is the Pool claim this capacity belongs to.
	Pool PoolRef `json:"pool"`

	// NodeSelector holds the labels that find the pool's nodes.
	// +kubebuilder:validation:MinProperties=1
	NodeSelector map[string]string `json:"nodeSelector"`

	// ExecutorSelector holds the labels of the pool's executor pods.
	// +kubebuilder:validation:MinProperties=1
	ExecutorSelector map[string]string `json:"executorSelector"`

	// WarmupSelector holds the labels of the pool's warmup pods.
	// +optional
	WarmupSelector map[string]string `json:"warmupSelector,omitempty"`

	// Tolerations are those of the pool's executors: a pool node whose
	// NoSchedule and NoExecute taints they all tolerate offers slots (the
	// pool's own taints, from spec.tolerations of its Pool, included).
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// ExecutorsPerNode is how many executors fit on one pool node.
	// +kubebuilder:validation:Minimum=1
	ExecutorsPerNode int32 `json:"executorsPerNode"`

	// MaxExecutors caps the pool's total executors.
	// +kubebuilder:validation:Minimum=1
	MaxExecutors int32 `json:"maxExecutors"`

	// QueryServices attached to the pool. Pool executors of any other
	// QueryService are unauthorized.
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	// +optional
	QueryServices []AttachedQueryService `json:"queryServices,omitempty"`

	// Suspend reports a suspended pool: it offers no capacity (total and
	// available are zero) and the provider deletes no pods.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// Policies says what the provider may change in the cluster.
	// +optional
	Policies Policies `json:"policies,omitempty"`

	// ExecutorGate, when set, is the scheduling gate the pool's new
	// executors are admitted with, so that the provider can hold one back
	// until the pool can give it a slot without harm: while a
	// CapacityBuffer holds the warm slots, until the buffer's autoscaler
	// reports the replica count that counts the executor (or a bound), so
	// that it launches no node to restore the slot the executor takes;
	// while shares are enforced, an executor of a QueryService at or
	// above its share while another below its share waits, so that it
	// does not take the slot an eviction freed for the waiter. The
	// provider writes an ExecutorGate, the parameters with which the
	// static admission policies of deploy/provider/executor-gate.yaml add
	// the gate to executor pods created in the attached QueryServices'
	// namespaces, only in its own cluster.
	// +optional
	ExecutorGate string `json:"executorGate,omitempty"`

	// WorkloadCluster asks the provider to summarize QueryServices and
	// CRDs of the (remote) cluster it observes into
	// status.atProvider.workloadCluster, refreshed at most every 15 s.
	// +optional
	WorkloadCluster *WorkloadClusterQuery `json:"workloadCluster,omitempty"`

	// Pricing says what a pool node costs per hour, for status.atProvider.cost.
	// +optional
	Pricing *Pricing `json:"pricing,omitempty"`

	// Startup asks the provider to open new pool nodes to executors only
	// once the pool's warm images are on them: it removes the startup
	// taint from a pool node when a warmup pod of every image runs there,
	// or when the node is older than openAfter.
	// +optional
	Startup *Startup `json:"startup,omitempty"`

	// WarmSlots asks the provider to release the pool's placeholder pods
	// from their scheduling gate only while the pool wants them: at most
	// slots, less the executors running or waiting for the pool.
	// +optional
	WarmSlots *WarmSlots `json:"warmSlots,omitempty"`

	// WarmPolicy asks for a learned warm level
	// (status.atProvider.warmRecommendation).
	// +optional
	WarmPolicy *WarmPolicy `json:"warmPolicy,omitempty"`
}

// Startup says how new pool nodes are opened to executors.
type Startup struct {
	// Taint is the startup taint pool nodes are launched with (a Karpenter
	// NodePool's spec.template.spec.startupTaints); the provider removes
	// it from a pool node to open it.
	Taint corev1.Taint `json:"taint"`

	// Images are the pool's warm images, as warmup pods name them in their
	// e6data.io/image annotation. A node is warm when a warmup pod of each
	// runs on it (its pull, an init container, is done).
	// +listType=atomic
	// +optional
	Images []string `json:"images,omitempty"`

	// OpenAfter bounds how long a node waits for its images: once it is
	// that old, it is opened whatever is warm, and status.atProvider
	// .openedCold names it with the images that were not.
	OpenAfter metav1.Duration `json:"openAfter"`
}

// WarmSlots says which placeholder pods hold the pool's warm slots.
type WarmSlots struct {
	// Selector holds the labels of the pool's placeholder pods, which run
	// in the pool's namespace.
	// +kubebuilder:validation:MinProperties=1
	Selector map[string]string `json:"selector"`

	// Gate is the scheduling gate placeholder pods are created with.
	// +kubebuilder:validation:MinLength=1
	Gate string `json:"gate"`

	// Slots is how many warm slots the pool holds: its warm level
	// (minExecutors, or what its warm policy sets; the Pool's
	// status.warmPolicy).
	// +kubebuilder:validation:Minimum=0
	Slots int32 `json:"slots"`

	// CapacityBuffer names the pool's CapacityBuffer
	// (autoscaling.x-k8s.io), in the pool's namespace, when the pool
	// composes one. The provider owns its spec.replicas, which the
	// composition sets only when it creates the buffer: while the buffer
	// holds the warm slots,
	// slots less the executors running or waiting for the pool, changed
	// as executors come and go, so that an autoscaler has little time to
	// restore on a new node the room an executor just took; otherwise 0.
	// +optional
	CapacityBuffer *WarmBuffer `json:"capacityBuffer,omitempty"`
}

// A WarmBuffer is the CapacityBuffer that may hold a pool's warm slots.
type WarmBuffer struct {
	// Name is the CapacityBuffer's name.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Holds tells whether the buffer holds the warm slots (the pool's
	// warm capacity method is CapacityBuffer). A buffer that does not is
	// kept at 0 replicas.
	// +optional
	Holds bool `json:"holds,omitempty"`
}

// A ColdNode is a pool node opened to executors at the startup bound,
// before every warm image was on it.
type ColdNode struct {
	// Node is the node's name.
	Node string `json:"node"`
	// Images are the warm images that were not on it.
	// +listType=atomic
	Images []string `json:"images"`
	// OpenedAt is when it was opened.
	OpenedAt metav1.Time `json:"openedAt"`
}

// Overdue is what the provider should have changed by now and has not:
// bursts that wait on it past their bound.
type Overdue struct {
	// Executors counts pool executors of the attached QueryServices'
	// namespaces that still carry the executor gate more than the gate's
	// bound (10s) plus a slack (20s) after their creation, though the
	// pool holds them back for nothing (executors it holds for the
	// shares of other QueryServices are not overdue).
	// +optional
	Executors int32 `json:"executors,omitempty"`
	// Nodes counts Ready pool nodes, not being deleted, that still carry
	// the startup taint more than startup.openAfter plus the same slack
	// after their creation.
	// +optional
	Nodes int32 `json:"nodes,omitempty"`
	// NodeNames names those nodes, longest closed first, at most 10.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	NodeNames []string `json:"nodeNames,omitempty"`
}

// NodeCounts counts the pool's nodes.
type NodeCounts struct {
	// Ready nodes.
	Ready int32 `json:"ready"`
	// NotReady nodes: not Ready, or being deleted.
	NotReady int32 `json:"notReady"`
}

// Allocation is what one attached QueryService holds.
type Allocation struct {
	// QueryService is the QueryService's name.
	QueryService string `json:"queryService"`
	// Namespace of the QueryService.
	Namespace string `json:"namespace"`
	// PoolExecutors is how many pool executors the QueryService occupies.
	PoolExecutors int32 `json:"poolExecutors"`
	// RegularExecutors is how many executors it runs outside the pool.
	RegularExecutors int32 `json:"regularExecutors"`
	// AllocatedAt is when the QueryService got its first pool executor of
	// the current allocation; unset while it holds none.
	// +optional
	AllocatedAt *metav1.Time `json:"allocatedAt,omitempty"`
	// PendingExecutors is how many of its pool executors wait for a slot.
	// +optional
	PendingExecutors int32 `json:"pendingExecutors,omitempty"`
	// MaxPoolExecutors is its share (spec.forProvider.queryServices); zero
	// means no bound.
	// +optional
	MaxPoolExecutors int32 `json:"maxPoolExecutors,omitempty"`
}

// FailureReason classifies why an executor failed.
// +kubebuilder:validation:Enum=OOMKilled;ImagePullError;Evicted;NodeLost;Error;CrashLoopBackOff;ContainerConfigError;Disrupted
type FailureReason string

// Failure reasons.
const (
	FailureOOMKilled      FailureReason = "OOMKilled"
	FailureImagePullError FailureReason = "ImagePullError"
	FailureEvicted        FailureReason = "Evicted"
	FailureNodeLost       FailureReason = "NodeLost"
	FailureError          FailureReason = "Error"
	// FailureCrashLoopBackOff is a container that keeps exiting and is
	// waiting to be restarted.
	FailureCrashLoopBackOff FailureReason = "CrashLoopBackOff"
	// FailureContainerConfigError is a container that cannot be created from
	// its spec: a missing ConfigMap, Secret or key, or a bad command.
	FailureContainerConfigError FailureReason = "ContainerConfigError"
	// FailureDisrupted is a pod removed from its node by preemption, an
	// eviction (a drain, spot reclaim or consolidation) or the taint manager.
	FailureDisrupted FailureReason = "Disrupted"
)

// FailureReasons lists every failure reason.
var FailureReasons = []FailureReason{
	FailureOOMKilled, FailureImagePullError, FailureEvicted, FailureNodeLost, FailureError,
	FailureCrashLoopBackOff, FailureContainerConfigError, FailureDisrupted,
}

// Failure is one failed pool executor.
type Failure struct {
	// Pod is the executor pod's name.
	Pod string `json:"pod"`
	// Namespace of the pod.
	Namespace string `json:"namespace"`
	// QueryService the executor belonged to.
	// +optional
	QueryService string `json:"queryService,omitempty"`
	// Reason classifies the failure.
	Reason FailureReason `json:"reason"`
	// ExitCode of the failed container, when it exited.
	// +optional
	ExitCode int32 `json:"exitCode,omitempty"`
	// Message from the container or pod status.
	// +optional
	Message string `json:"message,omitempty"`
	// At is when the failure was first seen.
	At metav1.Time `json:"at"`
}

// WarmupFailure is an image the pool cannot warm.
type WarmupFailure struct {
	// Image that cannot be pulled.
	Image string `json:"image"`
	// Reason from the container status: ErrImagePull, ImagePullBackOff or
	// InvalidImageName.
	Reason string `json:"reason"`
	// Message from the container status.
	// +optional
	Message string `json:"message,omitempty"`
	// Nodes on which warming this image fails.
	Nodes int32 `json:"nodes"`
}

// UnauthorizedExecutor is a pool executor whose QueryService is not attached.
type UnauthorizedExecutor struct {
	// Pod is the executor pod's name.
	Pod string `json:"pod"`
	// Namespace of the pod.
	Namespace string `json:"namespace"`
	// QueryService named by the pod's labels.
	// +optional
	QueryService string `json:"queryService,omitempty"`
}

// UnplaceableExecutor is a pending executor that asks for the pool's nodes
// but could run on none of them were there room: its node selector, its
// required node affinity or its tolerations rule out every pool node.
type UnplaceableExecutor struct {
	// Pod is the executor pod's name.
	Pod string `json:"pod"`
	// Namespace of the pod.
	Namespace string `json:"namespace"`
	// QueryService named by the pod's labels.
	// +optional
	QueryService string `json:"queryService,omitempty"`
	// Reason says what of the pod rules out the pool's nodes, for example
	// "nodeSelector e6data.io/x=y matches no pool node".
	Reason string `json:"reason"`
}

// Requested is what the pool's executors request.
type Requested struct {
	// CPU requested by the executors.
	CPU resource.Quantity `json:"cpu"`
	// Memory requested by the executors.
	Memory resource.Quantity `json:"memory"`
}

// PoolCapacityObservation is what the pool actually holds.
type PoolCapacityObservation struct {
	// TotalExecutors is the number of executor slots on Ready, schedulable
	// pool nodes, capped at maxExecutors.
	TotalExecutors int32 `json:"totalExecutors"`
	// AvailableExecutors is totalExecutors minus occupiedExecutors, never
	// below zero.
	AvailableExecutors int32 `json:"availableExecutors"`
	// OccupiedExecutors counts pool executors that are Running, or bound to
	// a pool node and not terminating.
	OccupiedExecutors int32 `json:"occupiedExecutors"`
	// PendingExecutors counts pool executors that are not Running yet,
	// whether or not they are bound to a node.
	PendingExecutors int32 `json:"pendingExecutors"`
	// DrainingExecutors counts pool executors on pool nodes that give no
	// slots: cordoned, disrupted by Karpenter, tainted, not Ready or being
	// deleted. They are not occupiedExecutors.
	// +optional
	DrainingExecutors int32 `json:"drainingExecutors,omitempty"`
	// Requested is what the occupied and pending executors request.
	// +optional
	Requested *Requested `json:"requested,omitempty"`
	// Nodes counts the pool's nodes.
	Nodes NodeCounts `json:"nodes"`
	// Allocations of the attached QueryServices, by namespace and name.
	// +optional
	Allocations []Allocation `json:"allocations,omitempty"`
	// Failures of pool executors, newest first, at most 20.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Failures []Failure `json:"failures,omitempty"`
	// WarmupFailures lists images the pool cannot warm.
	// +optional
	WarmupFailures []WarmupFailure `json:"warmupFailures,omitempty"`
	// WarmingNodes counts pool nodes not yet opened to executors: they
	// carry the startup taint while the pool's images are pulled.
	// +optional
	WarmingNodes int32 `json:"warmingNodes,omitempty"`
	// OpenedCold lists pool nodes, still present, that were opened at the
	// startup bound before every warm image was on them, at most 10.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	OpenedCold []ColdNode `json:"openedCold,omitempty"`
	// Overdue counts what the provider changes within a bound and has
	// not changed well past it: executors still at the executor gate and
	// pool nodes still closed by the startup taint. Unset while nothing
	// is overdue.
	// +optional
	Overdue *Overdue `json:"overdue,omitempty"`
	// UnauthorizedExecutors lists pool executors of QueryServices that are
	// not attached, by namespace and name, at most 20.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	UnauthorizedExecutors []UnauthorizedExecutor `json:"unauthorizedExecutors,omitempty"`
	// UnauthorizedCount counts every unauthorized executor, listed or not.
	// +optional
	UnauthorizedCount int32 `json:"unauthorizedCount,omitempty"`
	// UnplaceableExecutors lists pending pool executors that could run on
	// no pool node were there room, by namespace and name, at most 20.
	// They count for nothing: not pending, not waiting for a share, not
	// taking a warm slot.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	UnplaceableExecutors []UnplaceableExecutor `json:"unplaceableExecutors,omitempty"`
	// UnplaceableCount counts every unplaceable executor, listed or not.
	// +optional
	UnplaceableCount int32 `json:"unplaceableCount,omitempty"`
	// ObservedAt is when any of the above last changed.
	// +optional
	ObservedAt metav1.Time `json:"observedAt,omitempty"`
	// LastObservedTime is when the provider last knew its view of the
	// pool's cluster to be current (its watch healthy or a relist done), to
	// the minute. The Stale condition turns True when it falls too far
	// behind.
	// +optional
	LastObservedTime *metav1.Time `json:"lastObservedTime,omitempty"`
	// WorkloadCluster summarizes what the pool-compose function needs
	// from a remote workload cluster; set only when
	// forProvider.workloadCluster asks for it.
	// +optional
	WorkloadCluster *WorkloadClusterSummary `json:"workloadCluster,omitempty"`
	// Cost is what the pool's nodes cost and who used them
	// (docs/capacity.md).
	// +optional
	Cost *CostObservation `json:"cost,omitempty"`
	// ExecutorStarts is how long the pool's executors took from creation
	// to running, on nodes that were there before them and on nodes
	// launched for them (docs/capacity.md).
	// +optional
	ExecutorStarts *ExecutorStarts `json:"executorStarts,omitempty"`
	// Demand is the pool's demand history by time of week.
	// +optional
	Demand *DemandHistory `json:"demand,omitempty"`
	// WarmRecommendation is the learned warm level, when
	// forProvider.warmPolicy.learned asks for one.
	// +optional
	WarmRecommendation *WarmRecommendation `json:"warmRecommendation,omitempty"`
}

// MaxSummaryQueryServices bounds the QueryServices a workload cluster
// summary lists.
const MaxSummaryQueryServices = 1000

// WorkloadClusterQuery says which QueryServices and CRDs of the workload
// cluster the pool-compose function reads.
type WorkloadClusterQuery struct {
	// QueryServices are read by namespace and name.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	QueryServices []PoolRef `json:"queryServices,omitempty"`
	// LabelSelectors select QueryServices across namespaces, each by
	// label equality.
	// +kubebuilder:validation:MaxItems=4
	// +optional
	LabelSelectors []map[string]string `json:"labelSelectors,omitempty"`
	// CRDs are CustomResourceDefinitions whose presence is reported.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	CRDs []string `json:"crds,omitempty"`
}

// WorkloadClusterSummary is what the provider read from the workload
// cluster for forProvider.workloadCluster.
type WorkloadClusterSummary struct {
	// CRDs lists those of the query's CRDs that exist.
	// +optional
	CRDs []string `json:"crds,omitempty"`
	// QueryServices lists the QueryServices found, by namespace and name,
	// with the fields the pool-compose function reads, at most 1,000:
	// every one the query names or the pool attaches, then those a label
	// selector matches whose spec.executor.poolRef names the pool.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	QueryServices []QueryServiceSummary `json:"queryServices,omitempty"`
	// Truncated tells that more QueryServices matched than are listed: a
	// QueryService missing from a truncated summary may still exist.
	// +optional
	Truncated bool `json:"truncated,omitempty"`
	// Query is a digest of the query this summary answers.
	// +optional
	Query string `json:"query,omitempty"`
	// ObservedAt is when the summary was read.
	ObservedAt metav1.Time `json:"observedAt"`
}

// QueryServiceSummary is a QueryService cut to what the pool-compose
// function reads.
type QueryServiceSummary struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Executor SummaryExecutor `json:"executor,omitempty"`
}

// SummaryExecutor is a QueryService's spec.executor, cut to the fields the
// pool-compose function reads.
type SummaryExecutor struct {
	// +optional
	Image string `json:"image,omitempty"`
	// +optional
	InstanceType string `json:"instanceType,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	Resources SummaryResources `json:"resources,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	PoolRef *PoolRef `json:"poolRef,omitempty"`
}

// SummaryResources is one executor's request.
type SummaryResources struct {
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// A PoolCapacitySpec defines the pool a PoolCapacity observes.
type PoolCapacitySpec struct {
	xpv2.ClusterManagedResourceSpec `json:",inline"`
	ForProvider                     PoolCapacityParameters `json:"forProvider"`
}

// A PoolCapacityStatus is what the provider observed.
type PoolCapacityStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	AtProvider                 PoolCapacityObservation `json:"atProvider,omitempty"`
}

// +kubebuilder:object:root=true

// A PoolCapacity reports what a pool's nodes and executor pods actually hold.
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.atProvider.totalExecutors"
// +kubebuilder:printcolumn:name="AVAILABLE",type="integer",JSONPath=".status.atProvider.availableExecutors"
// +kubebuilder:printcolumn:name="PENDING",type="integer",JSONPath=".status.atProvider.pendingExecutors"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={crossplane,managed,burstpool}
type PoolCapacity struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PoolCapacitySpec   `json:"spec"`
	Status PoolCapacityStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PoolCapacityList contains a list of PoolCapacity.
type PoolCapacityList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PoolCapacity `json:"items"`
}
