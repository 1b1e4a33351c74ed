package demand

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/warmpolicy"
)

// workdayHistory is the status of the workday pool at end, as a provider
// that observed it every minute since monday wrote it.
func workdayHistory(end time.Time) v1alpha1.PoolCapacityObservation {
	h := &warmpolicy.History{}
	var seenWarm, seenCold int64
	for now := monday; now.Before(end); now = now.Add(time.Minute) {
		wanted, warm, cold := workday(now)
		h.Observe(now, wanted, int32(warm+cold-seenWarm-seenCold), int32(cold-seenCold))
		seenWarm, seenCold = warm, cold
	}
	o := observed(workday(end))
	o.Demand = &v1alpha1.DemandHistory{Encoded: h.Encode(), Since: metav1.NewTime(monday), Weeks: 2}
	return o
}

// coldStarts is an executor start histogram whose executors on new nodes
// took 180 to 300 s, 288 s at the 90th percentile.
var coldStarts = &v1alpha1.ExecutorStarts{ByPlacement: []v1alpha1.PlacementStarts{{
	Placement: v1alpha1.PlacementNewNode, Count: 10, SumSeconds: "2400",
	Buckets: []v1alpha1.StartBucket{{UpToSeconds: "180", Count: 0}, {UpToSeconds: "300", Count: 10}},
}}}

func TestRecommend(t *testing.T) {
	// A slot is a quarter of a 1.16109 USD/h node (priced): 0.2902725.
	lead := metav1.Duration{Duration: 5 * time.Minute}
	ten := metav1.NewTime(at(7, 10, 0))
	status := workdayHistory(at(7, 9, 58))
	type want struct {
		rec *v1alpha1.WarmRecommendation
		// reason is part of its reason.
		reason string
		err    bool
	}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.PoolCapacityParameters
		status v1alpha1.PoolCapacityObservation
		// edit changes the status computed this reconcile.
		edit func(o *v1alpha1.PoolCapacityObservation)
		at   time.Time
		want want
	}{
		"NotAsked": {
			reason: "A pool whose spec asks for no learned warm level gets none, though its history is recorded.",
			spec:   testSpec, status: status, at: at(7, 9, 58),
		},
		"Learned": {
			reason: "Two minutes before a weekday's 10:00 burst, with a lead of five, the level is the burst's six executors, priced at six slots.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead}),
			status: status, at: at(7, 9, 58),
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 6, Until: ten, DollarsPerHour: "1.741635", Weeks: 2},
				reason: "2 weeks of history"},
		},
		"Quiet": {
			reason: "At night no warm slot buys a warm start: the level is 0.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead}),
			status: workdayHistory(at(7, 3, 0)), at: at(7, 3, 0),
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 0, Until: metav1.NewTime(at(7, 3, 10)), DollarsPerHour: "0", Weeks: 2}},
		},
		"MaxSlots": {
			reason: "The platform's cap in slots bounds the level, and says so.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead, MaxSlots: 2}),
			status: status, at: at(7, 9, 58),
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 2, Until: ten, DollarsPerHour: "0.580545", Capped: "maxSlots", Weeks: 2},
				reason: "maxSlots"},
		},
		"MaxDollarsPerHour": {
			reason: "The platform's cap in dollars bounds the level to the slots it pays for: three at 0.29 USD/h within 1 USD/h.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead, MaxDollarsPerHour: "1"}),
			status: status, at: at(7, 9, 58),
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 3, Until: ten, DollarsPerHour: "0.870818", Capped: "maxDollarsPerHour", Weeks: 2},
				reason: "maxDollarsPerHour"},
		},
		"MaxExecutors": {
			reason: "The pool's maxExecutors bounds the level.",
			spec: func() v1alpha1.PoolCapacityParameters {
				s := learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead})
				s.MaxExecutors = 4
				return s
			}(),
			status: status, at: at(7, 9, 58),
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 4, Until: ten, DollarsPerHour: "1.16109", Capped: "maxExecutors", Weeks: 2}},
		},
		"UnpricedWithDollarCap": {
			reason: "While no node of the pool has a price, a cap in dollars cannot be shown to hold: no learned warm slots.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead, MaxDollarsPerHour: "1"}),
			status: status, at: at(7, 9, 58),
			edit: func(o *v1alpha1.PoolCapacityObservation) { o.Cost = nil },
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 0, Until: ten, Capped: "maxDollarsPerHour", Weeks: 2},
				reason: "what a warm slot costs is not known"},
		},
		"UnpricedWithoutDollarCap": {
			reason: "Without a cap in dollars, an unknown price bounds nothing; the cost is left empty.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead}),
			status: status, at: at(7, 9, 58),
			edit: func(o *v1alpha1.PoolCapacityObservation) { o.Cost = nil },
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 6, Until: ten, Weeks: 2}},
		},
		"ZeroDollarCap": {
			reason: "A cap of 0 USD/h allows no slot that costs something.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead, MaxDollarsPerHour: "0"}),
			status: status, at: at(7, 9, 58),
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 0, Until: ten, DollarsPerHour: "0", Capped: "maxDollarsPerHour", Weeks: 2},
				reason: "maxDollarsPerHour is 0"},
		},
		"FreeSlots": {
			reason: "Slots priced at 0 keep within any cap in dollars.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead, MaxDollarsPerHour: "0"}),
			status: status, at: at(7, 9, 58),
			edit: func(o *v1alpha1.PoolCapacityObservation) {
				o.Cost = &v1alpha1.CostObservation{ByNodeType: []v1alpha1.NodeTypeCost{{InstanceType: "kwok", CapacityType: "on-demand", PricePerHour: "0"}}}
			},
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 6, Until: ten, DollarsPerHour: "0", Weeks: 2}},
		},
		"LeadFromColdStart": {
			reason: "A lead shorter than the measured cold start (288 s at the 90th percentile, five minutes) is raised to it: three minutes before the burst the level is already up.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: metav1.Duration{Duration: time.Minute}}),
			status: workdayHistory(at(7, 9, 57)), at: at(7, 9, 57),
			edit: func(o *v1alpha1.PoolCapacityObservation) { o.ExecutorStarts = coldStarts },
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 6, Until: ten, DollarsPerHour: "1.741635", Weeks: 2}},
		},
		"NoHistory": {
			reason: "A pool with no recorded starts gets a level of 0.",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead}),
			status: observed(0, 0, 0), at: at(7, 9, 58),
			want: want{rec: &v1alpha1.WarmRecommendation{Executors: 0, Until: ten, DollarsPerHour: "0", Weeks: 1}},
		},
		"BadDollars": {
			reason: "A cap in dollars that is not a decimal is an error (the API's pattern refuses it first).",
			spec:   learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead, MaxDollarsPerHour: "ten"}),
			status: status, at: at(7, 9, 58),
			want: want{err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			next := tc.status
			if tc.edit != nil {
				tc.edit(&next)
			}
			_, out := Record(nil, Input{Spec: tc.spec, Prev: tc.status, Next: next, Now: tc.at})
			if (out.Err != nil) != tc.want.err {
				t.Fatalf("%s\nerror: got %v, want one: %t", tc.reason, out.Err, tc.want.err)
			}
			if diff := cmp.Diff(tc.want.rec, out.Recommendation, cmpopts.IgnoreFields(v1alpha1.WarmRecommendation{}, "Reason", "ExpectedWarmPercent")); diff != "" {
				t.Errorf("%s\nrecommendation: -want, +got:\n%s", tc.reason, diff)
			}
			r := out.Recommendation
			if r == nil {
				return
			}
			// The share itself is warmpolicy's to estimate.
			if p := r.ExpectedWarmPercent; p < 0 || p > 100 {
				t.Errorf("%s\nexpected warm percent %d, not a percentage", tc.reason, p)
			}
			if r.Reason == "" || !strings.Contains(r.Reason, tc.want.reason) {
				t.Errorf("%s\nreason %q does not say %q", tc.reason, r.Reason, tc.want.reason)
			}
		})
	}
}

// TestRecommendRefresh follows one pool's recommendation over reconciles:
// it is kept until its until passes or the goal changes, and is cleared
// when the spec stops asking.
func TestRecommendRefresh(t *testing.T) {
	lead := metav1.Duration{Duration: 5 * time.Minute}
	goal := learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead})
	capped := learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: lead, MaxSlots: 2})
	type step struct {
		spec v1alpha1.PoolCapacityParameters
		at   time.Time
		// want: the executors and until of the recommendation in
		// status, -1 for none; same: the status's was kept as it was.
		want  int32
		until time.Time
		same  bool
	}
	// Until is the next slot boundary of now or, when sooner, the time
	// the lead reaches the next slot.
	steps := []step{
		{spec: goal, at: at(7, 9, 58), want: 6, until: at(7, 10, 0)},
		{spec: goal, at: at(7, 9, 59), want: 6, until: at(7, 10, 0), same: true},
		{spec: capped, at: at(7, 9, 59), want: 2, until: at(7, 10, 0)},
		{spec: capped, at: at(7, 10, 0), want: 2, until: at(7, 10, 10)},
		{spec: capped, at: at(7, 10, 5), want: 2, until: at(7, 10, 10), same: true},
		{spec: capped, at: at(7, 10, 10), want: 2, until: at(7, 10, 15)},
		{spec: goal, at: at(7, 10, 14), want: 6, until: at(7, 10, 15)},
		{spec: goal, at: at(7, 10, 55), want: 6, until: at(7, 11, 0)},
		{spec: testSpec, at: at(7, 10, 56), want: -1},
	}
	p := &provider{status: workdayHistory(at(7, 9, 58))}
	for i, s := range steps {
		p.spec = s.spec
		before := p.status.WarmRecommendation
		wanted, warm, cold := workday(s.at)
		out := p.reconcile(t, observed(wanted, warm, cold), s.at, false)
		r := out.Recommendation
		switch {
		case s.want < 0 && r != nil:
			t.Errorf("step %d at %s: a recommendation of %d, want none", i, s.at, r.Executors)
		case s.want < 0:
		case r == nil:
			t.Errorf("step %d at %s: no recommendation, want %d", i, s.at, s.want)
		case r.Executors != s.want || !r.Until.Time.Equal(s.until):
			t.Errorf("step %d at %s: %d until %s, want %d until %s", i, s.at, r.Executors, r.Until.Time, s.want, s.until)
		case s.same && r != before:
			t.Errorf("step %d at %s: the recommendation was computed again before it was due", i, s.at)
		}
	}
}

// TestRecommendForged: a recommendation in status that says it holds for
// years was not written by the provider, which revises its own every
// slot; the next reconcile replaces it rather than keeping it until then.
func TestRecommendForged(t *testing.T) {
	goal := learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: metav1.Duration{Duration: 5 * time.Minute}})
	p := &provider{spec: goal, status: workdayHistory(at(7, 9, 58))}
	wanted, warm, cold := workday(at(7, 9, 58))
	p.reconcile(t, observed(wanted, warm, cold), at(7, 9, 58), false)
	p.status.WarmRecommendation = &v1alpha1.WarmRecommendation{Executors: 64, Until: metav1.NewTime(at(7, 9, 58).AddDate(10, 0, 0)), Reason: "forged"}
	wanted, warm, cold = workday(at(7, 9, 59))
	r := p.reconcile(t, observed(wanted, warm, cold), at(7, 9, 59), false).Recommendation
	if r == nil || r.Executors != 6 || !r.Until.Time.Equal(at(7, 10, 0)) {
		t.Errorf("after a forged recommendation: %+v, want 6 until %s", r, at(7, 10, 0))
	}
}
