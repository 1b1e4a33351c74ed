package poolcapacity

import (
	"time"

	"github.com/pkg/errors"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/demand"
)

// ReasonDemandHistoryReset is the reason of the event that says a pool's
// demand history in status could not be read and was replaced.
const ReasonDemandHistoryReset event.Reason = "DemandHistoryReset"

// recordDemand records the pool's demand into the history the provider
// keeps of it (internal/demand), decoded from cr's status the first time
// the provider sees it, and returns the history and learned warm level
// to write into o with the rest of the status, and the Memory to keep.
func (e *external) recordDemand(cr *v1alpha1.PoolCapacity, o v1alpha1.PoolCapacityObservation, now time.Time) (*demand.Memory, demand.Output) {
	var m *demand.Memory
	if a, ok := e.demands.get(cr.Name); ok {
		m = a.value
	}
	return demand.Record(m, demand.Input{Spec: cr.Spec.ForProvider, Prev: cr.Status.AtProvider, Next: o, Now: now})
}

// applyDemand keeps m for the next reconcile, and says in an event when
// the history in status was replaced. The error is the spec's.
func (e *external) applyDemand(cr *v1alpha1.PoolCapacity, m *demand.Memory, d demand.Output, now time.Time) error {
	e.demands.set(cr.Name, m, now)
	if d.Reset != "" {
		e.record.Event(cr, event.Warning(ReasonDemandHistoryReset, errors.New(d.Reset)))
	}
	return errors.Wrapf(d.Err, "cannot ask for the learned warm level of pool %q", cr.Spec.ForProvider.Pool.Name)
}

// warmRefresh requeues a PoolCapacity whose learned warm level is due
// before its next poll when it is due (its until), so the level follows
// the history's slots within a second, not within a poll.
func warmRefresh(clock func() time.Time) managed.PollIntervalHook {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		cr, ok := mg.(*v1alpha1.PoolCapacity)
		if !ok || cr.Status.AtProvider.WarmRecommendation == nil {
			return poll
		}
		due := cr.Status.AtProvider.WarmRecommendation.Until.Sub(clock())
		return min(poll, max(due, time.Second))
	}
}
