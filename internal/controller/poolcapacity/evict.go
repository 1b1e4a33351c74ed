package poolcapacity

import (
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/pkg/errors"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

func evicts(_ target, _ *v1alpha1.PoolCapacity, p *planned) bool { return len(p.plan.Evict) > 0 }

// evict evicts or deletes the pods the plan lists, within the pool's
// eviction rate. Over-share evictions wait until the snapshot shows the
// last ones (capacity.HoldOverShare): until then the waiters they made
// room for still look waiting.
func evict(ctx context.Context, t target, cr *v1alpha1.PoolCapacity, p *planned) []error {
	spec := p.spec
	last, _ := t.shed.get(cr.Name)
	evs, shed := capacity.HoldOverShare(p.snap, p.plan.Evict, last.value, last.at, p.now)
	if len(shed) > 0 {
		t.shed.set(cr.Name, shed, p.now)
	}
	var errs []error
	for _, ev := range evs {
		out, err := t.evictions.evictPod(ctx, t.client, cr.Name, ev, p.now)
		switch out {
		case evicted:
			if t.metrics != nil {
				t.metrics.Evicted(spec, ev.Reason)
			}
			verb := "Deleted"
			if ev.Reason == capacity.EvictOverShare {
				verb = "Evicted"
			}
			t.record.Event(cr, event.Normal(event.Reason(verb+ev.Reason), evictionMessage(ev)))
		case blocked:
			if t.metrics != nil {
				t.metrics.EvictionBlocked(spec, ev.Reason)
			}
			t.record.Event(cr, event.Normal(event.Reason("EvictionBlocked"), fmt.Sprintf("A PodDisruptionBudget allows no disruption of pod %s now (%s); the eviction is retried later.", ev.Pod, ev.Reason)))
		case failed:
			errs = append(errs, errors.Wrapf(err, "cannot evict pod %s of pool %q (%s)", ev.Pod, spec.Pool.Name, ev.Reason))
		case deferred:
			if err != nil {
				errs = append(errs, errors.Wrapf(err, "cannot evict pods of pool %q; retrying within the eviction rate", spec.Pool.Name))
			}
		}
	}
	return errs
}

func evictionMessage(ev capacity.Eviction) string {
	if ev.Reason == capacity.EvictOverShare {
		return fmt.Sprintf("Evicted pod %s: its QueryService runs more pool executors than its share (maxPoolExecutors) while another QueryService waits below its own (policies.enforceShares).", ev.Pod)
	}
	if ev.Reason == capacity.EvictUnauthorized {
		return fmt.Sprintf("Evicted pod %s: its QueryService is not attached to the pool (policies.unauthorizedExecutors is Evict). Attach the QueryService to keep its executors.", ev.Pod)
	}
	return fmt.Sprintf("Evicted failed executor pod %s (policies.deleteFailedExecutors); status.atProvider.failures keeps why it failed.", ev.Pod)
}
