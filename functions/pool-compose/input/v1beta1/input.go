// Package v1beta1 holds the input of the pool-compose function and the
// cluster settings it reads: the Composition's input carries safe defaults,
// and an EnvironmentConfig (apiextensions.crossplane.io/v1beta1) carries the
// cluster's own values in its data, with the same fields, so Pool claims
// only say what tenants care about.
//
// +kubebuilder:object:generate=true
// +groupName=pool.fn.burstpool.io
// +versionName=v1beta1
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
)

// Input is the configuration of the pool-compose function. Every field is
// optional. The fields other than environmentConfig are also the settings
// an EnvironmentConfig's data holds; its values win over the input's. A
// pool that needs a missing setting (for example an AWS pool without a
// node role) is reported Pending with a message that names it.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// EnvironmentConfig selects the EnvironmentConfigs whose data holds the
	// cluster's settings. Empty, it is the one named burstpool. Only the
	// Composition's input sets it.
	// +optional
	EnvironmentConfig *EnvironmentConfigSelector `json:"environmentConfig,omitempty"`

	// ClusterName is the Kubernetes cluster's name. It tags cloud resources
	// and names the EKS cluster in discovery tags when selector terms are
	// not given.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`

	// Namespace holds the pool's namespaced objects (warmup DaemonSets,
	// placeholders) when the XPool has no claim. Pools with a claim use the
	// claim's namespace.
	// +kubebuilder:default=burstpool-system
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Provisioning is the default cloud and method for pools whose
	// spec.provisioning does not set them. Empty cloud and method are
	// detected from the CRDs installed in the cluster.
	// +optional
	Provisioning *Provisioning `json:"provisioning,omitempty"`

	// AWS configures EC2NodeClasses (Karpenter on EKS or self-managed AWS).
	// +optional
	AWS *AWS `json:"aws,omitempty"`

	// EKSAutoMode configures EKS Auto Mode NodeClasses.
	// +optional
	EKSAutoMode *EKSAutoMode `json:"eksAutoMode,omitempty"`

	// GCP configures GCENodeClasses.
	// +optional
	GCP *GCP `json:"gcp,omitempty"`

	// Azure configures AKSNodeClasses.
	// +optional
	Azure *Azure `json:"azure,omitempty"`

	// Karpenter tunes the NodePools of every Karpenter method.
	// +optional
	Karpenter *Karpenter `json:"karpenter,omitempty"`

	// NodeGroups lets pools on clusters without Karpenter compose the
	// cloud's own node group, which the cluster's Cluster Autoscaler
	// scales: an EKS managed node group, a GKE node pool or an AKS node
	// pool, as Crossplane managed resources of Upbound's provider
	// families. A cloud's block is usable once its required fields are
	// set; the method node-group is then detected where Karpenter is not
	// installed and the provider's CRD is.
	// +optional
	NodeGroups *NodeGroups `json:"nodeGroups,omitempty"`

	// Warmup configures the warmup DaemonSets.
	// +optional
	Warmup *Warmup `json:"warmup,omitempty"`

	// Placeholder configures the pods that hold minExecutors slots warm.
	// +optional
	Placeholder *Placeholder `json:"placeholder,omitempty"`

	// WarmCapacity chooses what holds the pools' warm slots: placeholder
	// pods, or a CapacityBuffer where an autoscaler acts on one.
	// +optional
	WarmCapacity *WarmCapacity `json:"warmCapacity,omitempty"`

	// WarmPolicy is what the platform decides of pools' warm policies
	// (a Pool's spec.warmPolicy): how far ahead of a window or a learned
	// burst the warm slots rise, the target and cost caps of learned warm
	// levels, and windows for classes of pools.
	// +optional
	WarmPolicy *WarmPolicy `json:"warmPolicy,omitempty"`

	// Capacity configures the PoolCapacity managed resource.
	// +optional
	Capacity *Capacity `json:"capacity,omitempty"`

	// CatalogOverrides add instance types to the sizing catalog, or replace
	// entries of it, for example types the built-in catalog lacks.
	// +listType=atomic
	// +optional
	CatalogOverrides []InstanceType `json:"catalogOverrides,omitempty"`

	// WorkloadCluster is the cluster pools run in when it is not the one
	// Crossplane runs in. A Pool's spec.workloadCluster wins over it.
	// +optional
	WorkloadCluster *WorkloadCluster `json:"workloadCluster,omitempty"`

	// Sizing tunes the allocatable model that sizes pool nodes.
	// +optional
	Sizing *Sizing `json:"sizing,omitempty"`

	// Tenancy is what only the platform decides: which namespaces' pools
	// may place objects where, how large a pool may be, which instance
	// types it may use, and which namespaces' QueryServices may attach to
	// a namespace's pools. A Pool that asks for more is refused on the
	// claim, naming the setting that forbids it; what it composed stays.
	// +optional
	Tenancy *Tenancy `json:"tenancy,omitempty"`
}

// Sizing tunes the allocatable model that sizes pool nodes.
type Sizing struct {
	// NodeDaemonSets are the cluster's own DaemonSet pods that run on every
	// pool node (those that tolerate the pool's taint: kube-proxy, the CNI,
	// log and metrics agents), each with its pod's requests. Sizing
	// subtracts them from every node, as Karpenter does before it launches
	// one. Unset, the cluster's add-on defaults: on EKS with Karpenter
	// kube-proxy (100m) and aws-node (aws-node 25m and aws-eks-nodeagent
	// 25m), none elsewhere; [] counts none.
	// +listType=atomic
	// +optional
	NodeDaemonSets []NodeDaemonSet `json:"nodeDaemonSets,omitempty"`

	// VMMemoryOverheadPercent is the share of each type's memory the model
	// takes off as the VM's (firmware, kernel, hypervisor), a decimal from
	// 0 to below 1 such as "0.065". Set it where the cluster's Karpenter runs
	// with another vmMemoryOverheadPercent than its provider's default (the
	// GCP provider's chart sets 0.065), so burstpool predicts the
	// allocatable Karpenter does. Unset, the default of the cloud's
	// Karpenter provider: 0.075 on AWS and Azure, 0.07 on GCP
	// (docs/sizing.md).
	// +kubebuilder:validation:Pattern=`^0(\.[0-9]+)?$`
	// +optional
	VMMemoryOverheadPercent string `json:"vmMemoryOverheadPercent,omitempty"`
}

// NodeDaemonSet is one DaemonSet pod on every pool node.
type NodeDaemonSet struct {
	// Name of the DaemonSet, for messages.
	Name string `json:"name"`

	// CPU the pod requests (its containers' sum), for example 100m.
	// +optional
	CPU string `json:"cpu,omitempty"`

	// Memory the pod requests, for example 128Mi.
	// +optional
	Memory string `json:"memory,omitempty"`
}

// DefaultMaxExecutors is the largest maxExecutors (and minExecutors) a
// Pool may ask for when tenancy.maxExecutors is not set.
const DefaultMaxExecutors int32 = 1000

// DefaultMaxWarmImages is warmup.maxImages when it is not set.
const DefaultMaxWarmImages int32 = 32

// Tenancy bounds what Pool claims may ask for, for every namespace and per
// namespace.
type Tenancy struct {
	// Limits apply to Pools of every namespace that no entry of Namespaces
	// overrides.
	Limits `json:",inline"`

	// Namespaces grant Pools in some namespaces what only the settings may
	// choose. The first entry whose names match a Pool's namespace applies
	// to it; a Pool in no entry's namespace gets nothing beyond the
	// settings' own choices and the limits above.
	// +listType=atomic
	// +optional
	Namespaces []TenantNamespaces `json:"namespaces,omitempty"`
}

// Limits cap a Pool's size and its instance types.
type Limits struct {
	// MaxExecutors caps spec.maxExecutors and spec.minExecutors. Unset
	// everywhere, 1000: a claim cannot ask for a placeholder Deployment of
	// billions of replicas or a NodePool limit of as many nodes.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxExecutors *int32 `json:"maxExecutors,omitempty"`

	// MaxNodes caps the nodes a Pool may ask for: spec.maxExecutors divided
	// by spec.executorsPerNode, rounded up. Unset, maxExecutors alone
	// bounds it.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxNodes *int32 `json:"maxNodes,omitempty"`

	// InstanceFamilies are the instance families (r7gd) or types
	// (r7gd.4xlarge) a Pool may name in spec.instanceConfig or inherit
	// with spec.inheritNodeConfigFrom, and the only ones a Pool that names
	// none is sized from. Empty, any type of the catalog.
	// +listType=atomic
	// +optional
	InstanceFamilies []string `json:"instanceFamilies,omitempty"`
}

// TenantNamespaces is what Pools in some namespaces may ask for.
type TenantNamespaces struct {
	// Names are the namespaces this entry applies to, as glob patterns
	// (Go's path.Match: workspace-* matches workspace-a).
	// +kubebuilder:validation:MinItems=1
	// +listType=atomic
	Names []string `json:"names"`

	// AttachFrom are the namespaces (glob patterns) whose QueryServices
	// the Pools here may attach, beside the Pool's own namespace, which
	// always may. A QueryService attaches only when its Pool allows it
	// too.
	// +listType=atomic
	// +optional
	AttachFrom []string `json:"attachFrom,omitempty"`

	// WorkloadClusters are the provider-kubernetes ProviderConfigs a Pool
	// here may name in spec.workloadCluster.providerConfigName.
	// +listType=atomic
	// +optional
	WorkloadClusters []string `json:"workloadClusters,omitempty"`

	// ClusterIDs are the LKE and DOKS cluster IDs a Pool here may name in
	// spec.provisioning.clusterId.
	// +listType=atomic
	// +optional
	ClusterIDs []string `json:"clusterIds,omitempty"`

	// Methods are the provisioning methods a Pool here may name in
	// spec.provisioning.method.
	// +listType=atomic
	// +optional
	Methods []string `json:"methods,omitempty"`

	// Clouds are the clouds a Pool here may name in
	// spec.provisioning.cloud.
	// +listType=atomic
	// +optional
	Clouds []string `json:"clouds,omitempty"`

	// ManageNodePool lets a Pool here set spec.provisioning.manageNodePool.
	// +optional
	ManageNodePool bool `json:"manageNodePool,omitempty"`

	// ComposeNodeIAM lets a Pool here set
	// spec.provisioning.composeNodeIAM: true, which composes IAM roles in
	// the account of aws.nodeIAM.providerConfigName.
	// +optional
	ComposeNodeIAM bool `json:"composeNodeIAM,omitempty"`

	// Limits override the tenancy's limits for Pools here, field by field.
	Limits `json:",inline"`
}

// WorkloadCluster points pools at a workload cluster other than the
// management cluster.
type WorkloadCluster struct {
	// ProviderConfigName names a provider-kubernetes ProviderConfig
	// (kubernetes.crossplane.io/v1alpha1) whose kubeconfig reaches the
	// workload cluster. The pool's NodePool, NodeClass, warmup DaemonSets,
	// placeholders, PriorityClass, admission policy and storage agent are
	// composed there as provider-kubernetes Objects, and the capacity
	// provider observes that cluster through the same ProviderConfig.
	// Empty, pools run in the management cluster.
	// +optional
	ProviderConfigName string `json:"providerConfigName,omitempty"`
}

// EnvironmentConfigSelector selects the EnvironmentConfigs that hold the
// cluster's settings: one by name, or every one with the given labels
// (merged in name order, later names winning).
type EnvironmentConfigSelector struct {
	// Name of the EnvironmentConfig.
	// +kubebuilder:default=burstpool
	// +optional
	Name string `json:"name,omitempty"`

	// MatchLabels selects EnvironmentConfigs by label instead of by name.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// Provisioning is the default cloud and provisioning method.
type Provisioning struct {
	// Cloud the cluster runs on.
	// +kubebuilder:validation:Enum=aws;gcp;azure;linode;digitalocean;coreweave;kwok;onprem
	// +optional
	Cloud string `json:"cloud,omitempty"`

	// Method provisions pool nodes.
	// +kubebuilder:validation:Enum=karpenter;eks-auto-mode;lke;doks;coreweave;node-group;static
	// +optional
	Method string `json:"method,omitempty"`

	// ManageNodePool emits the cloud's node pool object for non-Karpenter
	// methods unless a Pool says otherwise.
	// +optional
	ManageNodePool bool `json:"manageNodePool,omitempty"`

	// ClusterID is the LKE or DOKS cluster ID for cloud node pool objects.
	// +optional
	ClusterID string `json:"clusterId,omitempty"`

	// Region is recorded as a tag on LKE and DOKS node pools.
	// +optional
	Region string `json:"region,omitempty"`

	// ProviderConfigName names the Crossplane ProviderConfig of LKE and DOKS
	// node pool managed resources.
	// +optional
	ProviderConfigName string `json:"providerConfigName,omitempty"`

	// CoreWeaveAutoscaling lets the cluster's Cluster Autoscaler size
	// CoreWeave pools (CKS runs it by default from Kubernetes 1.32): a
	// pool's NodePool gets autoscaling with minNodes for its warm slots
	// and maxNodes for maxExecutors, and burstpool no longer sets
	// targetNodes. Off, burstpool sets targetNodes from warm slots,
	// running and pending executors. Either way pools scale down IdleOnly.
	// +optional
	CoreWeaveAutoscaling bool `json:"coreWeaveAutoscaling,omitempty"`

	// DOKSNamespaced emits DigitalOcean's namespaced node pool
	// (kubernetes.digitalocean.m.crossplane.io) in the pool's namespace.
	// It is chosen automatically when only that CRD is installed.
	// +optional
	DOKSNamespaced bool `json:"doksNamespaced,omitempty"`
}

// SelectorTerm selects AWS subnets or security groups by tags, ID or name
// (name only for security groups).
type SelectorTerm struct {
	// Tags the resource must carry.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`

	// ID of the resource.
	// +optional
	ID string `json:"id,omitempty"`

	// Name of the security group.
	// +optional
	Name string `json:"name,omitempty"`
}

// NodeNetwork holds the settings EC2NodeClasses and EKS Auto Mode
// NodeClasses share: where pool nodes run and how their instances are
// tagged.
type NodeNetwork struct {
	// SubnetSelectorTerms pick the nodes' subnets. Defaults to the tag
	// karpenter.sh/discovery={clusterName}.
	// +listType=atomic
	// +optional
	SubnetSelectorTerms []SelectorTerm `json:"subnetSelectorTerms,omitempty"`

	// SecurityGroupSelectorTerms pick the nodes' security groups. Defaults
	// to the tag karpenter.sh/discovery={clusterName}.
	// +listType=atomic
	// +optional
	SecurityGroupSelectorTerms []SelectorTerm `json:"securityGroupSelectorTerms,omitempty"`

	// Tags are added to every instance.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}

// AWS configures EC2NodeClasses.
type AWS struct {
	NodeNetwork `json:",inline"`

	// Role is the IAM role of pool nodes. Set Role or InstanceProfile.
	// +optional
	Role string `json:"role,omitempty"`

	// InstanceProfile of pool nodes. Set Role or InstanceProfile.
	// +optional
	InstanceProfile string `json:"instanceProfile,omitempty"`

	// AMIAlias selects the node image, a family and a pinned version, for
	// example al2023@v20260724 or bottlerocket@v1.30.0. Changing it drifts
	// the pool's nodes, which Karpenter replaces only as they empty or
	// expire, or in karpenter.driftWindows, so running executors keep their
	// nodes (docs/install.md, "Rolling a new node image"). @latest drifts every node at each AMI
	// release; Karpenter advises against it outside pre-production.
	// +kubebuilder:default="al2023@v20260724"
	// +optional
	AMIAlias string `json:"amiAlias,omitempty"`

	// RootVolumePerImage is the room the node's volume that holds
	// container images (the root volume; Bottlerocket's data volume) gets
	// for each warm image, beside the 20Gi Karpenter gives it by default,
	// on types without local NVMe (those keep images on a RAID0 of their
	// instance store). Warmup pulls every warm image on every node, and
	// multi-GB images fill the default volume (DiskPressure evictions).
	// +kubebuilder:default="20Gi"
	// +optional
	RootVolumePerImage string `json:"rootVolumePerImage,omitempty"`

	// NodeIAM composes each pool's node IAM role, its policy attachments
	// and its EKS access entry with Upbound's provider-aws family, instead
	// of naming a role made by hand in Role. Needs the burstpool-aws
	// package (see docs/install.md).
	// +optional
	NodeIAM *NodeIAM `json:"nodeIAM,omitempty"`
}

// NodeIAM configures the node IAM objects burstpool composes on AWS.
type NodeIAM struct {
	// Enabled composes node IAM for every AWS Karpenter pool; a pool's
	// spec.provisioning.composeNodeIAM overrides it.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// PolicyARNs are the IAM policies attached to the node role. Empty, the
	// policies a Karpenter node needs: AmazonEKSWorkerNodePolicy,
	// AmazonEKS_CNI_Policy, AmazonEC2ContainerRegistryPullOnly and
	// AmazonSSMManagedInstanceCore.
	// +listType=atomic
	// +optional
	PolicyARNs []string `json:"policyARNs,omitempty"`

	// ExtraPolicyARNs are attached beside PolicyARNs (or the defaults).
	// +listType=atomic
	// +optional
	ExtraPolicyARNs []string `json:"extraPolicyARNs,omitempty"`

	// PermissionsBoundary is the ARN of the policy that bounds the node
	// role's permissions.
	// +optional
	PermissionsBoundary string `json:"permissionsBoundary,omitempty"`

	// Tags are put on the role and the access entry, beside e6data.io/pool.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`

	// ProviderConfigName names the provider-aws ProviderConfig of the IAM
	// and EKS managed resources. Empty, the provider's default.
	// +optional
	ProviderConfigName string `json:"providerConfigName,omitempty"`
}

// EKSAutoMode configures EKS Auto Mode NodeClasses.
type EKSAutoMode struct {
	NodeNetwork `json:",inline"`

	// Role is the IAM role of pool nodes (name, not ARN). Nodes of a custom
	// NodeClass join the cluster only when this role has an EKS access
	// entry of type EC2 with the AmazonEKSAutoNodePolicy.
	// +optional
	Role string `json:"role,omitempty"`

	// EphemeralStorageSize is the size of each node's ephemeral volume.
	// +kubebuilder:default="80Gi"
	// +optional
	EphemeralStorageSize string `json:"ephemeralStorageSize,omitempty"`

	// ClusterRoleTags says that the cluster's IAM role may apply custom
	// tags to the instances, volumes and network interfaces Auto Mode
	// launches: AWS's managed Auto Mode policies do not allow it, and a
	// NodeClass with spec.tags is not Ready on a cluster whose role lacks
	// the permissions (docs/install.md, "EKS Auto Mode"). On, pool
	// NodeClasses carry spec.tags (e6data.io/pool and tags); off, they
	// carry none, and tags are not applied. burstpool finds a pool's nodes
	// by their labels, never by tags.
	// +optional
	ClusterRoleTags bool `json:"clusterRoleTags,omitempty"`
}

// GCP configures GCENodeClasses.
type GCP struct {
	// ImageFamily of pool nodes: ContainerOptimizedOS, Ubuntu2404 or
	// Ubuntu2204.
	// +kubebuilder:validation:Enum=ContainerOptimizedOS;Ubuntu2404;Ubuntu2204
	// +kubebuilder:default=ContainerOptimizedOS
	// +optional
	ImageFamily string `json:"imageFamily,omitempty"`

	// ImageChannel is the GKE release channel the image follows; only
	// ContainerOptimizedOS images have one (Ubuntu images follow their
	// latest version).
	// +kubebuilder:validation:Enum=rapid;regular;stable;extended;cluster
	// +kubebuilder:default=stable
	// +optional
	ImageChannel string `json:"imageChannel,omitempty"`

	// ServiceAccount of pool nodes (an email).
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
}

// Azure configures AKSNodeClasses.
type Azure struct {
	// ImageFamily of pool nodes.
	// +kubebuilder:validation:Enum=Ubuntu;Ubuntu2204;Ubuntu2404;AzureLinux
	// +kubebuilder:default=AzureLinux
	// +optional
	ImageFamily string `json:"imageFamily,omitempty"`

	// VNETSubnetID places pool nodes in a subnet other than the cluster's.
	// +optional
	VNETSubnetID string `json:"vnetSubnetID,omitempty"`

	// OSDiskSizeGB of pool nodes.
	// +optional
	OSDiskSizeGB int32 `json:"osDiskSizeGB,omitempty"`

	// MaxPods of pool nodes. Unset, Karpenter's Azure provider chooses by
	// the cluster's network plugin (30 on Azure CNI with node subnet
	// addresses, which it reserves per pod in the subnet; 250 on overlay
	// or with no plugin; 110 with kubenet). AKS's reservations do not
	// depend on it, so sizing does not either.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=250
	// +optional
	MaxPods int32 `json:"maxPods,omitempty"`
}

// Karpenter tunes NodePools.
type Karpenter struct {
	// ConsolidateAfter is how long an empty pool node lives before Karpenter
	// removes it.
	// +kubebuilder:default="5m"
	// +optional
	ConsolidateAfter string `json:"consolidateAfter,omitempty"`

	// ExpireAfter is the longest a pool node lives; expiry drains a node
	// whatever its budgets, and terminationGracePeriod bounds how long its
	// executors still run. On EKS Auto Mode it is at most 504h less
	// terminationGracePeriod (480h with the default 24h): Auto Mode nodes
	// live at most 21 days.
	// +kubebuilder:default="720h"
	// +optional
	ExpireAfter string `json:"expireAfter,omitempty"`

	// TerminationGracePeriod is how long a query may need: once Karpenter
	// starts to remove a pool node (expiry, or a deletion), executors on it
	// that carry karpenter.sh/do-not-disrupt keep running this long before
	// they are deleted. Never leaves it unset, so Karpenter waits for them
	// without limit. EKS Auto Mode nodes live at most 21 days: there Never
	// and anything above 252h mean 24h, and expireAfter is shortened so
	// both fit.
	// +kubebuilder:default="24h"
	// +optional
	TerminationGracePeriod string `json:"terminationGracePeriod,omitempty"`

	// Weight ranks pool NodePools against the cluster's other NodePools.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=50
	// +optional
	Weight int32 `json:"weight,omitempty"`

	// InterruptionQueue names the SQS queue Karpenter's AWS provider reads
	// spot interruption warnings, rebalance recommendations and instance
	// state changes from: Karpenter's own setting (its Helm value
	// settings.interruptionQueue, the INTERRUPTION_QUEUE variable), which
	// burstpool does not configure. Without one, a spot node goes with its
	// instance and its executors fail without a drain. Spot pools on AWS
	// Karpenter warn while it is empty (docs/install.md, "Keeping running
	// queries").
	// +optional
	InterruptionQueue string `json:"interruptionQueue,omitempty"`

	// SpotNeighbourGenerations lets every spot pool's type set take types
	// of neighbouring generations of the chosen family (r6gd and r8gd for
	// r7gd) that hold the same executors per node; a pool opts in on its
	// own with spec.instanceConfig.spotNeighbourGenerations.
	// +optional
	SpotNeighbourGenerations bool `json:"spotNeighbourGenerations,omitempty"`

	// PinnedTypeStandIns lets a spot pool whose type is pinned
	// (spec.instanceConfig.instanceType, or inherited from a QueryService)
	// offer types of the pinned type's CPU and memory beside it
	// (r7gd.8xlarge for r6gd.8xlarge). Off, a pinned type is the only type
	// the pool's nodes use, and a spot pool of one type warns
	// (SpotDiversified False): one spot market holds all its nodes.
	// +optional
	PinnedTypeStandIns bool `json:"pinnedTypeStandIns,omitempty"`

	// DriftWindows are maintenance windows in which Karpenter may replace
	// drifted pool nodes (a new node image, node role or instance type):
	// the pool's NodePool gets a Drifted budget of the window's nodes while
	// the window is open and of 0 the rest of the week. Without a window a
	// drifted node goes only once it is empty or at expiry. A window that
	// names namespaces or pools applies to those pools only; every window
	// that applies to a pool opens it. Executors that carry
	// karpenter.sh/do-not-disrupt keep their node until they end, or until
	// terminationGracePeriod runs out (docs/install.md, "Rolling a new node
	// image").
	// +listType=atomic
	// +optional
	DriftWindows []DriftWindow `json:"driftWindows,omitempty"`
}

// DriftWindow is a weekly window in which drifted pool nodes may be
// replaced.
type DriftWindow struct {
	// Schedule is when the window opens, in UTC, as a cron expression of
	// one minute and one hour on some days of the week: "0 2 * * sun",
	// "30 1 * * mon-fri", "0 3 * * *", or @daily or @weekly.
	Schedule string `json:"schedule"`

	// Duration is how long the window stays open, in hours and minutes
	// (4h, 90m, 1h30m); windows of one pool may not cover the whole week.
	Duration string `json:"duration"`

	// Nodes is how many of the pool's nodes may be replaced at once while
	// the window is open: a count or a percentage ("10%").
	// +kubebuilder:default="10%"
	// +optional
	Nodes string `json:"nodes,omitempty"`

	// Namespaces limit the window to pools in these namespaces (glob
	// patterns, Go's path.Match). Empty, pools of every namespace.
	// +listType=atomic
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`

	// Pools limit the window to pools of these names (glob patterns).
	// Empty, pools of every name.
	// +listType=atomic
	// +optional
	Pools []string `json:"pools,omitempty"`
}

// NodeGroups configures the node groups of the node-group method, one
// block per cloud. Only the platform sets them: a Pool cannot name a
// cluster, a network or a node role.
type NodeGroups struct {
	// ProviderConfigName names the ProviderConfig of the node group
	// managed resources. Empty, the provider's default.
	// +optional
	ProviderConfigName string `json:"providerConfigName,omitempty"`

	// EKS configures EKS managed node groups (eks.aws.upbound.io
	// NodeGroup).
	// +optional
	EKS *EKSNodeGroups `json:"eks,omitempty"`

	// GKE configures GKE node pools (container.gcp.upbound.io NodePool).
	// +optional
	GKE *GKENodePools `json:"gke,omitempty"`

	// AKS configures AKS node pools (containerservice.azure.upbound.io
	// KubernetesClusterNodePool).
	// +optional
	AKS *AKSNodePools `json:"aks,omitempty"`
}

// EKSNodeGroups configures EKS managed node groups. Required: clusterName,
// region, subnetIDs, and nodeRoleARN.
type EKSNodeGroups struct {
	// ClusterName is the EKS cluster's name. Empty, the settings'
	// clusterName.
	// +optional
	ClusterName string `json:"clusterName,omitempty"`

	// Region of the cluster, for example us-east-1.
	// +optional
	Region string `json:"region,omitempty"`

	// SubnetIDs are the subnets pool nodes run in.
	// +listType=atomic
	// +optional
	SubnetIDs []string `json:"subnetIDs,omitempty"`

	// NodeRoleARN is the IAM role of pool nodes.
	// +optional
	NodeRoleARN string `json:"nodeRoleARN,omitempty"`

	// AMIType of pool nodes. Empty, AL2023 of the type's architecture
	// (AL2023_x86_64_STANDARD or AL2023_ARM_64_STANDARD).
	// +optional
	AMIType string `json:"amiType,omitempty"`

	// DiskSizeGiB of each node's root volume. Empty, EKS's default (20).
	// +kubebuilder:validation:Minimum=1
	// +optional
	DiskSizeGiB int32 `json:"diskSizeGiB,omitempty"`

	// Tags are added to every node group, beside burstpool's own.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}

// GKENodePools configures GKE node pools. Required: cluster and location.
type GKENodePools struct {
	// Cluster is the GKE cluster's name. Empty, the settings'
	// clusterName.
	// +optional
	Cluster string `json:"cluster,omitempty"`

	// Location of the cluster: a region or a zone.
	// +optional
	Location string `json:"location,omitempty"`

	// Project of the cluster. Empty, the ProviderConfig's project.
	// +optional
	Project string `json:"project,omitempty"`

	// NodeLocations are the zones pool nodes run in. Empty, the
	// cluster's.
	// +listType=atomic
	// +optional
	NodeLocations []string `json:"nodeLocations,omitempty"`

	// ImageType of pool nodes: COS_CONTAINERD or UBUNTU_CONTAINERD.
	// +kubebuilder:validation:Enum=COS_CONTAINERD;UBUNTU_CONTAINERD
	// +kubebuilder:default=COS_CONTAINERD
	// +optional
	ImageType string `json:"imageType,omitempty"`

	// ServiceAccount of pool nodes (an email). Empty, the Compute Engine
	// default service account.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
}

// AKSNodePools configures AKS node pools. Required: kubernetesClusterID.
type AKSNodePools struct {
	// KubernetesClusterID is the AKS cluster's Azure resource ID.
	// +optional
	KubernetesClusterID string `json:"kubernetesClusterID,omitempty"`

	// VNetSubnetID places pool nodes in a subnet. Empty, the cluster's.
	// +optional
	VNetSubnetID string `json:"vnetSubnetID,omitempty"`

	// OSSKU of pool nodes: Ubuntu or AzureLinux.
	// +kubebuilder:validation:Enum=Ubuntu;AzureLinux
	// +kubebuilder:default=AzureLinux
	// +optional
	OSSKU string `json:"osSKU,omitempty"`

	// Zones pool nodes run in. Empty, the region's choice.
	// +listType=atomic
	// +optional
	Zones []string `json:"zones,omitempty"`
}

// Warmup configures the warmup DaemonSets.
type Warmup struct {
	// HelperImage carries the static warm binary that warmup pods run.
	// +kubebuilder:default="ghcr.io/burstpool/warm:v0.1.0"
	// +optional
	HelperImage string `json:"helperImage,omitempty"`

	// PriorityClassName names an existing PriorityClass for the pool's
	// node agents (warmup and storage-agent pods), for example
	// system-node-critical where the cluster admits it outside
	// kube-system. Empty, the function composes one per pool,
	// "{pool}-node-agent", of value 1000000 that preempts lower
	// priorities, so an agent lands on a node packed with executors.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// MaxImages bounds a pool's warm set, and so its warmup DaemonSets:
	// the images of spec.imageConfig.cachedImages first, then those of
	// the most attached QueryServices. The Pool's ImagesWarm condition
	// names the images left out. Unset, 32.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxImages *int32 `json:"maxImages,omitempty"`

	// OpenAfter bounds how long a new pool node waits for the pool's warm
	// images before it takes executors. Karpenter pools launch nodes with
	// the startup taint e6data.io/warming={pool}:NoSchedule, which only
	// warmup pods tolerate; the capacity provider removes it once a warmup
	// pod of every warm image runs on the node, or once the node is
	// OpenAfter old, and then names the node and the images that were not
	// warm in the PoolCapacity's status.atProvider.openedCold and an event.
	// "0s" launches nodes without the taint: executors may land on a node
	// before its images are pulled. Nodes of clouds without Karpenter
	// (LKE, DOKS, CoreWeave) and existing nodes are never tainted.
	// +kubebuilder:default="5m"
	// +optional
	OpenAfter string `json:"openAfter,omitempty"`
}

// Placeholder configures the warm-slot placeholders.
type Placeholder struct {
	// PriorityClassName names an existing PriorityClass for placeholders.
	// Empty, the function emits one per pool, "{pool}-placeholder", with
	// Priority and preemptionPolicy Never.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// Priority of placeholders: below every real workload so executors
	// preempt them.
	// +kubebuilder:default=-10
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// Image placeholders run: a pause image.
	// +kubebuilder:default="registry.k8s.io/pause:3.10"
	// +optional
	Image string `json:"image,omitempty"`
}

// WarmCapacity chooses what holds a pool's warm slots.
type WarmCapacity struct {
	// Method holds the warm slots. Auto composes a CapacityBuffer
	// (autoscaling.x-k8s.io/v1beta1) where the cluster serves the kind,
	// keeps placeholders until an autoscaler has processed the buffer, and
	// keeps them for good when none does within autoscalerTimeout;
	// Placeholders always uses placeholder pods; CapacityBuffer uses the
	// buffer wherever the kind is served, processed or not.
	// +kubebuilder:validation:Enum=Auto;Placeholders;CapacityBuffer
	// +kubebuilder:default=Auto
	// +optional
	Method string `json:"method,omitempty"`

	// AutoscalerTimeout is how long Auto waits for an autoscaler to
	// process the pool's CapacityBuffer (its ReadyForProvisioning
	// condition True for its current generation) before placeholders hold
	// the warm slots instead.
	// +kubebuilder:default="2m"
	// +optional
	AutoscalerTimeout string `json:"autoscalerTimeout,omitempty"`
}

// WarmPolicy is the platform's part of pools' warm policies.
type WarmPolicy struct {
	// LeadTime is how long before a window opens (or a learned burst is
	// due) its warm slots rise, so that they are warm when it comes: at
	// least what a new node takes to run an executor. The default, 2m,
	// is above the 71 s make bench-burst measures on the simulated cloud
	// (a 45 s node launch and a 24.6 s image pull; docs/capacity.md, "The
	// warm slots' trade-off"); raise it where nodes or images take longer.
	// +kubebuilder:default="2m"
	// +optional
	LeadTime string `json:"leadTime,omitempty"`

	// Learned bounds the learned warm levels of pools whose
	// spec.warmPolicy.type is Learned.
	// +optional
	Learned *LearnedWarmPolicy `json:"learned,omitempty"`

	// Classes give the pools of some namespaces windows beside their own:
	// a Scheduled pool in a namespace that a class's namespaces match
	// keeps warm, in each of the class's windows, at least the window's
	// executors (within its maxExecutors and the tenancy caps). Every
	// class that matches applies.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Classes []WarmClass `json:"classes,omitempty"`
}

// LearnedWarmPolicy is the target and the caps of learned warm levels.
type LearnedWarmPolicy struct {
	// TargetWarmPercent is the share of executors, in percent, that a
	// learned warm level should start on a node that was there before
	// them, for pools that set no target of their own
	// (spec.warmPolicy.learned.targetWarmPercent).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=90
	// +optional
	TargetWarmPercent int32 `json:"targetWarmPercent,omitempty"`

	// MaxSlots caps a pool's learned warm level in slots; 0 or unset, only
	// the pool's maxExecutors and the tenancy caps do.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxSlots int32 `json:"maxSlots,omitempty"`

	// MaxDollarsPerHour caps what a pool's learned warm slots cost per
	// hour, a decimal such as "12.50" (a slot costs its node's price, from
	// capacity.pricing, divided by executorsPerNode); unset, no cap.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}(\.[0-9]{1,6})?$`
	// +optional
	MaxDollarsPerHour string `json:"maxDollarsPerHour,omitempty"`
}

// WarmClass is a set of windows for the pools of some namespaces.
type WarmClass struct {
	// Namespaces are the namespaces whose pools get the windows, as glob
	// patterns (Go's path.Match: analytics-* matches analytics-eu).
	// +kubebuilder:validation:MinItems=1
	// +listType=atomic
	Namespaces []string `json:"namespaces"`

	// Windows are the class's windows, with the fields of a Pool's
	// spec.warmPolicy.windows.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Windows []poolv1alpha1.WarmWindow `json:"windows"`
}

// Capacity configures PoolCapacity managed resources.
type Capacity struct {
	// ProviderConfigName names the burstpool provider's ProviderConfig.
	// +kubebuilder:default=default
	// +optional
	ProviderConfigName string `json:"providerConfigName,omitempty"`

	// DeleteFailedExecutors lets the provider delete pool executors that
	// failed.
	// +optional
	DeleteFailedExecutors bool `json:"deleteFailedExecutors,omitempty"`

	// UnauthorizedExecutors is the default of a Pool's
	// spec.unauthorizedExecutors: what happens to pool executors of
	// QueryServices the pool does not attach. Deny rejects them at
	// admission (a ValidatingAdmissionPolicy per pool) and reports any that
	// run already; Evict deletes them once they run; Report only lists
	// them.
	// +kubebuilder:validation:Enum=Report;Evict;Deny
	// +kubebuilder:default=Deny
	// +optional
	UnauthorizedExecutors string `json:"unauthorizedExecutors,omitempty"`

	// Pricing sets what pool nodes cost per hour, for the cost the
	// provider counts (docs/capacity.md): the catalog of on-demand
	// prices, a discount per capacity type (spot, or a savings plan's
	// rate on on-demand), and prices per instance type from the team's
	// own billing. Without it, on-demand prices come from the embedded
	// catalogs and spot nodes are priced as on-demand ones.
	// +optional
	Pricing *capv1alpha1.Pricing `json:"pricing,omitempty"`
}

// InstanceType is a sizing catalog entry.
type InstanceType struct {
	// Name of the instance type, for example r7gd.16xlarge.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// CPU cores of the instance type.
	CPU string `json:"cpu"`

	// Memory of the instance type, for example 512Gi.
	Memory string `json:"memory"`

	// Arch is amd64 or arm64.
	// +kubebuilder:validation:Enum=amd64;arm64
	// +optional
	Arch string `json:"arch,omitempty"`

	// LocalNVMeGiB is the instance store size; types with one get a RAID0
	// instance store on AWS.
	// +optional
	LocalNVMeGiB int64 `json:"localNVMeGiB,omitempty"`
}
