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
// What executors can request on a node is modelled the way Karpenter
// predicts a node's allocatable before launching it, less the pool's own
// DaemonSets:
//
//	allocatable = capacity - kubeReserved - evictionThreshold - daemonSets
//
// All arithmetic is integer, in milli-CPU and bytes; every reservation is
// rounded up, so allocatable is never overstated.
//
// Capacity. CPU is the type's vCPU count. Memory is the nominal memory less
// the VM overhead on every real cloud: Karpenter's default
// vmMemoryOverheadPercent of 0.075, taken as ceil(MiB x 0.075) MiB
// (VMMemoryOverheadPermille). A 128Gi type has 131072Mi - 9831Mi = 121241Mi.
// KWOK nodes are simulated and have no VM overhead.
//
// CPU kube-reserved, in brackets of the vCPU count:
//
//	aws, gcp, linode, digitalocean, coreweave (Karpenter's AWS provider,
//	GKE):   6% of the 1st core, 1% of the 2nd, 0.5% of the 3rd and 4th,
//	        0.25% of every core above 4   (16 vCPU: 110m, 64 vCPU: 230m)
//	azure (Karpenter's Azure provider, AKS):
//	        6% of the 1st core, 4% of the 2nd, 2% of the 3rd and 4th,
//	        1% of every core above 4      (16 vCPU: 260m, 64 vCPU: 740m)
//	kwok (Karpenter's kwok provider): 100m
//
// Memory kube-reserved:
//
//	aws:   11Mi x maxPods + 255Mi, with maxPods = MaxPods (110): 1465Mi.
//	       Karpenter's AWS provider uses the node's maxPods; pools set the
//	       kubelet's maxPods to MaxPods, so the ENI-derived limit never
//	       applies.
//	gcp, azure, linode, digitalocean, coreweave (GKE; Karpenter's Azure
//	provider): 25% of the first 4Gi, 20% of the next 4Gi, 10% of the next
//	       8Gi, 6% of the next 112Gi, 2% above 128Gi, rounded up to a MiB
//	       (255Mi for nodes under 1Gi on GKE). Linode, DigitalOcean and
//	       CoreWeave publish no formula for Karpenter-style prediction; the
//	       GKE brackets are used as the conservative choice.
//	kwok:  10Mi
//
// Eviction threshold (memory.available, hard): 100Mi (EvictionHardMemory)
// everywhere but Azure, where Karpenter's Azure provider uses 750Mi, and
// KWOK, which has none.
//
// DaemonSets. Each pool DaemonSet pod (warmup, storage agent, any the user
// declares) takes its effective request, as the scheduler counts it: per
// resource, the larger of its largest init container and the sum of its
// regular containers. Sidecar (restartable) init containers and pod
// overhead are not modelled.
//
// For example an r7gd.4xlarge (16 vCPU, 128Gi) on AWS has 16000m - 110m =
// 15890m CPU and 121241Mi - 1465Mi - 100Mi = 119676Mi (116.8Gi) of memory
// before DaemonSets.
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
