package poolcapacity

import (
	"context"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

func releasesPlaceholders(_ target, _ *v1alpha1.PoolCapacity, p *planned) bool {
	return len(p.plan.Ungate) > 0
}

// releasePlaceholders removes the scheduling gate of the placeholders the
// plan releases, so that they hold warm slots.
func releasePlaceholders(ctx context.Context, t target, _ *v1alpha1.PoolCapacity, p *planned) []error {
	var errs []error
	for _, u := range p.plan.Ungate {
		if _, err := ungatePod(ctx, t.client, u); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
