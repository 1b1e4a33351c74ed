package sizing

import (
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MaxPods is the most pods the allocatable model lets a node run: the
// kubelet's default maxPods, which pools set on every Karpenter cloud
// unless the node's network holds fewer (InstanceType.Pods, on AWS the VPC
// CNI's ENI-limited pods: 8 on r7gd.medium). AWS memory kube-reserved
// depends on it.
const MaxPods = 110

// EvictionHardMemory is the kubelet's default memory.available hard
// eviction threshold, in bytes (100Mi).
const EvictionHardMemory = 100 * mebibyte

// The share of nominal memory that a VM does not report as capacity
// (firmware, kernel, hypervisor), as each cloud's Karpenter provider takes
// it off before launch when its vmMemoryOverheadPercent setting is left at
// the default. A platform that sets it in its Karpenter chart sets the same
// value in Overhead.VMMemoryOverheadPercent (the function's
// sizing.vmMemoryOverheadPercent setting).
const (
	// AWSVMMemoryOverheadPercent is aws/karpenter-provider-aws v1.14.1's
	// default (pkg/operator/options/options.go, flag
	// vm-memory-overhead-percent; its chart's
	// settings.vmMemoryOverheadPercent is the same 0.075).
	AWSVMMemoryOverheadPercent = 0.075
	// GCPVMMemoryOverheadPercent is cloudpilot-ai/karpenter-provider-gcp's
	// default, the same at v0.5.0 and at commit 417f047b
	// (pkg/operator/options/options.go, flag vm-memory-overhead-percent,
	// 0.07). Its chart sets controller.settings.vmMemoryOverheadPercent to
	// 0.065 (charts/karpenter/values.yaml): a cluster installed from that
	// chart with its values sets 0.065 in the settings.
	GCPVMMemoryOverheadPercent = 0.07
	// AzureVMMemoryOverheadPercent is Azure/karpenter-provider-azure's
	// default, the same at v1.14.2 and at commit 352646f5
	// (pkg/operator/options/options.go,
	// flag vm-memory-overhead-percent; its chart's vmMemoryOverheadPercent
	// is the same 0.075).
	AzureVMMemoryOverheadPercent = 0.075
	// marginVMMemoryOverheadPercent is the share taken on clouds without a
	// Karpenter provider (Linode, DigitalOcean, CoreWeave, on-premises):
	// AWS's, a margin rather than a vendor's figure.
	marginVMMemoryOverheadPercent = 0.075
)

// DefaultVMMemoryOverheadPercent is the VM memory overhead the model takes
// off a type's memory on cloud c when Overhead sets none: the default of
// c's Karpenter provider, 0 on kwok (whose provider takes none).
func DefaultVMMemoryOverheadPercent(c Cloud) float64 {
	switch c {
	case CloudAWS:
		return AWSVMMemoryOverheadPercent
	case CloudGCP:
		return GCPVMMemoryOverheadPercent
	case CloudAzure:
		return AzureVMMemoryOverheadPercent
	case CloudKWOK:
		return 0
	}
	return marginVMMemoryOverheadPercent
}

// CMAMemory is the memory Karpenter's AWS provider takes from arm64
// (Graviton) types before the VM overhead: their contiguous memory
// allocator reservation, 64Mi.
const CMAMemory = 64 * mebibyte

// KubeProxyCPU is the CPU, in milli-CPU, that Karpenter's GCP provider
// reserves on every node for GKE's kube-proxy mirror pod (system-reserved).
const KubeProxyCPU = 100

const (
	mebibyte = int64(1) << 20
	gibibyte = int64(1) << 30

	// limit caps quantities before integer arithmetic, so absurd requests
	// and capacities saturate instead of overflowing.
	limit = int64(1) << 61
)

// Resources are amounts of CPU and memory.
type Resources struct {
	CPU    resource.Quantity
	Memory resource.Quantity
}

// Overhead is the per-node overhead a pool adds beyond what the cloud
// reserves (kube-reserved, eviction threshold, VM overhead).
type Overhead struct {
	// DaemonSets holds one entry per DaemonSet pod on every pool node: the
	// warmup DaemonSets, the storage agent and any the user declares
	// (cluster DaemonSets that tolerate the pool taint belong here too).
	DaemonSets []PodRequests
	// VMMemoryOverheadPercent replaces the cloud's default VM memory
	// overhead (DefaultVMMemoryOverheadPercent) when set: a share from 0
	// to 1, as the cluster's Karpenter provider is configured.
	VMMemoryOverheadPercent *float64
}

// vmMemory is the VM memory overhead the model takes on cloud c.
func (o Overhead) vmMemory(c Cloud) float64 {
	if o.VMMemoryOverheadPercent != nil {
		return *o.VMMemoryOverheadPercent
	}
	return DefaultVMMemoryOverheadPercent(c)
}

// PodRequests are the resource requests of one pod's containers.
type PodRequests struct {
	// Init are the init containers' requests.
	Init []Resources
	// Containers are the regular containers' requests.
	Containers []Resources
}

// Effective returns what the scheduler reserves for the pod: per resource,
// the larger of the largest init container request and the sum of the
// regular containers' requests (init containers run one at a time, before
// the others). Negative requests count as zero.
func (p PodRequests) Effective() Resources {
	cpu, mem := p.effective()
	return Resources{CPU: *resource.NewMilliQuantity(cpu, resource.DecimalSI), Memory: *resource.NewQuantity(mem, resource.BinarySI)}
}

func (p PodRequests) effective() (cpu, mem int64) {
	var initCPU, initMem int64
	for _, r := range p.Init {
		initCPU = max(initCPU, milli(r.CPU))
		initMem = max(initMem, value(r.Memory))
	}
	for _, r := range p.Containers {
		cpu = satAdd(cpu, milli(r.CPU))
		mem = satAdd(mem, value(r.Memory))
	}
	return max(cpu, initCPU), max(mem, initMem)
}

// sum returns the milli-CPU and bytes the DaemonSet pods take on a node.
func (o Overhead) sum() (cpu, mem int64) {
	for _, p := range o.DaemonSets {
		c, m := p.effective()
		cpu, mem = satAdd(cpu, c), satAdd(mem, m)
	}
	return cpu, mem
}

// Allocatable returns what executors can request on one node of type it on
// cloud c once the cloud's reservations and the pool's DaemonSets are
// taken: the node's allocatable (capacity minus kube-reserved, system-
// reserved and the eviction threshold, as Karpenter computes it for the
// cloud) minus the effective requests of o's DaemonSet pods, never below
// zero. The formulas are in the package documentation.
func Allocatable(c Cloud, it InstanceType, o Overhead) Resources {
	dsCPU, dsMem := o.sum()
	cpu, mem := allocatable(c, &it, dsCPU, dsMem, o.vmMemory(c))
	return Resources{CPU: *resource.NewMilliQuantity(cpu, resource.DecimalSI), Memory: *resource.NewQuantity(mem, resource.BinarySI)}
}

// NodeAllocatable returns the node's allocatable as Karpenter predicts it
// before launch, with no pool DaemonSets taken: Allocatable with an empty
// Overhead.
func NodeAllocatable(c Cloud, it InstanceType) Resources {
	return Allocatable(c, it, Overhead{})
}

// Kubelet is what the allocatable model assumes of a node's kubelet on one
// cloud, for the pool's NodeClass to set, so the nodes reserve what the
// model subtracts. A zero field is not assumed (the cloud's own default,
// which the model reproduces, applies).
type Kubelet struct {
	// MaxPods is the kubelet's maxPods.
	MaxPods int32
	// KubeReservedMemory is the memory kube-reserved on every size, in
	// bytes; 0 where it depends on the size (CPU kube-reserved always
	// does, so it is never set).
	KubeReservedMemory int64
	// EvictionHardMemory is the memory.available hard eviction threshold,
	// in bytes.
	EvictionHardMemory int64
}

// KubeletFor returns what the model assumes of the kubelet of the nodes of
// a NodeClass on cloud c that launches the given types: maxPods is the
// fewest pods any of them holds (MaxPods, or the type's network limit),
// so no node is promised more pods than its network can address, and on
// AWS the memory kube-reserved follows from it (11Mi x maxPods + 255Mi).
// A type offered with more pods than maxPods then reserves less than the
// model subtracts for it, never more.
func KubeletFor(c Cloud, types ...InstanceType) Kubelet {
	m := modelFor(c)
	pods := int64(MaxPods)
	for i := range types {
		pods = min(pods, maxPods(c, &types[i]))
	}
	switch c {
	case CloudKWOK:
		return Kubelet{}
	case CloudAzure:
		// AKS reserves by size, not by pods: the NodeClass leaves maxPods
		// to the cluster's network plugin.
		return Kubelet{EvictionHardMemory: m.eviction}
	case CloudAWS:
		return Kubelet{MaxPods: int32(pods), KubeReservedMemory: m.memory(0, pods), EvictionHardMemory: m.eviction}
	default:
		return Kubelet{MaxPods: int32(pods), EvictionHardMemory: m.eviction}
	}
}

// allocatable works in milli-CPU and bytes; vmMemory is the VM memory
// overhead, a share.
func allocatable(c Cloud, it *InstanceType, dsCPU, dsMem int64, vmMemory float64) (int64, int64) {
	m := modelFor(c)
	cpu, mem := milli(it.CPU), value(it.Memory)
	cpuOut := cpu - m.reservedCPU(cpu) - dsCPU
	capMem := mem
	if m.capacity != nil {
		capMem = m.capacity(mem, it.Arch, vmMemory)
	}
	memOut := capMem - m.reservedMemory(mem, maxPods(c, it)) - m.eviction - dsMem
	return max(cpuOut, 0), max(memOut, 0)
}

// maxPods is the pods one node of it runs under the model: MaxPods, or
// fewer where the node's network holds fewer.
func maxPods(c Cloud, it *InstanceType) int64 {
	if c == CloudAWS && it.Pods > 0 {
		return min(it.Pods, MaxPods)
	}
	return MaxPods
}

// model is how one cloud's nodes reserve resources, as that cloud's
// Karpenter provider predicts a node's allocatable. Each function follows
// the provider's own arithmetic, float rounding included, so the model and
// Karpenter agree to the byte.
type model struct {
	// capacity is the memory capacity of a node of nominal memory mem
	// (bytes) and arch, less the VM memory overhead vmMemory (a share);
	// nil when it is the nominal memory.
	capacity func(mem int64, arch string, vmMemory float64) int64
	// cpu is the milli-CPU kube- and system-reserved of a node of cpu
	// milli-CPU.
	cpu func(cpu int64) int64
	// memory is the bytes kube- and system-reserved of a node of nominal
	// memory mem running pods pods.
	memory func(mem, pods int64) int64
	// eviction is the memory.available hard eviction threshold.
	eviction int64
}

func (m model) reservedCPU(cpu int64) int64 { return m.cpu(cpu) }

func (m model) reservedMemory(mem, pods int64) int64 { return m.memory(mem, pods) }

var (
	// CPU brackets Karpenter's AWS and GCP providers use (GKE's): 6% of
	// the first core, 1% of the second, 0.5% of the next two, 0.25%
	// above four.
	cpuTiersEKS = []tier{{1000, 6000}, {2000, 1000}, {4000, 500}, {math.MaxInt64, 250}}
	// CPU brackets of Karpenter's Azure provider (AKS): 6%, 4%, 2% of the
	// next two, 1% above four.
	cpuTiersAKS = []tier{{1000, 6000}, {2000, 4000}, {4000, 2000}, {math.MaxInt64, 1000}}
	// Memory brackets of GKE and Karpenter's Azure provider: 25% of the
	// first 4Gi, 20% of the next 4Gi, 10% of the next 8Gi, 6% up to 128Gi,
	// 2% above.
	memTiersGKE = []tier{{4 * gibibyte, 25000}, {8 * gibibyte, 20000}, {16 * gibibyte, 10000}, {128 * gibibyte, 6000}, {math.MaxInt64, 2000}}
)

func modelFor(c Cloud) model {
	switch c {
	case CloudAWS:
		return model{capacity: awsCapacity, cpu: floorTiers(cpuTiersEKS), memory: awsKubeReserved, eviction: EvictionHardMemory}
	case CloudGCP:
		return model{capacity: gcpCapacity, cpu: withFixed(floorTiers(cpuTiersEKS), KubeProxyCPU), memory: gcpKubeReserved, eviction: EvictionHardMemory}
	case CloudAzure:
		return model{capacity: azureCapacity, cpu: azureReservedCPU, memory: azureKubeReserved, eviction: 750 * mebibyte}
	case CloudKWOK:
		return model{cpu: func(int64) int64 { return 100 }, memory: func(int64, int64) int64 { return 10 * mebibyte }}
	default: // Linode, DigitalOcean, CoreWeave and any other.
		return model{capacity: mibCapacity, cpu: ceilTiers(cpuTiersEKS), memory: gkeCeil, eviction: EvictionHardMemory}
	}
}

// awsCapacity is Karpenter's AWS provider's memory capacity: the nominal
// MiB, less CMAMemory on arm64, less the VM overhead of that rounded up to
// a MiB (pkg/providers/instancetype/types.go, memory).
func awsCapacity(mem int64, arch string, vmMemory float64) int64 {
	if arch == ArchARM64 {
		mem -= CMAMemory
	}
	return mibCapacity(mem, arch, vmMemory)
}

// mibCapacity is the whole MiB of mem less the VM overhead of them rounded
// up to a MiB.
func mibCapacity(mem int64, _ string, vmMemory float64) int64 {
	mib := max(mem/mebibyte, 0)
	overhead := int64(math.Ceil(float64(mib*mebibyte) * vmMemory / 1024 / 1024))
	return max(mib-overhead, 0) * mebibyte
}

// gcpCapacity is Karpenter's GCP provider's: the bytes less the VM
// overhead of them, truncated (pkg/providers/instancetype/types.go,
// memory).
func gcpCapacity(mem int64, _ string, vmMemory float64) int64 {
	return mem - int64(float64(mem)*vmMemory)
}

// azureCapacity is Karpenter's Azure provider's: the whole GiB less the VM
// overhead of them, rounded up to a byte (CalculateMemoryWithoutOverhead).
func azureCapacity(mem int64, _ string, vmMemory float64) int64 {
	b := mem / gibibyte * gibibyte
	return b - int64(math.Ceil(float64(b)*vmMemory))
}

// awsKubeReserved is 11Mi a pod plus 255Mi.
func awsKubeReserved(_, pods int64) int64 {
	return (11*pods + 255) * mebibyte
}

// gcpKubeReserved is GKE's memory brackets on whole MiB, each bracket's
// share truncated to a MiB; 255Mi on nodes of at most 1Gi
// (ResolveReservedMemoryMiB).
func gcpKubeReserved(mem, _ int64) int64 {
	mib := mem / mebibyte
	if mib <= 1024 {
		return 255 * mebibyte
	}
	var r, lower int64
	for _, t := range memTiersGKE {
		if mib <= lower {
			break
		}
		upper := min(mib, t.upTo/mebibyte)
		r += int64(float64(upper-lower) * t.share())
		lower = t.upTo / mebibyte
	}
	return r * mebibyte
}

// azureKubeReserved is AKS's memory brackets over the GiB as a float,
// truncated to a MiB (KubeReservedResources).
func azureKubeReserved(mem, _ int64) int64 {
	return int64(1024*taxed(memTiersGKE, float64(mem)/float64(gibibyte), float64(gibibyte))) * mebibyte
}

// azureReservedCPU is AKS's CPU brackets over the vCPUs as a float,
// truncated to a milli-CPU (KubeReservedResources).
func azureReservedCPU(cpu int64) int64 {
	return int64(1000 * taxed(cpuTiersAKS, float64(cpu)/1000, 1000))
}

// taxed sums each bracket's share of amount as Karpenter's Azure provider
// does (TaxBrackets.Calculate), with the brackets' bounds divided by unit.
func taxed(ts []tier, amount, unit float64) float64 {
	var tax, lower float64
	for _, t := range ts {
		if lower > amount {
			continue
		}
		upper := math.MaxFloat64
		if t.upTo != math.MaxInt64 {
			upper = float64(t.upTo) / unit
		}
		tax += (min(upper, amount) - lower) * t.share()
		lower = upper
	}
	return tax
}

// floorTiers is a bracketed reservation whose every bracket's share is
// truncated to a whole unit, as Karpenter's AWS and GCP providers compute
// CPU kube-reserved.
func floorTiers(ts []tier) func(int64) int64 {
	return func(amount int64) int64 {
		var r, lower int64
		for _, t := range ts {
			if amount <= lower {
				break
			}
			r += int64(float64(min(amount, t.upTo)-lower) * t.share())
			lower = t.upTo
		}
		return r
	}
}

// ceilTiers is a bracketed reservation rounded up to a whole unit.
func ceilTiers(ts []tier) func(int64) int64 {
	return func(amount int64) int64 { return tiered(ts, amount) }
}

// withFixed adds a fixed reservation to f's.
func withFixed(f func(int64) int64, fixed int64) func(int64) int64 {
	return func(amount int64) int64 { return f(amount) + fixed }
}

// gkeCeil is GKE's memory brackets rounded up to a MiB, and 255Mi below
// 1Gi: the conservative choice on clouds that publish no formula.
func gkeCeil(mem, _ int64) int64 {
	if mem < gibibyte {
		return 255 * mebibyte
	}
	return ceilDiv(tiered(memTiersGKE, mem), mebibyte) * mebibyte
}

// tier is one bracket of a tiered reservation: the share rate (in parts
// per 100000) of the amount up to upTo (exclusive of the previous tier's
// bound).
type tier struct {
	upTo int64
	rate int64
}

// share is the tier's rate as a fraction (0.06 for 6%).
func (t tier) share() float64 { return float64(t.rate) / 100000 }

// tiered sums each bracket's share of amount, rounded up to a whole unit.
func tiered(ts []tier, amount int64) int64 {
	var whole, frac, lower int64 // whole units, and a remainder in 1/100000 units
	for _, t := range ts {
		if amount <= lower {
			break
		}
		in := min(amount, t.upTo) - lower
		whole += in / 100000 * t.rate
		frac += in % 100000 * t.rate
		lower = t.upTo
	}
	return whole + ceilDiv(frac, 100000)
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return a / b
	}
	return (a + b - 1) / b
}

func satAdd(a, b int64) int64 {
	return min(a+b, limit) // both at most limit, so a+b cannot overflow
}

// milli returns q in thousandths, clamped to [0, limit].
func milli(q resource.Quantity) int64 {
	if q.Sign() <= 0 {
		return 0
	}
	if q.CmpInt64(limit/1000) >= 0 {
		return limit
	}
	return min(q.MilliValue(), limit)
}

// value returns q rounded up to a whole number, clamped to [0, limit].
func value(q resource.Quantity) int64 {
	if q.Sign() <= 0 {
		return 0
	}
	if q.CmpInt64(limit) >= 0 {
		return limit
	}
	return q.Value()
}
