// Package sizing ships in the composition function: it chooses the instance
// type of a pool's nodes. It is pure: it reads only the instance catalogs
// embedded in the binary, takes plain values and returns plain values, so the
// composition function gathers the pool, its attached QueryServices and its
// status, calls Derive, and writes what it returns.
//
// # Catalogs
//
// Each cloud has a versioned data file under catalogs/ (aws, gcp, azure,
// linode, digitalocean, coreweave, and kwok for simulated clusters) listing
// its instance types with vCPU, memory, arch, local NVMe and an on-demand
// price in a reference region. Every family names where its figures come
// from (specsSource, priceSource); prices are approximate and only rank
// types. LoadCatalog parses a file once per process and hands out copies;
// WithOverrides adds or replaces types (on-premises machines, types newer
// than the file). KWOKInstanceTypesJSON renders any catalog into the file
// Karpenter's kwok provider reads from INSTANCE_TYPES_FILE_PATH.
//
// # Allocatable
//
// What executors can request on a node is modelled the way each cloud's
// Karpenter provider predicts a node's allocatable before launching it,
// less the DaemonSets on every pool node:
//
//	allocatable = capacity - kubeReserved - systemReserved - evictionThreshold - daemonSets
//
// Each cloud follows its provider's own arithmetic, float rounding
// included, so the model and Karpenter agree to the byte (the providers'
// files are named on each function of allocatable.go):
//
//	aws    capacity: the nominal MiB, less CMAMemory (64Mi) on arm64, less
//	       ceil(7.5%) of that in MiB (vmMemoryOverheadPercent, the AWS
//	       provider's default; each cloud's default is
//	       DefaultVMMemoryOverheadPercent, and Overhead overrides it).
//	       kube-reserved CPU: 6% of the 1st core, 1% of the 2nd, 0.5% of the
//	       3rd and 4th, 0.25% above 4, each bracket truncated (16 vCPU:
//	       110m). kube-reserved memory: 11Mi x maxPods + 255Mi, maxPods the
//	       pods the type's network holds (InstanceType.Pods, the VPC CNI's
//	       ENI-limited pods) at most MaxPods (110): 1465Mi on most sizes,
//	       343Mi on r7gd.medium (8 pods). Eviction: 100Mi.
//	gcp    capacity: the bytes less 7% of them (the GCP provider's
//	       default), truncated. kube-reserved:
//	       the same CPU brackets; memory 25% of the first 4Gi, 20% of the
//	       next 4Gi, 10% of the next 8Gi, 6% up to 128Gi, 2% above, each
//	       bracket truncated to a MiB (255Mi at most 1Gi). System-reserved:
//	       KubeProxyCPU (100m) for GKE's kube-proxy. Eviction: 100Mi.
//	azure  capacity: the whole GiB less ceil(7.5%) in bytes. kube-reserved:
//	       CPU 6%, 4%, 2% of the 3rd and 4th core, 1% above; memory the GKE
//	       brackets; each total truncated (to a milli-CPU, a MiB). Eviction:
//	       750Mi.
//	linode, digitalocean, coreweave: no Karpenter provider; capacity as on
//	       AWS without CMA, the GKE brackets rounded up (the conservative
//	       choice), 100Mi eviction.
//	kwok   (Karpenter's kwok provider): 100m and 10Mi, nothing else.
//
// Pods. A node runs at most maxPods pods, its DaemonSet pods included, so
// it holds at most maxPods less one pod per DaemonSet executors.
//
// KubeletFor is what a NodeClass must set for the nodes to reserve what
// the model subtracts (maxPods, and on AWS the memory kube-reserved).
//
// DaemonSets. Each DaemonSet pod on every pool node (warmup, storage agent,
// the cluster's own, any the user declares) takes its effective request,
// as the scheduler counts it: per resource, the larger of its largest init
// container and the sum of its regular containers. Sidecar (restartable)
// init containers and pod overhead are not modelled.
//
// For example an r7gd.4xlarge (16 vCPU, 128Gi, arm64) on AWS has 16000m -
// 110m = 15890m CPU and 131008Mi - 9826Mi - 1465Mi - 100Mi = 119617Mi of
// memory before DaemonSets.
//
// # Derivation
//
// Derive applies, first match wins: a pinned spec.instanceConfig.instanceType;
// the type of the QueryService named by spec.inheritNodeConfigFrom; the
// smallest size of spec.instanceConfig.instanceFamily that holds
// executorsPerNode of the largest attached executor (per resource); the
// cheapest catalog type that does. A node must hold executorsPerNode
// executors of every attached QueryService; one that no candidate holds,
// or that the pinned type does not, is reported incompatible with a message
// that says what it needs, what the pool offers and what to change.
//
// The first candidate that holds exactly ExecutorsPerNode of the largest
// executor (per resource) is preferred to a cheaper or smaller one that
// holds more; bare-metal types are candidates only with AllowMetal. An
// executor without a CPU or memory request is incompatible and sizes
// nothing.
//
// When sizing (family or catalog), the previous type weighs in. Before
// ExecutorsHaveRun the pool follows the attached executors; after, it keeps
// Previous unless AutoUpgrade moves it to a candidate no smaller in CPU and
// memory that holds them all. Nothing attached, or nothing that fits, keeps
// Previous either way; Result.Kept says why it was kept. With spot and no
// pinned type, Offered (and SpotTypes) add the types that hold exactly as
// many executors as the chosen one, of its arch, with local NVMe when it
// has it, of its family (or neighbouring generations with SpotNeighbours),
// cheapest first, each with why. docs/sizing.md states the rules.
package sizing
