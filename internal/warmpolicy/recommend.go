package warmpolicy

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Goal is what the platform asks of a learned warm level. Its zero value
// asks for nothing: no share, no cap, no price.
type Goal struct {
	WarmShare    float64       // 0 < WarmShare <= 1: share of executors to start on an existing node
	Lead         time.Duration // how far ahead to warm (>= the measured cold start)
	MaxSlots     int32         // cap in slots (0: none), beside MaxExecutors
	MaxExecutors int32         // the pool's maxExecutors
	// DollarsPerSlotHour is what one warm slot costs per hour, when
	// PriceKnown. While the price is not known a cap in dollars cannot be
	// shown to hold, and allows no warm slot.
	DollarsPerSlotHour float64
	PriceKnown         bool
	// MaxDollarsPerHour (>= 0) caps the warm slots' cost per hour when
	// DollarCap is set: at most MaxDollarsPerHour / DollarsPerSlotHour
	// slots, none at a cap of 0 (unless the slots cost nothing).
	MaxDollarsPerHour float64
	DollarCap         bool
}

// Names of the caps (Recommendation.Capped).
const (
	CapMaxSlots          = "maxSlots"
	CapMaxDollarsPerHour = "maxDollarsPerHour"
	CapMaxExecutors      = "maxExecutors"
)

// Recommendation is a learned warm level.
type Recommendation struct {
	Executors      int32     // the warm level to hold from now
	Until          time.Time // when it should be asked again: the next slot boundary of t or of t+Lead (less Lead)
	Reason         string    // one sentence: what history says, the target, which cap bound it
	ExpectedShare  float64   // the share of starts the history says the learned levels start warm: on weeks they were not learned from, with two weeks or more
	DollarsPerHour float64   // Executors * DollarsPerSlotHour (0 while the price is not known)
	Capped         string    // "" or which cap bound it: "maxSlots", "maxDollarsPerHour", "maxExecutors"
	Weeks          int       // weeks of history it rests on (0: none yet → Executors 0)
}

// Recommend is the least warm level, per slot of the coming week, that
// meets g.WarmShare over the history at the least cost (spend warm slots
// where they buy the most warm starts), never above the caps; it returns
// the level for [t, t+Lead] (the largest over the slots that interval
// touches). A cap in dollars while the slots' price is not known allows no
// warm slot: the level is 0, and the reason says why. It is pure: t is the
// only clock it reads.
func (h *History) Recommend(t time.Time, g Goal) Recommendation {
	lead := max(0, g.Lead)
	// The answer changes when t, or t+lead, enters another slot.
	until := earliest(t.Truncate(SlotLength).Add(SlotLength), t.Add(lead).Truncate(SlotLength).Add(SlotLength).Add(-lead))
	weeks := h.Weeks()
	if weeks == 0 {
		return Recommendation{Until: until, Reason: "no demand history yet: no learned warm slots until the pool has been observed"}
	}
	limit, capName := caps(g)
	d := h.demand()
	defer d.release()
	c := d.calibrate(g.WarmShare, limit)
	p := d.plan(c.Plan, limit)
	// The slots [t, t+lead] touches: from t's, n of them (a lead of a week
	// or more touches them all).
	first := slotOfWeek(t)
	n := int(t.Add(lead).Sub(weekEpoch)/SlotLength-t.Sub(weekEpoch)/SlotLength) + 1
	level := p.level(first, n)
	r := Recommendation{
		Executors:     level,
		Until:         until,
		ExpectedShare: p.share(),
		Weeks:         weeks,
	}
	if g.PriceKnown {
		r.DollarsPerHour = float64(level) * g.DollarsPerSlotHour
	}
	if c.Checked {
		r.ExpectedShare = c.Unseen
	}
	// The cap bound the level when, without it, the level would be higher.
	if level == limit && d.plan(d.calibrate(g.WarmShare, math.MaxInt32).Plan, math.MaxInt32).level(first, n) > limit {
		r.Capped = capName
	}
	r.Reason = reason(r, d, p, c, g)
	return r
}

// caps is the per-slot cap of the goal and the name of the one that binds.
func caps(g Goal) (int32, string) {
	limit, name := int32(math.MaxInt32), ""
	if g.MaxExecutors > 0 {
		limit, name = g.MaxExecutors, CapMaxExecutors
	}
	if g.MaxSlots > 0 && g.MaxSlots < limit {
		limit, name = g.MaxSlots, CapMaxSlots
	}
	if g.DollarCap {
		switch {
		case !g.PriceKnown:
			limit, name = 0, CapMaxDollarsPerHour // no slot can be shown to fit
		case g.DollarsPerSlotHour > 0:
			if n := max(0, g.MaxDollarsPerHour) / g.DollarsPerSlotHour; n < float64(limit) {
				limit, name = int32(n), CapMaxDollarsPerHour
			}
		}
	}
	return limit, name
}

// unaffordable says why g's cap in dollars allows no warm slot at all: the
// slots' price is not known, or the cap is less than one slot's price.
// Empty when it allows one, or there is no such cap.
func unaffordable(g Goal) string {
	switch {
	case !g.DollarCap:
		return ""
	case !g.PriceKnown:
		return fmt.Sprintf("what a warm slot costs is not known yet, so no warm slot can be shown to fit maxDollarsPerHour (%s USD an hour): no learned warm slots until the slots have a price", USD(g.MaxDollarsPerHour))
	case g.DollarsPerSlotHour > 0 && max(0, g.MaxDollarsPerHour)/g.DollarsPerSlotHour < 1: // as caps counts
		return fmt.Sprintf("maxDollarsPerHour is %s USD an hour, less than one warm slot costs (%s USD an hour): no learned warm slots", USD(max(0, g.MaxDollarsPerHour)), USD(g.DollarsPerSlotHour))
	}
	return ""
}

// USD formats an amount of dollars to the millionth, without trailing
// zeros, as a warm level's cost is shown wherever it is.
func USD(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e6)/1e6, 'f', -1, 64)
}

func slotOfWeek(t time.Time) int {
	d := t.Sub(weekEpoch) % (7 * 24 * time.Hour)
	if d < 0 {
		d += 7 * 24 * time.Hour
	}
	return int(d / SlotLength)
}

// reason says in one sentence what the history says, the target, and
// which cap bound the level; or why a cap in dollars allows no warm slot.
func reason(r Recommendation, d *demand, p plan, c calibration, g Goal) string {
	if why := unaffordable(g); why != "" {
		return why
	}
	weeks := "weeks"
	if r.Weeks == 1 {
		weeks = "week"
	}
	var starts float64
	for _, n := range d.starts {
		starts += n
	}
	s := fmt.Sprintf("%d %s of history, %.0f executor starts: warm levels of %s slot-hours a week start %.0f%% of them warm",
		r.Weeks, weeks, starts, strconv.FormatFloat(p.hours, 'f', -1, 64), 100*p.share())
	if c.Checked {
		s += fmt.Sprintf(" and %.0f%% on weeks they were not learned from", 100*c.Unseen)
	}
	s += fmt.Sprintf(", against a target of %.0f%%", 100*g.WarmShare)
	if r.Capped != "" {
		s += fmt.Sprintf("; bound by %s", r.Capped)
	}
	return s
}
