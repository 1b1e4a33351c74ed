package capacity

import (
	"slices"
	"strings"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// sharesEnforced tells whether the pool evicts executors above their
// QueryService's share: the policy is on and some share is set.
func sharesEnforced(spec v1alpha1.PoolCapacityParameters) bool {
	return spec.Policies.EnforceShares && !spec.Suspend &&
		slices.ContainsFunc(spec.QueryServices, func(q v1alpha1.AttachedQueryService) bool { return q.MaxPoolExecutors > 0 })
}

// overShare returns the evictions that bring QueryServices above their
// share (maxPoolExecutors) toward it while others below their share wait
// and the pool has no slot left for them (maxExecutors are occupied): as
// many slots as the waiting executors lack, never taking a QueryService
// below its share, newest executors first. Shares of zero are no bound.
// It evicts nothing unless policies.enforceShares is on.
func overShare(spec v1alpha1.PoolCapacityParameters, attached map[qsKey]*qsTally, occupied int32) []Eviction {
	if !spec.Policies.EnforceShares {
		return nil
	}
	waiting := waitersShort(spec, attached, occupied)
	var out []Eviction
	for _, qs := range spec.QueryServices {
		t := attached[qsKey{qs.Namespace, qs.Name}]
		if waiting == 0 {
			break
		}
		if qs.MaxPoolExecutors == 0 || t.executors <= qs.MaxPoolExecutors {
			continue
		}
		pods := slices.Clone(t.occupying)
		slices.SortFunc(pods, func(a, b *Pod) int {
			if c := b.Started.Compare(a.Started); c != 0 {
				return c
			}
			return strings.Compare(b.Name, a.Name)
		})
		n := min(t.executors-qs.MaxPoolExecutors, waiting)
		for _, p := range pods[:n] {
			out = append(out, Eviction{Pod: p.Key(), UID: p.UID, Reason: EvictOverShare, Owner: p.Owner})
		}
		waiting -= n
	}
	return out
}

// waitersShort counts the executors that QueryServices below their share
// wait for (up to their share) beyond the slots the pool can still offer
// or launch nodes for: the waiters only an eviction can serve.
func waitersShort(spec v1alpha1.PoolCapacityParameters, attached map[qsKey]*qsTally, occupied int32) int32 {
	var waiting int32
	for _, qs := range spec.QueryServices {
		t := attached[qsKey{qs.Namespace, qs.Name}]
		if qs.MaxPoolExecutors > 0 && t.executors < qs.MaxPoolExecutors {
			waiting += min(t.pending, qs.MaxPoolExecutors-t.executors)
		}
	}
	return max(0, waiting-max(0, spec.MaxExecutors-occupied))
}

// sharesHold returns whether a new executor stays at the executor gate for
// the shares: its QueryService is at or above its share while
// QueryServices below theirs have executors waiting that the pool has no
// free slot for, which is when overShare evicts for them.
func sharesHold(spec v1alpha1.PoolCapacityParameters, attached map[qsKey]*qsTally, occupied int32) func(*Pod) bool {
	share := make(map[qsKey]int32, len(spec.QueryServices))
	for _, qs := range spec.QueryServices {
		share[qsKey{qs.Namespace, qs.Name}] = qs.MaxPoolExecutors
	}
	short := waitersShort(spec, attached, occupied) > 0
	return func(p *Pod) bool {
		k := qsKey{p.Namespace, p.Labels[qsv1alpha1.LabelQueryService]}
		t, ok := attached[k]
		return short && ok && share[k] > 0 && t.executors >= share[k]
	}
}
