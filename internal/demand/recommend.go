package demand

import (
	"fmt"
	"math"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/cost"
	"github.com/burstpool/burstpool/internal/warmpolicy"
)

// recommend returns the recommendation to put in status: none when the
// spec asks for none; the status's until it is due (its until passed, or
// the goal changed); else the history's for the goal. A goal the spec
// does not make is an error, and the status's recommendation stays.
//
// Everything it reads comes from the platform: the goal from
// spec.forProvider.warmPolicy.learned, which the function composes from
// the platform's settings, and the slot's price from the pool's nodes and
// spec.forProvider.pricing; nothing from a tenant's pods but the demand
// the history recorded.
func recommend(m *Memory, in Input, now time.Time) (*v1alpha1.WarmRecommendation, error) {
	wp := in.Spec.WarmPolicy
	if wp == nil || wp.Learned == nil {
		m.asked = false
		return nil, nil
	}
	price, priced := cost.SlotPrice(in.Spec, in.Next.Cost)
	g, err := goal(in.Spec, *wp.Learned, in.Next.ExecutorStarts, price, priced)
	if err != nil {
		return in.Prev.WarmRecommendation, err
	}
	prev := in.Prev.WarmRecommendation
	// The previous recommendation holds until its until, unless that is
	// further ahead than Recommend ever says (a slot): then it is not the
	// one this provider wrote.
	if prev != nil && m.asked && g == m.goal && now.Before(prev.Until.Time) && !prev.Until.After(now.Add(warmpolicy.SlotLength)) {
		return prev, nil
	}
	m.goal, m.asked = g, true
	return status(m.history.Recommend(now, g), priced, now), nil
}

// goal is what the learned goal l asks, for a pool whose slots cost price
// an hour when priced (a node of the pool has a price): its target and
// caps, the pool's maxExecutors, and its lead or the measured cold start
// (coldStart) when that is longer: warm slots asked later would still be
// launching when the burst comes. A cap in dollars while no slot is priced
// allows no warm slot, and a cap of "0" none that costs something: the
// recommendation says so (warmpolicy.Goal).
func goal(spec v1alpha1.PoolCapacityParameters, l v1alpha1.LearnedGoal, starts *v1alpha1.ExecutorStarts, price float64, priced bool) (warmpolicy.Goal, error) {
	if l.TargetWarmPercent < 1 || l.TargetWarmPercent > 100 {
		return warmpolicy.Goal{}, fmt.Errorf("warmPolicy.learned.targetWarmPercent %d is not from 1 to 100", l.TargetWarmPercent)
	}
	if l.MaxSlots < 0 {
		return warmpolicy.Goal{}, fmt.Errorf("warmPolicy.learned.maxSlots %d is negative", l.MaxSlots)
	}
	g := warmpolicy.Goal{
		WarmShare:          float64(l.TargetWarmPercent) / 100,
		Lead:               max(l.Lead.Duration, coldStart(starts)),
		MaxSlots:           l.MaxSlots,
		MaxExecutors:       spec.MaxExecutors,
		DollarsPerSlotHour: price,
		PriceKnown:         priced,
	}
	if s := l.MaxDollarsPerHour; s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return warmpolicy.Goal{}, fmt.Errorf("warmPolicy.learned.maxDollarsPerHour %q is not a non-negative decimal", s)
		}
		g.MaxDollarsPerHour, g.DollarCap = f, true
	}
	return g, nil
}

// coldStart is the measured cold start of the pool's executors: the 90th
// percentile of the start times of those that waited for a node launched
// for them (status.atProvider.executorStarts, placement NewNode), rounded
// up to a minute so that it moves rarely; 0 while none was counted.
func coldStart(o *v1alpha1.ExecutorStarts) time.Duration {
	if o == nil {
		return 0
	}
	for _, p := range o.ByPlacement {
		if p.Placement == v1alpha1.PlacementNewNode && p.Count > 0 {
			s := cost.Quantile(0.9, p)
			return time.Duration(math.Ceil(s/60)) * time.Minute
		}
	}
	return 0
}

// status is r as status.atProvider.warmRecommendation; its cost is empty
// while the slots' price is not known. An until that is not after now
// becomes the next slot boundary, so that the provider asks again then
// and not at once.
func status(r warmpolicy.Recommendation, priced bool, now time.Time) *v1alpha1.WarmRecommendation {
	until := r.Until.UTC().Truncate(time.Second)
	if !until.After(now) {
		until = now.Truncate(warmpolicy.SlotLength).Add(warmpolicy.SlotLength)
	}
	out := &v1alpha1.WarmRecommendation{
		Executors:           max(0, r.Executors),
		Until:               metav1.NewTime(until),
		Reason:              r.Reason,
		ExpectedWarmPercent: int32(math.Floor(min(max(r.ExpectedShare, 0), 1) * 100)),
		Capped:              r.Capped,
		Weeks:               int32(r.Weeks),
	}
	if priced {
		out.DollarsPerHour = warmpolicy.USD(r.DollarsPerHour)
	}
	return out
}
