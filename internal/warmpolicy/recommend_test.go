package warmpolicy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// pattern is a week of demand by slot, repeated over the weeks of a
// history: Monday to Friday 09:00–18:00 UTC a burst of 8 executors in every
// slot, each started twice (16 starts, peak 8); every night at 01:00 a job
// of 40 executors (40 starts, peak 40); Saturday and Sunday 12:00–17:00 a
// stray executor or two (2 starts, peak 10, as it finds others running).
// A week: 2,880 business-hour starts, 280 nightly, 40 at the weekend.
func pattern(s int) (wanted, starts int32) {
	day, minute := s/(24*4), (s%(24*4))*15
	switch {
	case day < 5 && minute >= 9*60 && minute < 18*60:
		return 8, 16
	case minute == 60:
		return 40, 40
	case day >= 5 && minute >= 12*60 && minute < 14*60+30:
		return 10, 2
	}
	return 0, 0
}

// learned is a history of weeks weeks of pattern, every slot observed.
func learned(weeks int) *History {
	h := &History{}
	for i := range weeks * SlotsPerWeek {
		w, s := pattern(i % SlotsPerWeek)
		h.Observe(monday.Add(time.Duration(i)*SlotLength+time.Minute), w, s, 0)
	}
	return h
}

func TestRecommend(t *testing.T) {
	mon := func(h, m int) time.Time {
		return monday.Add(4*7*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
	}
	type args struct {
		h *History
		t time.Time
		g Goal
	}
	cases := map[string]struct {
		reason string
		args   args
		want   Recommendation
	}{
		"NoHistory": {
			reason: "Without history there is nothing to learn from: no warm slots, and the reason says so.",
			args:   args{h: &History{}, t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: time.Hour, MaxExecutors: 100}},
			want:   Recommendation{Until: mon(10, 15), Reason: "no demand history yet: no learned warm slots until the pool has been observed"},
		},
		"BusinessHours": {
			reason: "At 90% the business hours' bursts are worth most per warm slot (2 starts each a week): 8 warm from 09:00 to 18:00 on weekdays buy 2,880 of 3,200 starts.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 100, DollarsPerSlotHour: 0.25, PriceKnown: true}},
			want: Recommendation{
				Executors: 8, Until: mon(10, 10), ExpectedShare: 0.9, DollarsPerHour: 2, Weeks: 4,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 360 slot-hours a week start 90% of them warm and 90% on weeks they were not learned from, against a target of 90%",
			},
		},
		"NightlyJobNotWorthIt": {
			reason: "At 90% the nightly job (1 start a week per warm slot) is not needed: none at 01:00.",
			args:   args{h: learned(4), t: mon(1, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 100}},
			want: Recommendation{
				Until: mon(1, 10), ExpectedShare: 0.9, Weeks: 4,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 360 slot-hours a week start 90% of them warm and 90% on weeks they were not learned from, against a target of 90%",
			},
		},
		"NightlyJobAtAHigherTarget": {
			reason: "At 99% the nightly jobs are warmed too (40 each), then 4 of the weekend's 20 slots of strays (0.2 warm starts a week per warm slot).",
			args:   args{h: learned(4), t: mon(1, 0), g: Goal{WarmShare: 0.99, Lead: 5 * time.Minute, MaxExecutors: 100}},
			want: Recommendation{
				Executors: 40, Until: mon(1, 10), ExpectedShare: 0.99, Weeks: 4,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 440 slot-hours a week start 99% of them warm and 99% on weeks they were not learned from, against a target of 99%",
			},
		},
		"LeadReachesTheNextSlot": {
			reason: "At 08:50 a lead of 15 minutes reaches into 09:00's slot: the level is 09:00's, until 09:00 when the lead reaches 09:15's slot.",
			args:   args{h: learned(4), t: mon(8, 50), g: Goal{WarmShare: 0.9, Lead: 15 * time.Minute, MaxExecutors: 100}},
			want: Recommendation{
				Executors: 8, Until: mon(9, 0), ExpectedShare: 0.9, Weeks: 4,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 360 slot-hours a week start 90% of them warm and 90% on weeks they were not learned from, against a target of 90%",
			},
		},
		"LeadShortOfTheNextSlot": {
			reason: "At 08:30 a lead of 10 minutes stays in 08:30's slot: nothing yet; ask again at 08:35, when the lead reaches 08:45's slot.",
			args:   args{h: learned(4), t: mon(8, 30), g: Goal{WarmShare: 0.9, Lead: 10 * time.Minute, MaxExecutors: 100}},
			want: Recommendation{
				Until: mon(8, 35), ExpectedShare: 0.9, Weeks: 4,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 360 slot-hours a week start 90% of them warm and 90% on weeks they were not learned from, against a target of 90%",
			},
		},
		"LeadOfAWeek": {
			reason: "A lead of a week or more touches every slot: the week's largest level, the nightly job's 40.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.99, Lead: 8 * 24 * time.Hour, MaxExecutors: 100}},
			want: Recommendation{
				Executors: 40, Until: mon(10, 15), ExpectedShare: 0.99, Weeks: 4,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 440 slot-hours a week start 99% of them warm and 99% on weeks they were not learned from, against a target of 99%",
			},
		},
		"MaxSlotsBinds": {
			reason: "maxSlots 5 holds every slot with starts at 5, and the quiet slots beside the weekend strays (counts that may be chance, so spread over the hour), and names the cap; the target is missed: 1,855 of 3,200 starts a week warm.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxSlots: 5, MaxExecutors: 100}},
			want: Recommendation{
				Executors: 5, Until: mon(10, 10), ExpectedShare: 0.5796875, Weeks: 4, Capped: CapMaxSlots,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 273.75 slot-hours a week start 58% of them warm and 58% on weeks they were not learned from, against a target of 90%; bound by maxSlots",
			},
		},
		"MaxDollarsPerHourBinds": {
			reason: "$1 an hour at $0.25 a slot-hour is 4 slots, below maxSlots 5: 1,484 of 3,200 starts a week warm.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxSlots: 5, MaxExecutors: 100, DollarsPerSlotHour: 0.25, PriceKnown: true, MaxDollarsPerHour: 1, DollarCap: true}},
			want: Recommendation{
				Executors: 4, Until: mon(10, 10), ExpectedShare: 0.46375, DollarsPerHour: 1, Weeks: 4, Capped: CapMaxDollarsPerHour,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 219 slot-hours a week start 46% of them warm and 46% on weeks they were not learned from, against a target of 90%; bound by maxDollarsPerHour",
			},
		},
		"UnknownPriceWithDollarCap": {
			reason: "While what a slot costs is not known, a cap in dollars cannot be shown to hold: no warm slots, bound by the cap, and the reason says why.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 100, MaxDollarsPerHour: 1, DollarCap: true}},
			want: Recommendation{
				Until: mon(10, 10), Weeks: 4, Capped: CapMaxDollarsPerHour,
				Reason: "what a warm slot costs is not known yet, so no warm slot can be shown to fit maxDollarsPerHour (1 USD an hour): no learned warm slots until the slots have a price",
			},
		},
		"ZeroDollarCap": {
			reason: "A cap of $0 an hour allows no slot that costs something.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 100, DollarsPerSlotHour: 0.25, PriceKnown: true, DollarCap: true}},
			want: Recommendation{
				Until: mon(10, 10), Weeks: 4, Capped: CapMaxDollarsPerHour,
				Reason: "maxDollarsPerHour is 0 USD an hour, less than one warm slot costs (0.25 USD an hour): no learned warm slots",
			},
		},
		"DollarCapBelowOneSlot": {
			reason: "A cap in dollars below one slot's price allows none, as a cap of 0 does.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 100, DollarsPerSlotHour: 0.25, PriceKnown: true, MaxDollarsPerHour: 0.2, DollarCap: true}},
			want: Recommendation{
				Until: mon(10, 10), Weeks: 4, Capped: CapMaxDollarsPerHour,
				Reason: "maxDollarsPerHour is 0.2 USD an hour, less than one warm slot costs (0.25 USD an hour): no learned warm slots",
			},
		},
		"ZeroDollarCapOnFreeSlots": {
			reason: "Slots that cost nothing keep within any cap in dollars, 0 too.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 100, PriceKnown: true, DollarCap: true}},
			want: Recommendation{
				Executors: 8, Until: mon(10, 10), ExpectedShare: 0.9, Weeks: 4,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 360 slot-hours a week start 90% of them warm and 90% on weeks they were not learned from, against a target of 90%",
			},
		},
		"MaxExecutorsBinds": {
			reason: "The pool's maxExecutors of 6 binds below maxSlots of 7: 2,226 of 3,200 starts a week warm.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxSlots: 7, MaxExecutors: 6}},
			want: Recommendation{
				Executors: 6, Until: mon(10, 10), ExpectedShare: 0.695625, Weeks: 4, Capped: CapMaxExecutors,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 328.5 slot-hours a week start 70% of them warm and 70% on weeks they were not learned from, against a target of 90%; bound by maxExecutors",
			},
		},
		"CapThatDoesNotBind": {
			reason: "A cap above what the slots need is not named.",
			args:   args{h: learned(4), t: mon(10, 0), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxSlots: 9, MaxExecutors: 100}},
			want: Recommendation{
				Executors: 8, Until: mon(10, 10), ExpectedShare: 0.9, Weeks: 4,
				Reason: "4 weeks of history, 12800 executor starts: warm levels of 360 slot-hours a week start 90% of them warm and 90% on weeks they were not learned from, against a target of 90%",
			},
		},
		"OneWeek": {
			reason: "One week of history is enough to learn from, with nothing to check it on: the weekend strays, counts that may be chance, spread to a quiet neighbour (one executor more).",
			args:   args{h: learned(1), t: mon(10, 0).Add(-3 * 7 * 24 * time.Hour), g: Goal{WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 100}},
			want: Recommendation{
				Executors: 8, Until: mon(10, 10).Add(-3 * 7 * 24 * time.Hour), ExpectedShare: 0.9003, Weeks: 1,
				Reason: "1 week of history, 3200 executor starts: warm levels of 360.25 slot-hours a week start 90% of them warm, against a target of 90%",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.args.h.Recommend(tc.args.t, tc.args.g)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-4)); diff != "" {
				t.Errorf("\n%s\nRecommend(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestGreedyIsLeastCost compares greedy's levels with every choice of
// levels for three slots of random samples: none meets the target with
// fewer warm slot-hours under the same estimate, but for the one executor
// the last step rounds up.
func TestGreedyIsLeastCost(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	slots := []int{100, 101, 102}
	for trial := range 300 {
		var segs []segment
		var total float64
		for _, s := range slots {
			var obs []sample
			for range rng.IntN(5) {
				o := sample{peak: uint32(1 + rng.IntN(6)), starts: float64(rng.IntN(9))}
				obs = append(obs, o)
				total += o.starts
			}
			slices.SortStableFunc(obs, func(a, b sample) int { return int(a.peak) - int(b.peak) })
			segs = appendSegments(segs, s, obs)
		}
		segs, _, _ = byRate(segs, nil, nil, nil)
		share := []float64{0.5, 0.8, 0.9, 1}[trial%4]
		p := greedy(segs, math.MaxInt32, total, share)
		var cost int32
		for _, l := range p.levels {
			cost += l
		}
		best := int32(math.MaxInt32)
		var levels [SlotsPerWeek]int32
		for a := range int32(7) {
			for b := range int32(7) {
				for c := range int32(7) {
					levels[slots[0]], levels[slots[1]], levels[slots[2]] = a, b, c
					if estimate(segs, levels) >= share*total-1e-9 {
						best = min(best, a+b+c)
					}
				}
			}
		}
		got := []int32{p.levels[slots[0]], p.levels[slots[1]], p.levels[slots[2]]}
		if warm := estimate(segs, p.levels); warm < share*total-1e-9 {
			t.Fatalf("trial %d: the levels %v start %.2f of %.2f warm, short of %.0f%%", trial, got, warm, total, 100*share)
		}
		if cost > best+1 {
			t.Errorf("trial %d: the levels %v cost %d; the least that meets %.0f%% cost %d", trial, got, cost, 100*share, best)
		}
	}
}

// estimate is the warm starts segs say levels buy.
func estimate(segs []segment, levels [SlotsPerWeek]int32) float64 {
	var warm float64
	for _, sg := range segs {
		if l := levels[sg.slot]; l > sg.from {
			warm += sg.rate * float64(min(l, sg.to)-sg.from)
		}
	}
	return warm
}

func TestCalibrate(t *testing.T) {
	// repeating has the same bursts every week; wandering one burst a week,
	// in a slot no other week has one.
	repeating := &History{}
	wandering := &History{}
	for w := range Weeks {
		for s := range SlotsPerWeek {
			at := monday.Add(time.Duration(w*SlotsPerWeek+s)*SlotLength + time.Minute)
			wanted, starts := pattern(s)
			repeating.Observe(at, wanted, starts, 0)
			if s == 40+100*w {
				wanted, starts = 6, 6
			} else {
				wanted, starts = 0, 0
			}
			wandering.Observe(at, wanted, starts, 0)
		}
	}
	oneWeek := learned(1)
	cases := map[string]struct {
		reason string
		h      *History
		want   calibration
	}{
		"Repeating": {
			reason: "Weeks alike: a plan from any three meets the target on the fourth as planned.",
			h:      repeating,
			want:   calibration{Plan: 0.9, Unseen: 0.9, Checked: true},
		},
		"Wandering": {
			reason: "Bursts that never recur: no plan of the other weeks warms the left-out week's, so the plan goes as far as the history goes.",
			h:      wandering,
			want:   calibration{Plan: 1, Unseen: 0, Checked: true},
		},
		"OneWeek": {
			reason: "One week leaves nothing to check a plan on.",
			h:      oneWeek,
			want:   calibration{Plan: 0.9},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.h.demand().calibrate(0.9, math.MaxInt32)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
				t.Errorf("\n%s\ncalibrate(0.9): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRadixSort sorts keys as byRate makes them: an index in the low
// indexBits, in order, below random bits, many of them equal (a few
// distinct values when shifted far).
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 2, 10, 1000, 2048, 20000} {
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = (rng.Uint64()>>uint(rng.IntN(64)))&^(1<<indexBits-1) | uint64(i)
		}
		want := slices.Sorted(slices.Values(keys))
		if got, _ := radixSort(slices.Clone(keys), nil); !slices.Equal(want, got) {
			t.Errorf("radixSort of %d keys is not sorted", n)
		}
	}
}
