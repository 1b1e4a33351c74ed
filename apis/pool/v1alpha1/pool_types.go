package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pool is a shared pool of warm nodes that QueryServices burst onto. It is
// the claim of the composite XPool: tenants create it in their namespace and
// burstpool provisions the nodes (a Karpenter NodePool and NodeClass, or the
// cloud's own node pool), keeps executor images warm on them and reports what
// the pool holds.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=pool,categories=e6data
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="AVAILABLE",type=integer,JSONPath=`.status.availableExecutors`
// +kubebuilder:printcolumn:name="OCCUPIED",type=integer,JSONPath=`.status.occupiedExecutors`
// +kubebuilder:printcolumn:name="TOTAL",type=integer,JSONPath=`.status.totalExecutors`
// +kubebuilder:printcolumn:name="INSTANCE",type=string,JSONPath=`.status.derivedInstanceType`,priority=1
// +kubebuilder:printcolumn:name="CLOUD",type=string,JSONPath=`.status.cloud`,priority=1
type Pool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PoolSpec   `json:"spec"`
	Status PoolStatus `json:"status,omitempty"`
}

// PoolList is a list of Pools.
//
// +kubebuilder:object:root=true
type PoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Pool `json:"items"`
}

// PoolSpec is what a platform team asks of a pool.
//
// +kubebuilder:validation:XValidation:rule="(has(self.allowedQueryServices) && size(self.allowedQueryServices) > 0) || has(self.queryServiceSelector)",message="set allowedQueryServices or queryServiceSelector: a pool must say which QueryServices may use it"
// +kubebuilder:validation:XValidation:rule="self.maxExecutors >= 1",message="maxExecutors must be at least 1"
// +kubebuilder:validation:XValidation:rule="!has(self.minExecutors) || self.minExecutors <= self.maxExecutors",message="minExecutors must not exceed maxExecutors"
// +kubebuilder:validation:XValidation:rule="!has(self.executorsPerNode) || self.executorsPerNode >= 1",message="executorsPerNode must be at least 1"
// +kubebuilder:validation:XValidation:rule="!has(self.warmPolicy) || !has(self.warmPolicy.windows) || self.warmPolicy.windows.all(w, w.executors <= self.maxExecutors)",message="every warmPolicy.windows[].executors must be at most maxExecutors: lower the window's executors or raise maxExecutors"
type PoolSpec struct {
	// MinExecutors is the number of executor slots kept warm (provisioned and
	// idle) at all times. Karpenter has no minimum node count, so burstpool
	// holds these slots with low-priority placeholder pods that real
	// executors preempt. A warm policy (spec.warmPolicy) may raise the warm
	// level above it for a while, never lower it.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MinExecutors int32 `json:"minExecutors,omitempty"`

	// MaxExecutors caps the executors the pool runs at once, across all
	// QueryServices. It sets the NodePool limits (maxExecutors /
	// executorsPerNode nodes). The API refuses more than 100,000; the
	// cluster's settings cap it lower (tenancy.maxExecutors, 1000 unless
	// the platform team says otherwise).
	// +kubebuilder:validation:Maximum=100000
	MaxExecutors int32 `json:"maxExecutors"`

	// ExecutorsPerNode is how many executors share one pool node. A derived
	// type holds exactly this many of the largest attached executor when
	// any candidate type does (status.sizing says how many it holds), so
	// executor slots are nodes times executorsPerNode.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	ExecutorsPerNode int32 `json:"executorsPerNode,omitempty"`

	// InstanceConfig chooses the pool's instance type, explicitly or by
	// family. When empty, the type is derived from the attached
	// QueryServices (or inherited, see InheritNodeConfigFrom).
	// +optional
	InstanceConfig *InstanceConfig `json:"instanceConfig,omitempty"`

	// InheritNodeConfigFrom names a QueryService whose regular nodes' instance
	// type the pool reuses.
	// +optional
	InheritNodeConfigFrom *QueryServiceReference `json:"inheritNodeConfigFrom,omitempty"`

	// ImageConfig controls which images are pre-pulled on pool nodes.
	// +kubebuilder:default={}
	// +optional
	ImageConfig *ImageConfig `json:"imageConfig,omitempty"`

	// AllowedQueryServices lists the QueryServices that may use the pool. A
	// QueryService attaches when it is allowed (here or by
	// QueryServiceSelector) and its spec.executor.poolRef names this pool.
	// +listType=atomic
	// +optional
	AllowedQueryServices []QueryServiceReference `json:"allowedQueryServices,omitempty"`

	// QueryServiceSelector allows every QueryService whose labels match, in
	// any namespace.
	// +optional
	QueryServiceSelector *metav1.LabelSelector `json:"queryServiceSelector,omitempty"`

	// StorageAgent runs a storage agent DaemonSet on pool nodes (for example
	// a local cache over the nodes' NVMe disks). Its pods run as warmup pods
	// do: no service account token, the restricted Pod Security profile
	// (non-root UID 65532, RuntimeDefault seccomp, no privilege escalation,
	// no capabilities), but with a writable root filesystem, which lives on
	// the node's ephemeral storage (on AWS instance types with NVMe disks,
	// the RAID0 instance store over them). It gets no host path and no
	// privileges: an agent that needs the node's devices is the platform's
	// to deploy.
	// +optional
	StorageAgent *StorageAgent `json:"storageAgent,omitempty"`

	// NodeSelector selects the pool's nodes. Optional with Karpenter (the
	// pool label is used); required where burstpool cannot create nodes
	// (Linode, DigitalOcean, CoreWeave and on-premises clusters without
	// Karpenter), where it names the existing node pool.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations are the taints of the pool's nodes that pool workloads
	// tolerate. With Karpenter they become the NodePool's taints, so only
	// pool workloads land on pool nodes.
	// +kubebuilder:default={}
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Tolerations []Toleration `json:"tolerations,omitempty"`

	// UnauthorizedExecutors says what happens to pool executor pods of
	// QueryServices the pool does not attach (allowed and pointing at it):
	// Deny rejects them at admission with a ValidatingAdmissionPolicy, so
	// they never take a pool node, and lists any that ran before; Evict
	// deletes them once they run; Report only lists them in the
	// PoolCapacity. Empty takes the Composition's default (Deny unless the
	// platform team changed it). Each acts on this pool's executors only.
	// A burstpool extension of the reference.
	// +kubebuilder:validation:Enum=Report;Evict;Deny
	// +optional
	UnauthorizedExecutors string `json:"unauthorizedExecutors,omitempty"`

	// QueryServiceLimits bounds each attached QueryService's share of the
	// pool, so that one QueryService cannot hold the pool while others
	// wait. Shares are always reported (status.attachedQueryServices and
	// the burstpool_queryservice_executors metric); with enforce, the newest
	// executors of a QueryService above its share are evicted while another
	// QueryService below its own has executors waiting. A burstpool
	// extension of the reference.
	// +optional
	QueryServiceLimits *QueryServiceLimits `json:"queryServiceLimits,omitempty"`

	// Suspend stops new capacity: the NodePool may launch no nodes and warm
	// slots are released, while warm images are kept. Set it back to false to
	// resume.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// Provisioning overrides what burstpool detects about the cluster, for
	// when detection must be bypassed.
	// +optional
	Provisioning *Provisioning `json:"provisioning,omitempty"`

	// WorkloadCluster runs the pool in another cluster than the one
	// Crossplane runs in. It wins over the cluster setting
	// workloadCluster. A burstpool extension of the reference.
	// +optional
	WorkloadCluster *WorkloadCluster `json:"workloadCluster,omitempty"`

	// WarmPolicy says how many executor slots the pool keeps warm over
	// time: Static (the default, and the reference's behaviour) keeps
	// minExecutors warm day and night; Scheduled raises the warm level
	// while a window of the pool's (or of the platform's settings for its
	// namespace) is open; Learned follows the warm level the capacity
	// provider learns from the pool's demand by time of week. The warm
	// level is never below minExecutors, nor above maxExecutors and the
	// platform's tenancy caps; status.warmPolicy says which policy set it,
	// why, until when and what it costs. A burstpool extension of the
	// reference.
	// +optional
	WarmPolicy *WarmPolicy `json:"warmPolicy,omitempty"`
}

// Warm policies (spec.warmPolicy.type).
const (
	// WarmStatic keeps minExecutors warm at all times.
	WarmStatic = "Static"
	// WarmScheduled raises the warm level while a window is open.
	WarmScheduled = "Scheduled"
	// WarmLearned follows the capacity provider's learned warm level.
	WarmLearned = "Learned"
)

// WarmPolicy says how the pool's warm level follows time or demand.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'Scheduled' || (has(self.windows) && size(self.windows) > 0)",message="warmPolicy.type Scheduled needs at least one window in warmPolicy.windows: add one, or use type Static"
// +kubebuilder:validation:XValidation:rule="!has(self.windows) || self.windows.all(w, self.windows.exists_one(x, x.name == w.name))",message="warmPolicy.windows[].name must be unique: give each window its own name"
type WarmPolicy struct {
	// Type is Static (minExecutors warm at all times), Scheduled (raised
	// while a window is open) or Learned (the capacity provider's learned
	// level, within the platform's cost caps).
	// +kubebuilder:validation:Enum=Static;Scheduled;Learned
	// +kubebuilder:default=Static
	// +optional
	Type string `json:"type,omitempty"`

	// Windows raise the warm level while they are open, under type
	// Scheduled: each opens at every time its cron schedule matches in its
	// time zone and stays open for its duration. Where windows overlap,
	// the largest level wins; the platform's settings may add windows for
	// the pool's namespace (warmPolicy.classes). Slots are warmed ahead of
	// a window's opening by the platform's lead time (warmPolicy.leadTime,
	// at least a new node's cold start).
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	Windows []WarmWindow `json:"windows,omitempty"`

	// Learned tunes the learned warm level under type Learned. What it may
	// cost (in slots and dollars per hour) is the platform's to decide,
	// in its settings.
	// +optional
	Learned *LearnedWarmPolicy `json:"learned,omitempty"`
}

// WarmWindow is a recurring time during which the pool keeps more slots
// warm.
type WarmWindow struct {
	// Name identifies the window in the pool's status and messages.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Schedule is when the window opens: a cron expression of five fields
	// (minute, hour, day of month, month, day of week), such as
	// "0 8 * * mon-fri", read in TimeZone.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9A-Za-z*/,?-]+( +[0-9A-Za-z*/,?-]+){4}$')",message="schedule must be a cron expression of five fields separated by spaces (minute hour day-of-month month day-of-week), such as '0 8 * * mon-fri': no seconds field, no CRON_TZ prefix (set timeZone instead)"
	Schedule string `json:"schedule"`

	// Duration is how long the window stays open after each opening, a
	// duration such as 10h or 90m, more than zero and at most a week
	// (168h).
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="duration must be a duration such as 10h, 90m or 1h30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') || (duration(self) > duration('0s') && duration(self) <= duration('168h'))",message="duration must be more than 0 and at most a week (168h): shorten the window, or split it into windows of a week or less"
	Duration string `json:"duration"`

	// Executors is the warm level while the window is open, held to at
	// least minExecutors and at most maxExecutors and the platform's
	// tenancy cap; a Pool's own windows may name at most its
	// maxExecutors.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	Executors int32 `json:"executors"`

	// TimeZone is the IANA time zone the schedule is read in, such as
	// Europe/Berlin; empty is UTC. Across a daylight-saving change the
	// window opens at the schedule's wall time and lasts Duration of
	// elapsed time.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_+\-/]*$`
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

// LearnedWarmPolicy tunes a learned warm level.
type LearnedWarmPolicy struct {
	// TargetWarmPercent is the share of executors, in percent, that should
	// start on a node that was there before them (a warm slot). Unset,
	// the platform's warmPolicy.learned.targetWarmPercent (90 unless the
	// platform team says otherwise).
	// +kubebuilder:validation:XValidation:rule="self >= 1 && self <= 100",message="targetWarmPercent must be between 1 and 100: the share of executors, in percent, to start on an existing node"
	// +optional
	TargetWarmPercent *int32 `json:"targetWarmPercent,omitempty"`
}

// WorkloadCluster names the cluster a pool runs in.
type WorkloadCluster struct {
	// ProviderConfigName names a provider-kubernetes ProviderConfig
	// (kubernetes.crossplane.io/v1alpha1) whose kubeconfig reaches the
	// workload cluster. Empty, the cluster setting decides.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ProviderConfigName string `json:"providerConfigName,omitempty"`
}

// QueryServiceLimits are the QueryServices' shares of a pool.
type QueryServiceLimits struct {
	// MaxPoolExecutors is every attached QueryService's share: the pool
	// executors it keeps while another QueryService waits for a slot.
	// Above it, a QueryService may still burst into slots nobody waits for.
	// +kubebuilder:validation:Minimum=1
	MaxPoolExecutors int32 `json:"maxPoolExecutors"`

	// Overrides give named QueryServices another share.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Overrides []QueryServiceLimit `json:"overrides,omitempty"`

	// Enforce evicts, through the Eviction API (PodDisruptionBudgets
	// hold), the newest executors of a QueryService above its share while
	// another QueryService below its own has executors Pending, never
	// taking one below its share. Off, shares are reported only.
	// +optional
	Enforce bool `json:"enforce,omitempty"`
}

// QueryServiceLimit is one QueryService's share.
type QueryServiceLimit struct {
	// Name of the QueryService.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Namespace of the QueryService. Defaults to the Pool's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// MaxPoolExecutors is its share.
	// +kubebuilder:validation:Minimum=1
	MaxPoolExecutors int32 `json:"maxPoolExecutors"`
}

// InstanceConfig chooses the pool's instance type.
//
// Azure sizes are checked by their series letter and version, since the
// family Edsv5 holds Standard_E16ds_v5: its name is not a prefix.
//
// +kubebuilder:validation:XValidation:rule="!has(self.instanceType) || !has(self.instanceFamily) || self.instanceType.startsWith(self.instanceFamily) || (self.instanceType.startsWith('Standard_') && size(self.instanceFamily) > 2 && self.instanceType.startsWith('Standard_' + self.instanceFamily.substring(0, 1)) && self.instanceType.endsWith('_' + self.instanceFamily.substring(size(self.instanceFamily) - 2)))",message="instanceConfig.instanceType must belong to instanceConfig.instanceFamily (for example family r7gd with type r7gd.8xlarge): make them agree or set only one"
type InstanceConfig struct {
	// InstanceType pins the pool to one instance type (for example
	// r7gd.16xlarge). QueryServices whose executors do not fit are reported
	// incompatible.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	InstanceType string `json:"instanceType,omitempty"`

	// InstanceFamily lets burstpool pick the smallest size of this family
	// (for example r7gd) that fits the largest attached executor times
	// executorsPerNode.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	InstanceFamily string `json:"instanceFamily,omitempty"`

	// AutoUpgrade moves the pool to a larger size when a larger QueryService
	// attaches after executors have run on the pool. Without it the pool
	// keeps its type and that QueryService is reported incompatible. Until
	// an executor has run, a family or derived pool follows the attached
	// QueryServices either way; once one has, it never moves to a smaller
	// type.
	// +optional
	AutoUpgrade bool `json:"autoUpgrade,omitempty"`

	// SpotEnabled launches spot capacity (falling back to on-demand) and,
	// when no type is pinned, lets Karpenter choose among types of the same
	// shape: each holds exactly as many executors as the derived type, in
	// its family (see SpotNeighbourGenerations), never bare metal unless
	// AllowMetal.
	// +optional
	SpotEnabled bool `json:"spotEnabled,omitempty"`

	// Architecture of the pool's nodes when no instance type or family
	// sets it: amd64 or arm64. Unset, it is what the attached QueryServices
	// declare (a kubernetes.io/arch node selector, or the arch of their
	// executors' instance type), else amd64. A burstpool extension of the
	// Pool reference.
	// +kubebuilder:validation:Enum=amd64;arm64
	// +optional
	Architecture string `json:"architecture,omitempty"`

	// SpotNeighbourGenerations lets a spot pool's type set take types of
	// neighbouring generations of the chosen family (r6gd and r8gd for
	// r7gd) that hold the same executors per node. Off, the set stays in
	// the family unless the cluster settings opt in. A burstpool extension.
	// +optional
	SpotNeighbourGenerations bool `json:"spotNeighbourGenerations,omitempty"`

	// AllowMetal lets bare-metal types (r7gd.metal) be chosen or offered
	// for spot. A burstpool extension.
	// +optional
	AllowMetal bool `json:"allowMetal,omitempty"`
}

// QueryServiceReference names a QueryService.
type QueryServiceReference struct {
	// Name of the QueryService.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Namespace of the QueryService. Defaults to the Pool's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ImageConfig controls the warm image set.
//
// +kubebuilder:validation:XValidation:rule="!has(self.unusedImageRetention) || self.unusedImageRetention.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$')",message="imageConfig.unusedImageRetention must be a duration such as 1h, 30m or 1h30m"
type ImageConfig struct {
	// CachedImages are images always kept warm on pool nodes.
	// +listType=atomic
	// +optional
	CachedImages []string `json:"cachedImages,omitempty"`

	// AutoCollectImages adds every attached QueryService's executor image to
	// the warm set.
	// +kubebuilder:default=true
	// +optional
	AutoCollectImages *bool `json:"autoCollectImages,omitempty"`

	// UnusedImageRetention is how long an image that left the warm set stays
	// warm before its warmup DaemonSet is removed (a Go duration).
	// +kubebuilder:default="1h"
	// +optional
	UnusedImageRetention string `json:"unusedImageRetention,omitempty"`

	// PullSecret holds the registry credentials used to pull warm images.
	// Its namespace defaults to the Pool's. Warmup pods run in the Pool's
	// namespace and can only use a Secret there: one in another namespace
	// is not used, and the Pool's ImagePullSecretsUsable condition says to
	// copy it.
	// +optional
	PullSecret *SecretReference `json:"pullSecret,omitempty"`

	// ImagePullSecrets are further registry credentials for warm images,
	// used together with PullSecret (a burstpool extension for pools whose
	// images come from several registries). The same namespace rule
	// applies.
	// +listType=atomic
	// +optional
	ImagePullSecrets []SecretReference `json:"imagePullSecrets,omitempty"`
}

// SecretReference names a Secret.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Namespace of the Secret. Defaults to the Pool's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// StorageAgent describes the storage agent DaemonSet.
//
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || !self.enabled || has(self.image)",message="storageAgent.image is required when storageAgent.enabled is true"
type StorageAgent struct {
	// Enabled runs the agent on every pool node.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Image of the agent.
	// +optional
	Image string `json:"image,omitempty"`

	// CPU the agent requests on each node (counts in node sizing).
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// Memory the agent requests on each node (counts in node sizing).
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// Toleration tolerates a taint of the pool's nodes. It has the fields of a
// Kubernetes toleration.
//
// +kubebuilder:validation:XValidation:rule="!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",message="a toleration with operator Exists must not set a value"
// +kubebuilder:validation:XValidation:rule="(has(self.key) && size(self.key) > 0) || (has(self.operator) && self.operator == 'Exists')",message="a toleration without a key must use operator Exists"
// +kubebuilder:validation:XValidation:rule="!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",message="tolerationSeconds is only valid with effect NoExecute"
type Toleration struct {
	// Key is the taint key. Empty with operator Exists matches every taint.
	// +kubebuilder:validation:MaxLength=316
	// +optional
	Key string `json:"key,omitempty"`

	// Operator is Equal (the default) or Exists.
	// +kubebuilder:validation:Enum=Equal;Exists
	// +optional
	Operator string `json:"operator,omitempty"`

	// Value is the taint value, with operator Equal.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Value string `json:"value,omitempty"`

	// Effect is NoSchedule, PreferNoSchedule or NoExecute; empty matches all.
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	// +optional
	Effect string `json:"effect,omitempty"`

	// TolerationSeconds bounds how long a NoExecute taint is tolerated.
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// Provisioning overrides cloud and method detection.
type Provisioning struct {
	// Cloud the cluster runs on.
	// +kubebuilder:validation:Enum=aws;gcp;azure;linode;digitalocean;coreweave;kwok;onprem
	// +optional
	Cloud string `json:"cloud,omitempty"`

	// Method provisions the pool's nodes: karpenter (a NodePool and the
	// cloud's NodeClass), eks-auto-mode (a NodePool and an EKS Auto Mode
	// NodeClass), lke, doks or coreweave (the cloud's node pool object),
	// node-group (an EKS, GKE or AKS node group the Cluster Autoscaler
	// scales, from the settings' nodeGroups) or static (existing nodes
	// picked by nodeSelector).
	// +kubebuilder:validation:Enum=karpenter;eks-auto-mode;lke;doks;coreweave;node-group;static
	// +optional
	Method string `json:"method,omitempty"`

	// ManageNodePool emits the cloud's node pool object (Linode LKE,
	// DigitalOcean DOKS, CoreWeave) for non-Karpenter methods, sized from
	// minExecutors and maxExecutors. Off, burstpool uses the nodes that
	// nodeSelector picks.
	// +optional
	ManageNodePool bool `json:"manageNodePool,omitempty"`

	// ClusterID identifies the cluster for cloud node pool objects (the LKE
	// cluster ID or the DOKS cluster ID).
	// +optional
	ClusterID string `json:"clusterId,omitempty"`

	// ComposeNodeIAM composes the pool's node IAM role, policy attachments
	// and EKS access entry on AWS with Karpenter (an extension over the
	// reference). Unset, the cluster setting aws.nodeIAM.enabled decides.
	// true needs that setting on, or the settings' grant for the Pool's
	// namespace (tenancy.namespaces[].composeNodeIAM).
	// +optional
	ComposeNodeIAM *bool `json:"composeNodeIAM,omitempty"`
}
