package sizing

import (
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MaxPods is the kubelet's maxPods that the allocatable model assumes on
// every Karpenter-provisioned cloud. Pool nodes run few pods (executors,
// the pool's DaemonSets and the cluster's), so pools set the kubelet's
// maxPods to this value rather than the ENI-derived limit; AWS memory
// kube-reserved depends on it.
const MaxPods = 110

// EvictionHardMemory is the kubelet's default memory.available hard
// eviction threshold, in bytes (100Mi).
const EvictionHardMemory = 100 * mebibyte

// VMMemoryOverheadPermille is the share of nominal memory, in thousandths,
// that a VM does not report as capacity (firmware, kernel, hypervisor). It
// is Karpenter's default vmMemoryOverheadPercent, 0.075.
const VMMemoryOverheadPermille = 75

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
	cpu, mem := allocatable(c, milli(it.CPU), value(it.Memory), dsCPU, dsMem)
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

// KubeletFor returns what the model assumes of the kubelet on cloud c.
func KubeletFor(c Cloud) Kubelet {
	m := modelFor(c)
	switch c {
	case CloudKWOK:
		return Kubelet{}
	case CloudAWS:
		return Kubelet{MaxPods: MaxPods, KubeReservedMemory: m.fixedMem, EvictionHardMemory: m.eviction}
	default:
		return Kubelet{MaxPods: MaxPods, EvictionHardMemory: m.eviction}
	}
}

// allocatable works in milli-CPU and bytes.
func allocatable(c Cloud, cpu, mem, dsCPU, dsMem int64) (int64, int64) {
	m := modelFor(c)
	cpuOut := cpu - m.reservedCPU(cpu) - dsCPU
	capMem := mem
	if m.vmOverhead {
		mib := mem / mebibyte
		capMem = (mib - ceilDiv(mib*VMMemoryOverheadPermille, 1000)) * mebibyte
	}
	memOut := capMem - m.reservedMemory(mem) - m.eviction - dsMem
	return max(cpuOut, 0), max(memOut, 0)
}

// tier is one bracket of a tiered reservation: the share rate (in parts
// per 100000) of the amount up to upTo (exclusive of the previous tier's
// bound).
type tier struct {
	upTo int64
	rate int64
}

// model is how one cloud's nodes reserve resources.
type model struct {
	cpuTiers []tier // milli-CPU brackets
	fixedCPU int64  // milli-CPU reserved whatever the size

	memTiers []tier // byte brackets
	memSmall int64  // reserved instead of the tiers below 1Gi (0: tiers apply)
	fixedMem int64  // bytes reserved whatever the size

	eviction   int64
	vmOverhead bool
}

var (
	// CPU brackets Karpenter's AWS provider and GKE use: 6% of the first
	// core, 1% of the second, 0.5% of the next two, 0.25% above four.
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
		return model{cpuTiers: cpuTiersEKS, fixedMem: (11*MaxPods + 255) * mebibyte, eviction: EvictionHardMemory, vmOverhead: true}
	case CloudAzure:
		return model{cpuTiers: cpuTiersAKS, memTiers: memTiersGKE, eviction: 750 * mebibyte, vmOverhead: true}
	case CloudKWOK:
		return model{fixedCPU: 100, fixedMem: 10 * mebibyte}
	default: // GCP, Linode, DigitalOcean, CoreWeave and any other.
		return model{cpuTiers: cpuTiersEKS, memTiers: memTiersGKE, memSmall: 255 * mebibyte, eviction: EvictionHardMemory, vmOverhead: true}
	}
}

func (m model) reservedCPU(cpu int64) int64 {
	return m.fixedCPU + tiered(m.cpuTiers, cpu)
}

func (m model) reservedMemory(mem int64) int64 {
	if m.memSmall > 0 && mem < gibibyte {
		return m.fixedMem + m.memSmall
	}
	r := tiered(m.memTiers, mem)
	if len(m.memTiers) > 0 {
		r = ceilDiv(r, mebibyte) * mebibyte // whole MiB, rounded up
	}
	return m.fixedMem + r
}

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
