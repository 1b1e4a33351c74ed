package decision

import (
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// Facts are what Compute establishes about a pool before it decides
// anything. No decision changes them.
type Facts struct {
	Detection Detection
	// PerNode is spec.executorsPerNode, at least 1.
	PerNode int32
	// MinNodes and MaxNodes are how many nodes the pool keeps and how
	// many it may have (nodeRange): spec.minExecutors and
	// spec.maxExecutors at PerNode executors a node, rounded up; a
	// suspended pool keeps none.
	MinNodes, MaxNodes int64
	// Attachments are the QueryServices the pool allows or that point at
	// it; Attached are those of them that attach.
	Attachments, Attached []Attachment
	// Scheduling is where the pool's own pods go.
	Scheduling objects.Scheduling
	// Capacity is what the PoolCapacity observed; nil before it reports.
	Capacity *CapacityObservation
	// CapacityStale says why Capacity is not current; nil when it is.
	CapacityStale *Staleness
	// ExecutorsHaveRun locks the pool's instance type.
	ExecutorsHaveRun bool
	// Static tells whether the pool runs on existing nodes.
	Static bool
	// Tenant is what the settings grant the pool's namespace.
	Tenant Tenant
	// WarmLevel is how many executor slots the pool keeps warm now, the
	// executors running included: minExecutors (at most maxExecutors), or
	// what its warm policy sets (decideWarmLevel, which Compute runs before
	// the decisions that read it).
	WarmLevel int32
}

// specFacts are the facts the spec alone decides: how many executors
// share a node and how many nodes the pool keeps and may have.
func specFacts(spec poolv1alpha1.PoolSpec) Facts {
	f := Facts{PerNode: perNode(spec), WarmLevel: max(0, min(spec.MinExecutors, spec.MaxExecutors))}
	f.MinNodes, f.MaxNodes = nodeRange(spec.MinExecutors, spec.MaxExecutors, f.PerNode, spec.Suspend)
	return f
}

// perNode is how many executors share one node: spec.executorsPerNode,
// at least 1.
func perNode(spec poolv1alpha1.PoolSpec) int32 {
	return max(spec.ExecutorsPerNode, 1)
}

// nodeRange is how many nodes the pool keeps and how many it may have:
// minExecutors and maxExecutors at perNode executors a node, rounded up.
// A suspended pool keeps none.
func nodeRange(minExecutors, maxExecutors, perNode int32, suspend bool) (minNodes, maxNodes int64) {
	maxNodes = ceilDiv64(int64(maxExecutors), int64(perNode))
	if suspend {
		return 0, maxNodes
	}
	return ceilDiv64(int64(minExecutors), int64(perNode)), maxNodes
}

// ceilDiv64 is a / b rounded up, for a >= 0 and b >= 1; it cannot
// overflow.
func ceilDiv64(a, b int64) int64 {
	return a/b + min(a%b, 1)
}
