package poolcapacity

import (
	"context"
	"time"

	"github.com/pkg/errors"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// gathered is everything a reconcile reads of a pool's cluster, read once
// before anything is computed.
type gathered struct {
	// snap is the cluster's current snapshot; lastSync is when the
	// observer last knew it current.
	snap     capacity.Snapshot
	lastSync time.Time
	// summary is the workload cluster summary spec asks for: the previous
	// one until it must be read again, nil when spec asks for none.
	// summaryErr says why a read failed (the previous one is kept).
	summary    *v1alpha1.WorkloadClusterSummary
	summaryErr error
}

// gather reads the pool's cluster for one reconcile.
func (e *external) gather(ctx context.Context, spec v1alpha1.PoolCapacityParameters, prev v1alpha1.PoolCapacityObservation, now time.Time) gathered {
	g := gathered{snap: e.obs.Store().Current(), lastSync: e.obs.LastSync()}
	g.summary, g.summaryErr = e.summarize(ctx, spec, prev.WorkloadCluster, now)
	return g
}

// summarize returns the workload cluster summary spec asks for: prev
// until it must be read again (NeedsSummary); a failed read keeps prev and
// returns why.
func (e *external) summarize(ctx context.Context, spec v1alpha1.PoolCapacityParameters, prev *v1alpha1.WorkloadClusterSummary, now time.Time) (*v1alpha1.WorkloadClusterSummary, error) {
	q := spec.WorkloadCluster
	if q == nil {
		return nil, nil
	}
	if !NeedsSummary(q, prev, now) {
		return prev, nil
	}
	s, err := ReadSummary(ctx, e.obs.Client(), spec, now)
	if err != nil {
		return prev, errors.Wrapf(err, "cannot summarize the workload cluster of ProviderConfig %q for pool %q", e.config, spec.Pool.Name)
	}
	return s, nil
}
