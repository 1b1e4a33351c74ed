package poolcapacity

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/demand"
	"github.com/burstpool/burstpool/internal/metrics"
	"github.com/burstpool/burstpool/internal/watch"
)

// shared is the state the connector hands every client it makes, so that
// it lasts across reconciles: the observers, the eviction rate limit, and
// the memos of what the actuators last applied.
type shared struct {
	record     event.Recorder
	clusters   *clusters
	metrics    *metrics.Metrics
	clock      func() time.Time
	evictions  *evictions
	staleAfter time.Duration
	// namespace is the provider's own namespace, which each ExecutorGate
	// names as the one whose provider-burstpool may release executors.
	namespace string
	// shed is the last over-share evictions let through; buffers the
	// last CapacityBuffer scale; gates the last executor gate.
	shed    *memo[[]capacity.Eviction]
	buffers *memo[capacity.BufferScale]
	gates   *memo[gateState]
	// census is which ExecutorGates the provider's cluster held when the
	// provider started; nil takes none.
	census *gateCensus
	// demands is what the provider keeps of each pool's demand history.
	demands *memo[*demand.Memory]
}

// forget drops everything remembered of the PoolCapacity named pc.
func (s shared) forget(pc string) {
	s.clusters.forget(pc)
	s.evictions.forget(pc)
	s.shed.forget(pc)
	s.buffers.forget(pc)
	// The executor gate's ExecutorGate is the PoolCapacity's dependent:
	// Kubernetes' garbage collector removes it.
	s.gates.forget(pc)
	s.demands.forget(pc)
	if s.metrics != nil {
		s.metrics.Forget(pc)
	}
}

// A planned is what one reconcile's Observe computed for a PoolCapacity,
// for Update in the same reconcile to apply: the plan, and the snapshot
// and time it was computed from.
type planned struct {
	spec v1alpha1.PoolCapacityParameters
	snap capacity.Snapshot
	plan capacity.Plan
	now  time.Time
	// failed is what Observe could not read or record beside the plan;
	// Update reports it once the plan is applied.
	failed error
}

// A target is what the actuators apply a plan to and through: the pool's
// cluster, and the provider's shared state.
type target struct {
	client client.Client
	// local is true when the pool's nodes are in the provider's own
	// cluster, where its events can name them.
	local bool
	shared
}

// An external reports a pool's capacity from its cluster's snapshot, and
// applies the plan computed from it. Each reconcile runs three phases:
// Observe gathers (gather.go) and computes (capacity.Compute,
// cost.Account), and writes the status; Update applies the plan through
// the actuators (actuators.go), in their order. A PoolCapacity whose
// management policies allow only Observe never acts on a pod or node.
type external struct {
	config string
	obs    *watch.Observer
	shared
	// local is true when the pool's nodes are in the provider's own
	// cluster, where its events can name them.
	local bool

	// planned is what Observe computed, for Update in the same reconcile.
	planned *planned
}
