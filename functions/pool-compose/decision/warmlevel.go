package decision

// The warm level: how many executor slots a pool keeps warm now, under its
// warm policy (spec.warmPolicy). Static, the default, is minExecutors, as
// e6data's reference has it; Scheduled raises it while a window of the
// pool's, or of a class of the platform's settings, is open (or opens
// within the settings' lead time); Learned follows the warm level the
// capacity provider publishes in the PoolCapacity's
// status.atProvider.warmRecommendation. internal/warmpolicy computes the
// windows and combines the policies (Schedule.At, Decide); this file
// gathers what they need and says what the level means for the pool's
// objects, its status and the decision cache.

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/warmpolicy"
)

// CondWarmPolicy is the XPool condition that says which policy set the
// warm level and why: True with the level's source as its reason, False
// (InvalidWarmPolicy) while the pool's windows are refused. Only pools
// that set spec.warmPolicy have it.
const CondWarmPolicy = "WarmPolicy"

// Reasons of the WarmPolicy condition beside the level's sources, and of
// the events about the warm level.
const (
	ReasonInvalidWarmPolicy = "InvalidWarmPolicy"
	ReasonWarmLevelChanged  = "WarmLevelChanged"
)

// classWindowPrefix names a window of the settings' classes in the pool's
// status and messages, so that it is not taken for one of the pool's own.
const classWindowPrefix = "platform/"

// WarmLevelInput is what the warm level is decided from.
type WarmLevelInput struct {
	Now time.Time
	// Policy is the pool's spec.warmPolicy; nil is the reference's static
	// warm level, minExecutors, with nothing else to show.
	Policy                     *poolv1alpha1.WarmPolicy
	MinExecutors, MaxExecutors int32
	// Suspend is spec.suspend: no slot is kept warm, whatever the level.
	Suspend bool
	// Cap is the tenancy's cap on the pool's executors (tenancy.maxExecutors,
	// and tenancy.maxNodes times executorsPerNode when set); 0 for none.
	Cap int32
	// Settings is the settings' warmPolicy, defaulted and validated.
	Settings v1beta1.WarmPolicy
	// Classes are the windows of the settings' classes that match the
	// pool's namespace.
	Classes []poolv1alpha1.WarmWindow
	// Recommendation is the PoolCapacity's status.atProvider
	// .warmRecommendation; nil until the provider publishes one.
	Recommendation *capv1alpha1.WarmRecommendation
	// Previous is the previous status.warmPolicy, and PreviousReason the
	// reason of the WarmPolicy condition, so that a refusal keeps the level
	// and events are emitted only when something changed.
	Previous       *poolv1alpha1.WarmPolicyStatus
	PreviousReason string
}

// WarmLevel is the decision: the warm level, what the pool's status says
// of it, and the learned goal its PoolCapacity asks the provider for.
type WarmLevel struct {
	// Executors is the warm level: the slots kept warm, the executors
	// running included.
	Executors int32
	// Status is status.warmPolicy, without its cost (warmStatus adds it);
	// nil while the pool sets no warm policy.
	Status *poolv1alpha1.WarmPolicyStatus
	// Learned is the PoolCapacity's spec.forProvider.warmPolicy; nil unless
	// the policy is Learned.
	Learned *capv1alpha1.WarmPolicy
}

// decideWarmLevel decides the pool's warm level (warmLevel) from what
// Compute gathered.
func decideWarmLevel(in Input, f Facts) (WarmLevel, Outcome) {
	return warmLevel(warmLevelInput(in, f))
}

// warmLevelInput gathers the warm level's input.
func warmLevelInput(in Input, f Facts) WarmLevelInput {
	w := WarmLevelInput{
		Now: in.Now, Policy: in.Spec.WarmPolicy, MinExecutors: in.Spec.MinExecutors, MaxExecutors: in.Spec.MaxExecutors, Suspend: in.Spec.Suspend,
		Cap: tenancyCap(f.Tenant, f.PerNode), Previous: in.Previous.WarmPolicy, PreviousReason: in.PreviousConditions[CondWarmPolicy],
	}
	if s := in.Config.WarmPolicy; s != nil {
		w.Settings = *s
	}
	w.Classes = classWindows(w.Settings.Classes, in.Namespace)
	if f.Capacity != nil {
		w.Recommendation = f.Capacity.WarmRecommendation
	}
	return w
}

// tenancyCap is the most executors the tenancy lets the pool run:
// tenancy.maxExecutors, and tenancy.maxNodes nodes of perNode executors
// when set.
func tenancyCap(t Tenant, perNode int32) int32 {
	c := t.MaxExecutors
	if t.MaxNodes > 0 {
		c = int32(min(int64(c), int64(t.MaxNodes)*int64(perNode)))
	}
	return c
}

// classWindows are the windows of the classes whose namespaces match ns,
// named with classWindowPrefix.
func classWindows(classes []v1beta1.WarmClass, ns string) []poolv1alpha1.WarmWindow {
	var out []poolv1alpha1.WarmWindow
	for _, c := range classes {
		if !matchAny(c.Namespaces, ns) {
			continue
		}
		for _, w := range c.Windows {
			w.Name = classWindowPrefix + w.Name
			out = append(out, w)
		}
	}
	return out
}

// warmLevel decides the warm level:
//
//   - without spec.warmPolicy, minExecutors (at most maxExecutors), and
//     nothing more: the reference's pool, unchanged;
//   - Scheduled: the largest level of the pool's windows and its classes'
//     open at any instant from now to the lead time ahead, held until the
//     schedule may next change it (a window's lead before it opens, or its
//     close); windows that do not compile are refused on the claim (a
//     False WarmPolicy condition and an event) and the level stays what it
//     was;
//   - Learned: the provider's recommendation, bounded by the settings' caps
//     as they are now (a recommendation made under caps since lowered
//     does not hold), until it is revised; one the provider let lapse (a
//     slot past its until) no longer counts;
//
// then, whatever the policy, at least minExecutors and at most
// maxExecutors and the tenancy's cap (warmpolicy.Decide). The Outcome's
// Until and RequeueAfter bring the pool back when the level may change
// with the clock alone.
func warmLevel(in WarmLevelInput) (WarmLevel, Outcome) {
	var o Outcome
	static := WarmLevel{Executors: max(0, min(in.MinExecutors, in.MaxExecutors))}
	if in.Policy == nil {
		return static, o
	}
	policy := in.Policy.Type
	if policy == "" {
		policy = warmpolicy.Static
	}
	lead := leadTime(in.Settings)
	li := warmpolicy.LevelInput{Policy: policy, MinExecutors: in.MinExecutors, MaxExecutors: in.MaxExecutors, Cap: in.Cap}
	var until time.Time // when the status says the level is next revised
	out := WarmLevel{}
	switch policy {
	case warmpolicy.Scheduled:
		s, err := compileWindows(append(append([]poolv1alpha1.WarmWindow{}, in.Policy.Windows...), in.Classes...))
		if err != nil {
			return refuseWarmPolicy(in, policy, static, err)
		}
		var next time.Time
		li.Scheduled, li.Window, next = s.At(in.Now, lead)
		until = next
		o.Until = next
	case warmpolicy.Learned:
		goal := learnedGoal(in.Policy.Learned, in.Settings, lead)
		out.Learned = &capv1alpha1.WarmPolicy{Learned: goal}
		rec, expires := recommendation(in.Recommendation, goal)
		switch {
		case rec == nil:
		case !in.Now.Before(expires):
			// Lapsed: the provider has not revised it for a slot past its
			// until; the level no longer rests on it.
			rec = nil
		case rec.Until.After(in.Now.Add(warmpolicy.SlotLength + clockSkew)):
			// The provider revises its recommendation at least every slot,
			// so it never says one holds longer: one that does was not
			// written by it, and would hold its level for as long as it
			// says.
			rec = nil
		default:
			until = rec.Until
			o.Until = expires
			if in.Now.Before(rec.Until) {
				o.Until = rec.Until
			}
		}
		li.Learned = rec
	}
	l := warmpolicy.Decide(li)
	if policy == warmpolicy.Learned && li.Learned == nil && in.Recommendation != nil {
		l.Reason = fmt.Sprintf("the learned warm level lapsed at %s (the capacity provider has not revised it since): the warm level is minExecutors (%d)",
			in.Recommendation.Until.UTC().Format(time.RFC3339), l.Executors)
		if in.Recommendation.Until.After(in.Now) {
			l.Reason = fmt.Sprintf("the learned warm level says it holds until %s, further ahead than the capacity provider ever revises it (%s): not applied, the warm level is minExecutors (%d)",
				in.Recommendation.Until.UTC().Format(time.RFC3339), warmpolicy.SlotLength, l.Executors)
		}
	}
	out.Executors = l.Executors
	out.Status = &poolv1alpha1.WarmPolicyStatus{Type: policy, Executors: l.Executors, Source: l.Source, Reason: l.Reason}
	if in.Suspend {
		// The placeholders and the buffer hold nothing while suspended.
		out.Status.Executors = 0
		out.Status.Reason = fmt.Sprintf("the pool is suspended (spec.suspend): no slot is kept warm; resumed, the warm level would be %d: %s", l.Executors, l.Reason)
	}
	if !until.IsZero() {
		out.Status.Until = &metav1.Time{Time: until.UTC()}
	}
	if d := o.Until.Sub(in.Now); d > 0 {
		o.RequeueAfter = d
	}
	o.condition(CondWarmPolicy, metav1.ConditionTrue, l.Source, l.Reason)
	if p := in.Previous; p != nil && p.Executors != out.Status.Executors {
		o.event(false, ReasonWarmLevelChanged, fmt.Sprintf("the warm level changed from %d to %d executors: %s", p.Executors, out.Status.Executors, out.Status.Reason))
	}
	return out, o
}

// refuseWarmPolicy keeps the warm level the pool had (its previous
// status.warmPolicy, else minExecutors), and says on the claim what to fix
// in its windows: once, as an event, and for as long as it lasts, as the
// WarmPolicy condition.
func refuseWarmPolicy(in WarmLevelInput, policy string, static WarmLevel, err error) (WarmLevel, Outcome) {
	var o Outcome
	msg := fmt.Sprintf("spec.warmPolicy.windows are refused: %v", err)
	st := &poolv1alpha1.WarmPolicyStatus{Type: policy, Executors: static.Executors, Source: poolv1alpha1.WarmFromMinExecutors}
	st.Reason = fmt.Sprintf("%s; the warm level is minExecutors (%d) until they are fixed", msg, st.Executors)
	// The level the pool held stays for as long as it would have held:
	// until its until, when the windows would next have changed it. No
	// longer: a refused policy cannot keep a level the windows no longer
	// give.
	if p := in.Previous; p != nil && p.Source != "" && p.Until != nil && in.Now.Before(p.Until.Time) {
		st.Executors, st.Source, st.Until = min(max(p.Executors, static.Executors), in.MaxExecutors), p.Source, p.Until
		if in.Cap > 0 {
			st.Executors = min(st.Executors, in.Cap)
		}
		o.Until, o.RequeueAfter = p.Until.Time, p.Until.Sub(in.Now)
		st.Reason = fmt.Sprintf("%s; the warm level stays at %d executors until they are fixed, or until %s, when it would have changed",
			msg, st.Executors, p.Until.UTC().Format(time.RFC3339))
	}
	o.condition(CondWarmPolicy, metav1.ConditionFalse, ReasonInvalidWarmPolicy, st.Reason)
	if in.PreviousReason != ReasonInvalidWarmPolicy {
		o.event(true, ReasonInvalidWarmPolicy, st.Reason)
	}
	return WarmLevel{Executors: st.Executors, Status: st}, o
}

// compileWindows compiles windows for warmpolicy; a duration the API
// should have refused is refused here with the window's name.
func compileWindows(ws []poolv1alpha1.WarmWindow) (warmpolicy.Schedule, error) {
	out := make([]warmpolicy.Window, 0, len(ws))
	for _, w := range ws {
		d, err := time.ParseDuration(w.Duration)
		if err != nil {
			return warmpolicy.Schedule{}, fmt.Errorf("window %q: duration %q is not a duration such as 10h, 90m or 1h30m", w.Name, w.Duration)
		}
		out = append(out, warmpolicy.Window{Name: w.Name, Schedule: w.Schedule, Duration: d, Executors: w.Executors, TimeZone: w.TimeZone})
	}
	return warmpolicy.Compile(out)
}

// leadTime is the settings' warmPolicy.leadTime, which ValidateInput
// checked.
func leadTime(s v1beta1.WarmPolicy) time.Duration {
	d, err := time.ParseDuration(s.LeadTime)
	if err != nil {
		d, _ = time.ParseDuration(defaultLeadTime)
	}
	return d
}

// learnedGoal is what the PoolCapacity asks the provider's learned level
// to meet: the pool's target (else the settings'), within the settings'
// caps, the lead time ahead.
func learnedGoal(p *poolv1alpha1.LearnedWarmPolicy, s v1beta1.WarmPolicy, lead time.Duration) *capv1alpha1.LearnedGoal {
	g := &capv1alpha1.LearnedGoal{TargetWarmPercent: defaultTargetWarmPercent, Lead: metav1.Duration{Duration: lead}}
	if l := s.Learned; l != nil {
		if l.TargetWarmPercent > 0 {
			g.TargetWarmPercent = l.TargetWarmPercent
		}
		g.MaxSlots, g.MaxDollarsPerHour = l.MaxSlots, l.MaxDollarsPerHour
	}
	if p != nil && p.TargetWarmPercent != nil {
		g.TargetWarmPercent = *p.TargetWarmPercent
	}
	return g
}

// recommendation reads the provider's recommendation for warmpolicy,
// bounded by the goal's caps as the settings set them now (the provider
// applies them too, but a recommendation it made before the platform
// lowered a cap would exceed it until revised), and when it lapses: a
// slot after its until.
func recommendation(r *capv1alpha1.WarmRecommendation, g *capv1alpha1.LearnedGoal) (_ *warmpolicy.Recommendation, expires time.Time) {
	if r == nil {
		return nil, time.Time{}
	}
	dollars, _ := strconv.ParseFloat(r.DollarsPerHour, 64)
	rec := &warmpolicy.Recommendation{
		Executors: max(0, r.Executors), Until: r.Until.Time, Reason: r.Reason, ExpectedShare: float64(r.ExpectedWarmPercent) / 100,
		DollarsPerHour: dollars, Capped: r.Capped, Weeks: int(r.Weeks),
	}
	if g.MaxSlots > 0 && rec.Executors > g.MaxSlots {
		rec.Executors, rec.Capped = g.MaxSlots, "maxSlots"
		rec.Reason += fmt.Sprintf("; bounded by the settings' maxSlots (%d)", g.MaxSlots)
	}
	if maxDollars, err := strconv.ParseFloat(g.MaxDollarsPerHour, 64); err == nil && dollars > 0 && r.Executors > 0 && rec.Executors > 0 {
		perSlot := dollars / float64(r.Executors)
		if n := int32(math.Floor(maxDollars/perSlot + 1e-9)); n < rec.Executors {
			rec.Executors, rec.Capped = n, "maxDollarsPerHour"
			rec.Reason += fmt.Sprintf("; bounded by the settings' maxDollarsPerHour (%s)", g.MaxDollarsPerHour)
		}
	}
	return rec, r.Until.Add(warmpolicy.SlotLength)
}

// warmStatus is status.warmPolicy with what the warm level's slots cost
// per hour at perSlot dollars an hour each (0: no price known).
func warmStatus(l WarmLevel, perSlot float64) *poolv1alpha1.WarmPolicyStatus {
	if l.Status == nil {
		return nil
	}
	st := *l.Status
	if perSlot > 0 {
		st.DollarsPerHour = dollarString(float64(st.Executors) * perSlot)
	}
	return &st
}

// dollarString formats an amount of dollars to the hundredth of a cent.
func dollarString(d float64) string {
	return strconv.FormatFloat(math.Round(d*1e4)/1e4, 'f', -1, 64)
}

// clockSkew is how far the clocks of the function and the capacity
// provider may differ.
const clockSkew = time.Minute

// maxDollarsPattern is the form of learned.maxDollarsPerHour, as the
// capacity API's LearnedGoal takes it.
var maxDollarsPattern = regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,6})?$`)

// ValidateWarmPolicy checks the settings' warmPolicy, naming each field to
// fix: the lead time, the learned target and caps, and every class's
// namespaces and windows (compiled as the pools that get them would).
func ValidateWarmPolicy(w *v1beta1.WarmPolicy) []SettingError {
	if w == nil {
		return nil
	}
	var errs []SettingError
	bad := func(path, format string, args ...any) {
		errs = append(errs, SettingError{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if d, err := time.ParseDuration(w.LeadTime); err != nil || d < 0 || d > warmpolicy.MaxWindow {
		bad("warmPolicy.leadTime", "%q is not a duration from 0 to a week such as 2m: set at least the time a new node takes to run an executor", w.LeadTime)
	}
	if l := w.Learned; l != nil {
		if l.TargetWarmPercent < 1 || l.TargetWarmPercent > 100 {
			bad("warmPolicy.learned.targetWarmPercent", "%d is not between 1 and 100: set the share of executors, in percent, to start on an existing node", l.TargetWarmPercent)
		}
		if l.MaxSlots < 0 {
			bad("warmPolicy.learned.maxSlots", "%d is negative: set 0 for no cap, or the most warm slots a learned level may hold", l.MaxSlots)
		}
		if l.MaxDollarsPerHour != "" && !maxDollarsPattern.MatchString(l.MaxDollarsPerHour) {
			bad("warmPolicy.learned.maxDollarsPerHour", "%q is not a decimal number of dollars such as 12.50, below a billion with at most 6 decimals", l.MaxDollarsPerHour)
		}
	}
	for i, c := range w.Classes {
		at := fmt.Sprintf("warmPolicy.classes[%d]", i)
		if len(c.Namespaces) == 0 {
			bad(at+".namespaces", "is empty: list the namespaces (glob patterns) whose pools get the class's windows")
		}
		for j, p := range c.Namespaces {
			if _, err := path.Match(p, ""); err != nil {
				bad(fmt.Sprintf("%s.namespaces[%d]", at, j), "%q is not a glob pattern (Go's path.Match): %v", p, err)
			}
		}
		switch n := len(c.Windows); {
		case n == 0:
			bad(at+".windows", "is empty: give the class at least one window")
		case n > maxWindows:
			bad(at+".windows", "has %d windows: a class has at most %d", n, maxWindows)
		}
		seen := map[string]bool{}
		for j, win := range c.Windows {
			if win.Name == "" || seen[win.Name] {
				bad(fmt.Sprintf("%s.windows[%d].name", at, j), "%q is empty or names an earlier window of the class: give each window its own name", win.Name)
			}
			seen[win.Name] = true
		}
		if _, err := compileWindows(c.Windows); err != nil {
			bad(at+".windows", "%v", err)
		}
	}
	return errs
}

// maxWindows is the most windows a Pool or a class names (the Pool API's
// spec.warmPolicy.windows maxItems).
const maxWindows = 16
