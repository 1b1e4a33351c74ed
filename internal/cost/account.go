package cost

import (
	"time"

	"github.com/pkg/errors"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// Account advances o's cost (status.atProvider.cost, carried over from the
// last status) and executor starts to now, from snap. The status write
// that follows moves the watermark: if it fails, the next reconcile counts
// the same interval again from the watermark it reads, so each node-second
// is counted once. Prices that cannot be read leave the cost as it was.
func Account(spec v1alpha1.PoolCapacityParameters, snap capacity.Snapshot, o *v1alpha1.PoolCapacityObservation, now time.Time) error {
	prices, err := NewPrices(spec.Pricing)
	if err != nil {
		return errors.Wrapf(err, "cannot price the nodes of pool %q", spec.Pool.Name)
	}
	o.Cost, _ = Advance(o.Cost, Observe(spec, snap, prices), now)
	o.ExecutorStarts, _ = CountStarts(o.ExecutorStarts, spec, snap, now)
	return nil
}
