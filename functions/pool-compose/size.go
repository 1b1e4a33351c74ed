package main

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/internal/sizing"
)

// SizeInput is what the pool's sizing needs: the pool's instance settings
// and the executors of its attached QueryServices.
type SizeInput struct {
	Cloud string
	// Method provisions the nodes (karpenter, eks-auto-mode, ...).
	Method         string
	InstanceType   string
	InstanceFamily string
	AutoUpgrade    bool
	Spot           bool
	// InheritQueryService ("ns/name") and InheritInstanceType are set when
	// the pool inherits the node type of a QueryService.
	InheritQueryService string
	InheritInstanceType string
	ExecutorsPerNode    int32
	Executors           []ExecutorRequest
	// Previous is the type the pool has now; ExecutorsHaveRun locks it
	// (it then moves only upward, with AutoUpgrade).
	Previous         string
	ExecutorsHaveRun bool
	// Overhead are the per-node DaemonSet pods: the pool's (warmup,
	// storage agent) and the cluster's (sizing.nodeDaemonSets).
	Overhead []PodRequests
	// Arch is the architecture of a pool sized from the catalog.
	Arch string
	// SpotNeighbours and AllowMetal widen the spot set.
	SpotNeighbours, AllowMetal bool
	// InstanceFamilies are the families or types the settings allow
	// (tenancy.instanceFamilies); empty allows the whole catalog.
	InstanceFamilies []string
}

// ExecutorRequest is one attached QueryService's executor.
type ExecutorRequest struct {
	QueryService string
	CPU, Memory  resource.Quantity
}

// PodRequests are the requests of one DaemonSet pod.
type PodRequests struct {
	Init, Containers []Resources
}

// Resources is a CPU and memory amount.
type Resources struct {
	CPU, Memory resource.Quantity
}

// SizeResult is the sizing decision.
type SizeResult struct {
	InstanceType string
	// SpotTypes is the ranked set of types to offer Karpenter (first is
	// InstanceType) when spot is on.
	SpotTypes   []string
	DerivedFrom string
	Arch        string
	// Allocatable is what one node of InstanceType offers pods.
	Allocatable Resources
	// Capacity is the largest raw size among the offered types, for
	// NodePool limits.
	Capacity Resources
	// Kubelet is what the model assumes of the nodes' kubelet, for the
	// NodeClass to set: maxPods the fewest pods any offered type's network
	// holds.
	Kubelet sizing.Kubelet
	// LocalNVMe tells whether InstanceType has instance-store NVMe disks.
	LocalNVMe     bool
	Compatibility []Compatibility
	Upgraded      bool
	// Kept says why the previous type was kept.
	Kept string
	// PerNode is how many executors of the largest compatible QueryService
	// one node of InstanceType holds.
	PerNode int32
	// Offered are the types the NodePool allows, with why.
	Offered []OfferedType
}

// OfferedType is one type the pool's nodes may use.
type OfferedType struct {
	Name    string
	PerNode int32
	Reason  string
}

// Compatibility tells whether one QueryService's executors fit the type.
type Compatibility struct {
	QueryService   string
	Compatible     bool
	RequiredCPU    string
	RequiredMemory string
	InstanceType   string
	Message        string
}

// maxSpotTypes is how many types a spot pool offers Karpenter.
const maxSpotTypes = 5
