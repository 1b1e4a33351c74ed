package poolcapacity

import (
	"context"
	"time"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// A planned is what one reconcile's Observe computed for a PoolCapacity,
// for Update in the same reconcile to apply: the plan, and the snapshot
// and time it was computed from.
type planned struct {
	spec v1alpha1.PoolCapacityParameters
	snap capacity.Snapshot
	plan capacity.Plan
	now  time.Time
}

// An actuator applies one part of a plan to the pool's cluster. due
// reports whether it has anything to apply now; apply applies it and
// returns what failed.
type actuator struct {
	name  string
	due   func(e *external, cr *v1alpha1.PoolCapacity, p *planned) bool
	apply func(ctx context.Context, e *external, cr *v1alpha1.PoolCapacity, p *planned) []error
}

// actuators apply a plan, in this order: nodes are opened and placeholders
// released before anything waits for room; the buffer is scaled before
// the gate is bound and before executors at the gate are released, which
// wait for the buffer's autoscaler to see that scale; evictions come last.
var actuators = []actuator{
	{name: "open warm nodes", due: opensNodes, apply: openNodes},
	{name: "release placeholders", due: releasesPlaceholders, apply: releasePlaceholders},
	{name: "scale the CapacityBuffer", due: scalesBuffer, apply: applyBufferScale},
	{name: "bind the executor gate", due: bindsGate, apply: bindGate},
	{name: "release executors from the gate", due: releasesExecutors, apply: releaseExecutors},
	{name: "evict", due: evicts, apply: evict},
}

// upToDate reports whether no actuator has anything to apply for p.
func upToDate(e *external, cr *v1alpha1.PoolCapacity, p *planned) bool {
	for _, a := range actuators {
		if a.due(e, cr, p) {
			return false
		}
	}
	return true
}

// actuate applies p through every actuator that has something to apply,
// in order, and returns what failed.
func actuate(ctx context.Context, e *external, cr *v1alpha1.PoolCapacity, p *planned) []error {
	var errs []error
	for _, a := range actuators {
		if a.due(e, cr, p) {
			errs = append(errs, a.apply(ctx, e, cr, p)...)
		}
	}
	return errs
}
