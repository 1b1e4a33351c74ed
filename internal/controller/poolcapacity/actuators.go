package poolcapacity

import (
	"context"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// An actuator applies one part of a plan to the pool's cluster. due
// reports whether it has anything to apply now; apply applies it and
// returns what failed.
type actuator struct {
	name  string
	due   func(t target, cr *v1alpha1.PoolCapacity, p *planned) bool
	apply func(ctx context.Context, t target, cr *v1alpha1.PoolCapacity, p *planned) []error
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
func upToDate(t target, cr *v1alpha1.PoolCapacity, p *planned) bool {
	for _, a := range actuators {
		if a.due(t, cr, p) {
			return false
		}
	}
	return true
}

// actuate applies p through every actuator that has something to apply,
// in order, and returns what failed.
func actuate(ctx context.Context, t target, cr *v1alpha1.PoolCapacity, p *planned) []error {
	var errs []error
	for _, a := range actuators {
		if a.due(t, cr, p) {
			errs = append(errs, a.apply(ctx, t, cr, p)...)
		}
	}
	return errs
}
