package decision

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/warmpolicy"
)

// monday9 is 09:00 UTC on a Monday: inside business hours.
var monday9 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// at is monday9 moved by d.
func at(d time.Duration) time.Time { return monday9.Add(d) }

// businessHours opens at 08:00 UTC on weekdays for 10 hours at 6
// executors.
var businessHours = poolv1alpha1.WarmWindow{Name: "business-hours", Schedule: "0 8 * * mon-fri", Duration: "10h", Executors: 6}

// scheduledPolicy is a Scheduled warm policy of windows.
func scheduledPolicy(ws ...poolv1alpha1.WarmWindow) *poolv1alpha1.WarmPolicy {
	return &poolv1alpha1.WarmPolicy{Type: poolv1alpha1.WarmScheduled, Windows: ws}
}

// warmSettings are the defaulted settings' warmPolicy.
func warmSettings(edit func(*v1beta1.WarmPolicy)) v1beta1.WarmPolicy {
	s := v1beta1.WarmPolicy{LeadTime: defaultLeadTime, Learned: &v1beta1.LearnedWarmPolicy{TargetWarmPercent: defaultTargetWarmPercent}}
	if edit != nil {
		edit(&s)
	}
	return s
}

// recommended is a recommendation of n executors until until, at half a
// dollar a slot.
func recommended(n int32, until time.Time) *capv1alpha1.WarmRecommendation {
	return &capv1alpha1.WarmRecommendation{Executors: n, Until: metav1.Time{Time: until}, Reason: "history says so",
		ExpectedWarmPercent: 92, DollarsPerHour: dollarString(float64(n) * 0.5), Weeks: 3}
}

// levelSummary is what a test reads of a warm level decision.
type levelSummary struct {
	Executors int32
	// Status is status.warmPolicy without its reason, which Reason checks.
	Status *poolv1alpha1.WarmPolicyStatus
	// Until and RequeueAfter are the Outcome's.
	Until        time.Time
	RequeueAfter time.Duration
	// Condition is the WarmPolicy condition's status and reason.
	Condition string
	// Events are the events' reasons.
	Events  []string
	Learned *capv1alpha1.WarmPolicy
}

func summarize(l WarmLevel, o Outcome) (levelSummary, string) {
	s := levelSummary{Executors: l.Executors, Until: o.Until, RequeueAfter: o.RequeueAfter, Learned: l.Learned}
	reason := ""
	if l.Status != nil {
		st := *l.Status
		reason, st.Reason = st.Reason, ""
		s.Status = &st
	}
	for _, c := range o.Conditions {
		if c.Type == CondWarmPolicy {
			s.Condition = string(c.Status) + "/" + c.Reason
		}
	}
	for _, r := range o.Results {
		s.Events = append(s.Events, r.Reason)
	}
	return s, reason
}

func until(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

func TestWarmLevel(t *testing.T) {
	base := func(edit func(*WarmLevelInput)) WarmLevelInput {
		in := WarmLevelInput{Now: monday9, MinExecutors: 2, MaxExecutors: 10, Cap: 1000, Settings: warmSettings(nil), Policy: scheduledPolicy(businessHours)}
		if edit != nil {
			edit(&in)
		}
		return in
	}
	window := func(executors int32, u time.Time) *poolv1alpha1.WarmPolicyStatus {
		return &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Executors: executors, Source: poolv1alpha1.WarmFromWindow, Until: until(u)}
	}
	minimum := func(typ string, executors int32, u time.Time) *poolv1alpha1.WarmPolicyStatus {
		st := &poolv1alpha1.WarmPolicyStatus{Type: typ, Executors: executors, Source: poolv1alpha1.WarmFromMinExecutors}
		if !u.IsZero() {
			st.Until = until(u)
		}
		return st
	}
	learnedGoal := func(target, maxSlots int32, maxDollars string) *capv1alpha1.WarmPolicy {
		return &capv1alpha1.WarmPolicy{Learned: &capv1alpha1.LearnedGoal{TargetWarmPercent: target, Lead: metav1.Duration{Duration: 2 * time.Minute}, MaxSlots: maxSlots, MaxDollarsPerHour: maxDollars}}
	}
	learned := func(executors int32, u time.Time) *poolv1alpha1.WarmPolicyStatus {
		return &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmLearned, Executors: executors, Source: poolv1alpha1.WarmFromLearned, Until: until(u)}
	}
	learnedPolicy := &poolv1alpha1.WarmPolicy{Type: poolv1alpha1.WarmLearned}
	tomorrow758 := at(22*time.Hour + 58*time.Minute)
	cases := map[string]struct {
		reason string
		in     WarmLevelInput
		want   levelSummary
		// reasonHas are words status.warmPolicy.reason must hold.
		reasonHas []string
	}{
		"NoPolicy": {
			reason: "A pool without spec.warmPolicy keeps minExecutors warm, as the reference says, and shows nothing new.",
			in:     base(func(in *WarmLevelInput) { in.Policy = nil }),
			want:   levelSummary{Executors: 2},
		},
		"NoPolicyMinAboveMax": {
			reason: "The static level is never above maxExecutors, as the placeholders were before.",
			in:     base(func(in *WarmLevelInput) { in.Policy, in.MinExecutors, in.MaxExecutors = nil, 12, 10 }),
			want:   levelSummary{Executors: 10},
		},
		"Static": {
			reason: "An explicit Static policy keeps minExecutors and says so on the status.",
			in: base(func(in *WarmLevelInput) {
				in.Policy = &poolv1alpha1.WarmPolicy{Type: poolv1alpha1.WarmStatic, Windows: []poolv1alpha1.WarmWindow{businessHours}}
			}),
			want: levelSummary{Executors: 2, Status: minimum(poolv1alpha1.WarmStatic, 2, time.Time{}), Condition: "True/MinExecutors"},
		},
		"InsideWindow": {
			reason: "At 09:00 on a Monday business hours are open: 6 warm until they close at 18:00, when the pool is decided again.",
			in:     base(nil),
			want: levelSummary{Executors: 6, Status: window(6, at(9*time.Hour)), Until: at(9 * time.Hour), RequeueAfter: 9 * time.Hour,
				Condition: "True/Window"},
			reasonHas: []string{"business-hours"},
		},
		"OutsideWindow": {
			reason: "At 19:00 the window has closed: minExecutors until the lead time before it opens again the next morning.",
			in:     base(func(in *WarmLevelInput) { in.Now = at(10 * time.Hour) }),
			want: levelSummary{Executors: 2, Status: minimum(poolv1alpha1.WarmScheduled, 2, tomorrow758), Until: tomorrow758, RequeueAfter: tomorrow758.Sub(at(10 * time.Hour)),
				Condition: "True/MinExecutors"},
		},
		"WithinLead": {
			reason: "One minute before the window opens it is within the 2m lead: the slots rise ahead of it.",
			in:     base(func(in *WarmLevelInput) { in.Now = at(-61 * time.Minute) }),
			want: levelSummary{Executors: 6, Status: window(6, at(9*time.Hour)), Until: at(9 * time.Hour), RequeueAfter: 10*time.Hour + time.Minute,
				Condition: "True/Window"},
		},
		"BeforeLead": {
			reason: "Three minutes before the window opens, the lead has not begun: the pool comes back when it does.",
			in:     base(func(in *WarmLevelInput) { in.Now = at(-63 * time.Minute) }),
			want: levelSummary{Executors: 2, Status: minimum(poolv1alpha1.WarmScheduled, 2, at(-62*time.Minute)), Until: at(-62 * time.Minute), RequeueAfter: time.Minute,
				Condition: "True/MinExecutors"},
		},
		"LongerLead": {
			reason: "The settings' lead time sets how far ahead the slots rise.",
			in: base(func(in *WarmLevelInput) {
				in.Now, in.Settings = at(-63*time.Minute), warmSettings(func(s *v1beta1.WarmPolicy) { s.LeadTime = "5m" })
			}),
			want: levelSummary{Executors: 6, Status: window(6, at(9*time.Hour)), Until: at(9 * time.Hour), RequeueAfter: 10*time.Hour + 3*time.Minute,
				Condition: "True/Window"},
		},
		"OverlapLargestWins": {
			reason: "Where windows overlap, the largest level holds, until the schedule next changes.",
			in: base(func(in *WarmLevelInput) {
				in.Policy = scheduledPolicy(businessHours, poolv1alpha1.WarmWindow{Name: "month-end", Schedule: "0 6 23 11 *", Duration: "4h", Executors: 9})
			}),
			want:      levelSummary{Executors: 9, Status: window(9, at(time.Hour)), Until: at(time.Hour), RequeueAfter: time.Hour, Condition: "True/Window"},
			reasonHas: []string{"month-end"},
		},
		"TimeZone": {
			reason: "A window's schedule is read in its time zone: 08:00 in New York is 13:00 UTC, so at 09:00 UTC the pool waits for it.",
			in: base(func(in *WarmLevelInput) {
				w := businessHours
				w.TimeZone = "America/New_York"
				in.Policy = scheduledPolicy(w)
			}),
			want: levelSummary{Executors: 2, Status: minimum(poolv1alpha1.WarmScheduled, 2, at(3*time.Hour+58*time.Minute)), Until: at(3*time.Hour + 58*time.Minute),
				RequeueAfter: 3*time.Hour + 58*time.Minute, Condition: "True/MinExecutors"},
		},
		"MinExecutorsAboveWindow": {
			reason: "A window never lowers the level below minExecutors.",
			in:     base(func(in *WarmLevelInput) { in.MinExecutors = 8 }),
			want: levelSummary{Executors: 8, Status: &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Executors: 8, Source: poolv1alpha1.WarmFromMinExecutors, Until: until(at(9 * time.Hour))},
				Until: at(9 * time.Hour), RequeueAfter: 9 * time.Hour, Condition: "True/MinExecutors"},
		},
		"ClassWindow": {
			reason: "A class of the settings adds its window to the pool's: the larger, named as the platform's, holds.",
			in: base(func(in *WarmLevelInput) {
				in.Classes = classWindows([]v1beta1.WarmClass{
					{Namespaces: []string{"analytics-*"}, Windows: []poolv1alpha1.WarmWindow{{Name: "trading", Schedule: "30 8 * * *", Duration: "1h", Executors: 8}}},
					{Namespaces: []string{"other"}, Windows: []poolv1alpha1.WarmWindow{{Name: "never", Schedule: "* * * * *", Duration: "1h", Executors: 10}}},
				}, "analytics-eu")
			}),
			want:      levelSummary{Executors: 8, Status: window(8, at(30*time.Minute)), Until: at(30 * time.Minute), RequeueAfter: 30 * time.Minute, Condition: "True/Window"},
			reasonHas: []string{"platform/trading"},
		},
		"ClassWindowAboveMax": {
			reason: "A class's window is bounded by the pool's maxExecutors.",
			in: base(func(in *WarmLevelInput) {
				in.Classes = []poolv1alpha1.WarmWindow{{Name: "platform/all-day", Schedule: "0 0 * * *", Duration: "24h", Executors: 50}}
			}),
			want:      levelSummary{Executors: 10, Status: window(10, at(9*time.Hour)), Until: at(9 * time.Hour), RequeueAfter: 9 * time.Hour, Condition: "True/Window"},
			reasonHas: []string{"maxExecutors (10)"},
		},
		"TenancyCap": {
			reason:    "The tenancy's cap bounds the level too.",
			in:        base(func(in *WarmLevelInput) { in.Cap = 4 }),
			want:      levelSummary{Executors: 4, Status: window(4, at(9*time.Hour)), Until: at(9 * time.Hour), RequeueAfter: 9 * time.Hour, Condition: "True/Window"},
			reasonHas: []string{"tenancy cap (4)"},
		},
		"InvalidCronKeepsLevel": {
			reason: "A schedule that does not parse is refused on the claim; the level the pool held stays until the windows would have changed it, and so does every object.",
			in: base(func(in *WarmLevelInput) {
				in.Policy = scheduledPolicy(poolv1alpha1.WarmWindow{Name: "typo", Schedule: "0 25 * * *", Duration: "1h", Executors: 6})
				in.Previous = &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Executors: 6, Source: poolv1alpha1.WarmFromWindow, Until: until(at(2 * time.Hour))}
			}),
			want: levelSummary{Executors: 6, Status: &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Executors: 6, Source: poolv1alpha1.WarmFromWindow, Until: until(at(2 * time.Hour))},
				Until: at(2 * time.Hour), RequeueAfter: 2 * time.Hour, Condition: "False/InvalidWarmPolicy", Events: []string{ReasonInvalidWarmPolicy}},
			reasonHas: []string{`window "typo"`, "0 25 * * *", "stays at 6"},
		},
		"InvalidCronHeldNoLonger": {
			reason: "Past the time the held level would have changed, a refused policy keeps it no longer: a tenant cannot pin a window's level by breaking its schedule.",
			in: base(func(in *WarmLevelInput) {
				in.Policy = scheduledPolicy(poolv1alpha1.WarmWindow{Name: "typo", Schedule: "0 25 * * *", Duration: "1h", Executors: 6})
				in.Previous = &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Executors: 6, Source: poolv1alpha1.WarmFromWindow, Until: until(at(-time.Minute))}
				in.PreviousReason = ReasonInvalidWarmPolicy
			}),
			want:      levelSummary{Executors: 2, Status: &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Executors: 2, Source: poolv1alpha1.WarmFromMinExecutors}, Condition: "False/InvalidWarmPolicy"},
			reasonHas: []string{"minExecutors (2)"},
		},
		"InvalidCronOnce": {
			reason: "The refusal's event is emitted once, when the condition turns.",
			in: base(func(in *WarmLevelInput) {
				in.Policy = scheduledPolicy(poolv1alpha1.WarmWindow{Name: "typo", Schedule: "0 8 * * someday", Duration: "1h", Executors: 6})
				in.PreviousReason = ReasonInvalidWarmPolicy
			}),
			want: levelSummary{Executors: 2, Status: &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Executors: 2, Source: poolv1alpha1.WarmFromMinExecutors}, Condition: "False/InvalidWarmPolicy"},
		},
		"UnknownTimeZone": {
			reason: "A time zone that is not an IANA name is refused, naming the window.",
			in: base(func(in *WarmLevelInput) {
				w := businessHours
				w.TimeZone = "Mars/Olympus_Mons"
				in.Policy = scheduledPolicy(w)
			}),
			want:      levelSummary{Executors: 2, Status: minimum(poolv1alpha1.WarmScheduled, 2, time.Time{}), Condition: "False/InvalidWarmPolicy", Events: []string{ReasonInvalidWarmPolicy}},
			reasonHas: []string{"business-hours", "Mars/Olympus_Mons"},
		},
		"LevelChanged": {
			reason: "A window that opens changes the level: an event says so.",
			in: base(func(in *WarmLevelInput) {
				in.Previous = &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Executors: 2, Source: poolv1alpha1.WarmFromMinExecutors}
			}),
			want: levelSummary{Executors: 6, Status: window(6, at(9*time.Hour)), Until: at(9 * time.Hour), RequeueAfter: 9 * time.Hour,
				Condition: "True/Window", Events: []string{ReasonWarmLevelChanged}},
		},
		"Suspended": {
			reason: "A suspended pool keeps no slot warm, and its status says so; the level it would hold changing is no event.",
			in: base(func(in *WarmLevelInput) {
				in.Suspend = true
				in.Previous = &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Source: poolv1alpha1.WarmFromMinExecutors}
			}),
			want: levelSummary{Executors: 6, Status: &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmScheduled, Source: poolv1alpha1.WarmFromWindow, Until: until(at(9 * time.Hour))},
				Until: at(9 * time.Hour), RequeueAfter: 9 * time.Hour, Condition: "True/Window"},
			reasonHas: []string{"suspended", "would be 6"},
		},
		"LearnedFromRecommendation": {
			reason: "A Learned pool holds the provider's recommendation until it is revised, and asks for it with the settings' target and lead.",
			in: base(func(in *WarmLevelInput) {
				in.Policy, in.Recommendation = learnedPolicy, recommended(7, at(15*time.Minute))
			}),
			want: levelSummary{Executors: 7, Status: learned(7, at(15*time.Minute)), Until: at(15 * time.Minute), RequeueAfter: 15 * time.Minute,
				Condition: "True/Learned", Learned: learnedGoal(90, 0, "")},
			reasonHas: []string{"history says so"},
		},
		"LearnedPoolTarget": {
			reason: "The pool's own target wins over the settings'; the caps are the settings' alone.",
			in: base(func(in *WarmLevelInput) {
				in.Policy = &poolv1alpha1.WarmPolicy{Type: poolv1alpha1.WarmLearned, Learned: &poolv1alpha1.LearnedWarmPolicy{TargetWarmPercent: ptr.To[int32](95)}}
				in.Settings = warmSettings(func(s *v1beta1.WarmPolicy) { s.Learned.MaxSlots, s.Learned.MaxDollarsPerHour = 8, "40" })
			}),
			want:      levelSummary{Executors: 2, Status: minimum(poolv1alpha1.WarmLearned, 2, time.Time{}), Condition: "True/MinExecutors", Learned: learnedGoal(95, 8, "40")},
			reasonHas: []string{"no learned warm level"},
		},
		"LearnedBoundByMaxSlots": {
			reason: "A recommendation above the settings' maxSlots (lowered since it was made) is held to it.",
			in: base(func(in *WarmLevelInput) {
				in.Policy, in.Recommendation = learnedPolicy, recommended(7, at(15*time.Minute))
				in.Settings = warmSettings(func(s *v1beta1.WarmPolicy) { s.Learned.MaxSlots = 5 })
			}),
			want: levelSummary{Executors: 5, Status: learned(5, at(15*time.Minute)), Until: at(15 * time.Minute), RequeueAfter: 15 * time.Minute,
				Condition: "True/Learned", Learned: learnedGoal(90, 5, "")},
			reasonHas: []string{"maxSlots (5)"},
		},
		"LearnedBoundByDollars": {
			reason: "A recommendation that costs more than the settings' maxDollarsPerHour is held to what it buys: $2 at $0.50 a slot is 4 slots.",
			in: base(func(in *WarmLevelInput) {
				in.Policy, in.Recommendation = learnedPolicy, recommended(8, at(15*time.Minute))
				in.Settings = warmSettings(func(s *v1beta1.WarmPolicy) { s.Learned.MaxDollarsPerHour = "2.00" })
			}),
			want: levelSummary{Executors: 4, Status: learned(4, at(15*time.Minute)), Until: at(15 * time.Minute), RequeueAfter: 15 * time.Minute,
				Condition: "True/Learned", Learned: learnedGoal(90, 0, "2.00")},
			reasonHas: []string{"maxDollarsPerHour (2.00)"},
		},
		"LearnedBelowMin": {
			reason: "A learned level below minExecutors does not lower it.",
			in: base(func(in *WarmLevelInput) {
				in.Policy, in.Recommendation = learnedPolicy, recommended(1, at(15*time.Minute))
			}),
			want: levelSummary{Executors: 2, Status: &poolv1alpha1.WarmPolicyStatus{Type: poolv1alpha1.WarmLearned, Executors: 2, Source: poolv1alpha1.WarmFromMinExecutors, Until: until(at(15 * time.Minute))},
				Until: at(15 * time.Minute), RequeueAfter: 15 * time.Minute, Condition: "True/MinExecutors", Learned: learnedGoal(90, 0, "")},
		},
		"LearnedOverdue": {
			reason: "A recommendation past its until, but less than a slot past it, still holds until it lapses.",
			in: base(func(in *WarmLevelInput) {
				in.Policy, in.Recommendation = learnedPolicy, recommended(7, at(-5*time.Minute))
			}),
			want: levelSummary{Executors: 7, Status: learned(7, at(-5*time.Minute)), Until: at(10 * time.Minute), RequeueAfter: 10 * time.Minute,
				Condition: "True/Learned", Learned: learnedGoal(90, 0, "")},
		},
		"LearnedLapsed": {
			reason: "A recommendation a slot past its until no longer counts: the provider stopped revising it.",
			in: base(func(in *WarmLevelInput) {
				in.Policy, in.Recommendation = learnedPolicy, recommended(7, at(-30*time.Minute))
			}),
			want:      levelSummary{Executors: 2, Status: minimum(poolv1alpha1.WarmLearned, 2, time.Time{}), Condition: "True/MinExecutors", Learned: learnedGoal(90, 0, "")},
			reasonHas: []string{"lapsed at 2026-11-23T08:30:00Z"},
		},
		"LearnedTooFarAhead": {
			reason: "A recommendation that says it holds for years was not written by the provider, which revises its own every slot: not applied.",
			in: base(func(in *WarmLevelInput) {
				in.Policy, in.Recommendation = learnedPolicy, recommended(64, at(10*365*24*time.Hour))
			}),
			want:      levelSummary{Executors: 2, Status: minimum(poolv1alpha1.WarmLearned, 2, time.Time{}), Condition: "True/MinExecutors", Learned: learnedGoal(90, 0, "")},
			reasonHas: []string{"further ahead than the capacity provider ever revises it"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, reason := summarize(warmLevel(tc.in))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nwarmLevel(...): -want, +got:\n%s", tc.reason, diff)
			}
			for _, w := range tc.reasonHas {
				if !strings.Contains(reason, w) {
					t.Errorf("%s\nstatus.warmPolicy.reason %q does not say %q", tc.reason, reason, w)
				}
			}
		})
	}
}

func TestValidateWarmPolicy(t *testing.T) {
	cases := map[string]struct {
		reason string
		w      v1beta1.WarmPolicy
		// want are the paths of the errors, and words of their messages.
		want map[string]string
	}{
		"Defaults": {
			reason: "The defaults are valid.",
			w:      warmSettings(nil),
		},
		"LeadNotADuration": {
			reason: "The lead time is a duration.",
			w:      warmSettings(func(s *v1beta1.WarmPolicy) { s.LeadTime = "soon" }),
			want:   map[string]string{"warmPolicy.leadTime": `"soon" is not a duration`},
		},
		"TargetAbove100": {
			reason: "The target is a percentage.",
			w:      warmSettings(func(s *v1beta1.WarmPolicy) { s.Learned.TargetWarmPercent = 120 }),
			want:   map[string]string{"warmPolicy.learned.targetWarmPercent": "120 is not between 1 and 100"},
		},
		"DollarsNotADecimal": {
			reason: "The dollar cap is a decimal.",
			w:      warmSettings(func(s *v1beta1.WarmPolicy) { s.Learned.MaxDollarsPerHour = "$12" }),
			want:   map[string]string{"warmPolicy.learned.maxDollarsPerHour": `"$12" is not a decimal`},
		},
		"DollarsBeyondAFloat": {
			reason: "A dollar cap of 310 digits matches a decimal, yet no float holds it: the provider could not parse the goal.",
			w:      warmSettings(func(s *v1beta1.WarmPolicy) { s.Learned.MaxDollarsPerHour = "1" + strings.Repeat("0", 309) }),
			want:   map[string]string{"warmPolicy.learned.maxDollarsPerHour": "is not a decimal"},
		},
		"ClassWindowInvalid": {
			reason: "A class's window is compiled as a pool's would be, and refused naming it.",
			w: warmSettings(func(s *v1beta1.WarmPolicy) {
				s.Classes = []v1beta1.WarmClass{{Namespaces: []string{"analytics-*"}, Windows: []poolv1alpha1.WarmWindow{{Name: "eu", Schedule: "0 8 * *", Duration: "1h", Executors: 2}}}}
			}),
			want: map[string]string{"warmPolicy.classes[0].windows": `window "eu"`},
		},
		"ClassWindowTooLong": {
			reason: "A class's window lasts at most a week.",
			w: warmSettings(func(s *v1beta1.WarmPolicy) {
				s.Classes = []v1beta1.WarmClass{{Namespaces: []string{"a"}, Windows: []poolv1alpha1.WarmWindow{{Name: "eu", Schedule: "0 8 * * *", Duration: "200h", Executors: 2}}}}
			}),
			want: map[string]string{"warmPolicy.classes[0].windows": "longer than a week"},
		},
		"ClassWithoutNamespaces": {
			reason: "A class names the namespaces it applies to, as valid patterns, and its windows by distinct names.",
			w: warmSettings(func(s *v1beta1.WarmPolicy) {
				s.Classes = []v1beta1.WarmClass{{Windows: []poolv1alpha1.WarmWindow{businessHours, businessHours}}, {Namespaces: []string{"[a-"}, Windows: []poolv1alpha1.WarmWindow{businessHours}}}
			}),
			want: map[string]string{
				"warmPolicy.classes[0].namespaces":      "is empty",
				"warmPolicy.classes[0].windows[1].name": "names an earlier window",
				"warmPolicy.classes[1].namespaces[0]":   "is not a glob pattern",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]string{}
			for _, e := range ValidateWarmPolicy(&tc.w) {
				got[e.Path] = e.Message
			}
			if len(got) != len(tc.want) {
				t.Errorf("%s\nerrors %v, want errors at %v", tc.reason, got, tc.want)
			}
			for p, w := range tc.want {
				if !strings.Contains(got[p], w) {
					t.Errorf("%s\nerror at %s is %q, want it to say %q", tc.reason, p, got[p], w)
				}
			}
		})
	}
}

// TestWarmPolicyNames checks that the Pool API's policy and source names
// are warmpolicy's, which the status and Decide share.
func TestWarmPolicyNames(t *testing.T) {
	api := []string{poolv1alpha1.WarmStatic, poolv1alpha1.WarmScheduled, poolv1alpha1.WarmLearned,
		poolv1alpha1.WarmFromMinExecutors, poolv1alpha1.WarmFromWindow, poolv1alpha1.WarmFromLearned}
	core := []string{warmpolicy.Static, warmpolicy.Scheduled, warmpolicy.Learned,
		warmpolicy.SourceMinExecutors, warmpolicy.SourceWindow, warmpolicy.SourceLearned}
	if diff := cmp.Diff(core, api); diff != "" {
		t.Errorf("the Pool API's warm policy and source names differ from internal/warmpolicy's: -warmpolicy, +API:\n%s", diff)
	}
}
