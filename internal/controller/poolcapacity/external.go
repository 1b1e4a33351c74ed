package poolcapacity

import (
	"context"
	"fmt"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/cost"
)

// Observe gathers what the PoolCapacity's cluster holds, computes its
// capacity and plan, records the pool's demand (demand.go), and sets the
// capacity as status.atProvider; the managed reconciler writes the
// status. The PoolCapacity is up to date unless an actuator has
// something of the plan to apply, which Update does, or something beside
// the plan failed, which Update reports. A PoolCapacity being
// deleted reports that nothing exists, so its finalizer is removed at
// once: there is nothing external to delete.
func (e *external) Observe(ctx context.Context, mg resource.Managed) (managed.ExternalObservation, error) {
	cr, ok := mg.(*v1alpha1.PoolCapacity)
	if !ok {
		return managed.ExternalObservation{}, errors.New("managed resource is not a PoolCapacity")
	}
	spec := cr.Spec.ForProvider
	if meta.WasDeleted(cr) {
		e.forget(cr.Name)
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	e.clusters.track(cr.Name, e.config, capacity.PoolKey(spec))

	// Gather.
	now := e.clock()
	g := e.gather(ctx, spec, cr.Status.AtProvider, now)
	if e.local {
		knowGate(ctx, e.census, e.gates, e.obs.Client(), cr.Name, now)
	}

	// Compute.
	res := capacity.Compute(spec, g.snap, cr.Status.AtProvider, now)
	o := res.Observation
	o.LastObservedTime = capacity.LastObserved(o.LastObservedTime, g.lastSync, e.staleAfter/5)
	o.WorkloadCluster = g.summary
	costErr := cost.Account(spec, g.snap, &o, now)
	mem, d := e.recordDemand(cr, o, now)
	o.Demand, o.WarmRecommendation = d.Demand, d.Recommendation

	// Apply the status; the plan waits for Update.
	cr.Status.AtProvider = o
	demandErr := e.applyDemand(cr, mem, d, now)
	cr.SetConditions(xpv2.Available(), staleCondition(g.lastSync, now, e.staleAfter))
	if e.metrics != nil {
		e.metrics.Record(cr.Name, spec, res, g.lastSync)
		e.metrics.Cost(spec, o.Cost)
		e.metrics.Starts(spec, o.ExecutorStarts)
		e.metrics.Warm(spec, o.Demand, o.WarmRecommendation)
	}
	// What failed beside the plan (a workload cluster's summary, the
	// cost, the learned warm level) never holds the plan back: an error
	// from Observe would skip Update, and with it the executors' gate, the
	// startup taint and the warm slots of every burst. Update applies the
	// plan and returns these, so Synced says what failed.
	e.planned = &planned{spec: spec, snap: g.snap, plan: res.Plan, now: now,
		failed: utilerrors.NewAggregate(nonNil(g.summaryErr, costErr, demandErr))}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: e.planned.failed == nil && upToDate(e.target(), cr, e.planned)}, nil
}

// Update applies the plan this reconcile's Observe computed.
func (e *external) Update(ctx context.Context, mg resource.Managed) (managed.ExternalUpdate, error) {
	cr, ok := mg.(*v1alpha1.PoolCapacity)
	if !ok {
		return managed.ExternalUpdate{}, errors.New("managed resource is not a PoolCapacity")
	}
	if e.planned == nil {
		return managed.ExternalUpdate{}, nil
	}
	return managed.ExternalUpdate{}, utilerrors.NewAggregate(append(actuate(ctx, e.target(), cr, e.planned), e.planned.failed))
}

// target is what the actuators apply this client's plans to.
func (e *external) target() target {
	return target{client: e.obs.Client(), local: e.local, shared: e.shared}
}

// Create does nothing: a PoolCapacity always exists once it is observed.
func (e *external) Create(_ context.Context, _ resource.Managed) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

// Delete does nothing: deleting a PoolCapacity leaves the pool's pods alone.
func (e *external) Delete(_ context.Context, _ resource.Managed) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

// Disconnect does nothing: the cluster's observer outlives one reconcile.
func (e *external) Disconnect(_ context.Context) error { return nil }

// nonNil returns the errors that are not nil.
func nonNil(errs ...error) []error {
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// staleCondition says whether the pool's cluster was observed within
// staleAfter: a dead watch and failing relists make a busy pool look quiet.
func staleCondition(lastSync, now time.Time, staleAfter time.Duration) xpv2.Condition {
	c := xpv2.Condition{Type: TypeStale, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now(), Reason: ReasonObserverCurrent}
	if now.Sub(lastSync) > staleAfter {
		c.Status, c.Reason = corev1.ConditionTrue, ReasonObserverBehind
		c.Message = fmt.Sprintf("The pool's pods and nodes were last known current at %s, more than %s ago: the provider's watch and relists of the cluster are failing (see its logs and burstpool_observer_watch_errors_total).",
			lastSync.UTC().Format(time.RFC3339), staleAfter)
	}
	return c
}
