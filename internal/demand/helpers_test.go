package demand

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// monday is the first day the tests' pool is observed.
var monday = time.Date(2026, time.November, 2, 0, 0, 0, 0, time.UTC)

func at(day, h, m int) time.Time {
	return monday.AddDate(0, 0, day).Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// testSpec is the tests' pool: one attached QueryService, four executors
// a node, at most 64.
var testSpec = v1alpha1.PoolCapacityParameters{
	Pool:             v1alpha1.PoolRef{Name: "shared", Namespace: "platform"},
	NodeSelector:     map[string]string{qsv1alpha1.LabelPool: "shared"},
	ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: "shared"},
	ExecutorsPerNode: 4, MaxExecutors: 64,
	QueryServices: []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: "team-a"}},
}

// learned is testSpec asking for a learned warm level.
func learned(g v1alpha1.LearnedGoal) v1alpha1.PoolCapacityParameters {
	s := testSpec
	s.WarmPolicy = &v1alpha1.WarmPolicy{Learned: &g}
	return s
}

// priced is the cost observation of a pool whose nodes are r7gd.4xlarge
// on demand at the aws catalog's 1.16109 USD an hour: a slot is a
// quarter of that.
var priced = &v1alpha1.CostObservation{ByNodeType: []v1alpha1.NodeTypeCost{
	{InstanceType: "r7gd.4xlarge", CapacityType: "on-demand", PricePerHour: "1.16109"},
}}

// observed is the status the provider computes for the pool when its
// attached QueryService has wanted executors on the pool or waiting for
// it, and warm and cold executor starts were counted since counting
// began.
func observed(wanted int32, warm, cold int64) v1alpha1.PoolCapacityObservation {
	o := v1alpha1.PoolCapacityObservation{
		OccupiedExecutors: wanted,
		Allocations:       []v1alpha1.Allocation{{QueryService: "sales", Namespace: "team-a", PoolExecutors: wanted}},
		ExecutorStarts:    &v1alpha1.ExecutorStarts{CountedUntil: metav1.NewTime(monday), Since: metav1.NewTime(monday)},
		Cost:              priced,
	}
	for _, p := range []struct {
		pl v1alpha1.Placement
		n  int64
	}{{v1alpha1.PlacementExistingNode, warm}, {v1alpha1.PlacementNewNode, cold}} {
		if p.n > 0 {
			o.ExecutorStarts.ByPlacement = append(o.ExecutorStarts.ByPlacement, v1alpha1.PlacementStarts{Placement: p.pl, Count: p.n})
		}
	}
	return o
}

// workday is the pool at t: on weekdays, a burst of six executors at every
// hour from 09:00 to 16:00, for 30 minutes; four start on an existing
// node, two on a new one, counted a minute after the burst begins.
func workday(t time.Time) (wanted int32, warm, cold int64) {
	for d := monday; !d.After(t); d = d.AddDate(0, 0, 1) {
		if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
			continue
		}
		for h := 9; h <= 16; h++ {
			start := d.Add(time.Duration(h) * time.Hour)
			if !t.Before(start) && t.Before(start.Add(30*time.Minute)) {
				wanted = 6
			}
			if !t.Before(start.Add(time.Minute)) {
				warm, cold = warm+4, cold+2
			}
		}
	}
	return wanted, warm, cold
}

// throughAPI returns o as a provider reads it back from the
// PoolCapacity's status: JSON, nothing kept in memory.
func throughAPI(t testing.TB, o v1alpha1.PoolCapacityObservation) v1alpha1.PoolCapacityObservation {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out v1alpha1.PoolCapacityObservation
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// provider is a simulated capacity provider: the status its pool's
// PoolCapacity holds, and its memory.
type provider struct {
	spec   v1alpha1.PoolCapacityParameters
	status v1alpha1.PoolCapacityObservation
	// older is the status before the last write.
	older v1alpha1.PoolCapacityObservation
	mem   *Memory
	// writes counts the status writes that changed the demand history.
	writes int
}

// reconcile observes next at now, as the provider's reconcile does; the
// status write fails when lost.
func (p *provider) reconcile(t testing.TB, next v1alpha1.PoolCapacityObservation, now time.Time, lost bool) Output {
	t.Helper()
	return p.reconcileFrom(t, p.status, next, now, lost)
}

// reconcileStale observes next at now from the status before the last
// write, as a reconcile does that reads a cache the last write has not
// reached yet; its write fails (the resource version is stale).
func (p *provider) reconcileStale(t testing.TB, next v1alpha1.PoolCapacityObservation, now time.Time) Output {
	t.Helper()
	return p.reconcileFrom(t, p.older, next, now, true)
}

func (p *provider) reconcileFrom(t testing.TB, prev, next v1alpha1.PoolCapacityObservation, now time.Time, lost bool) Output {
	t.Helper()
	next.Demand, next.WarmRecommendation = prev.Demand, prev.WarmRecommendation
	mem, out := Record(p.mem, Input{Spec: p.spec, Prev: prev, Next: next, Now: now})
	p.mem = mem
	next.Demand, next.WarmRecommendation = out.Demand, out.Recommendation
	if lost {
		return out
	}
	if out.Demand != prev.Demand {
		p.writes++
	}
	p.older, p.status = p.status, throughAPI(t, next)
	return out
}

// restart drops what the provider keeps in memory.
func (p *provider) restart() { p.mem = nil }
