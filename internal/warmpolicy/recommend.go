package warmpolicy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Goal is what the platform asks of a learned warm level.
type Goal struct {
	WarmShare          float64       // 0 < WarmShare <= 1: share of executors to start on an existing node
	Lead               time.Duration // how far ahead to warm (>= the measured cold start)
	MaxSlots           int32         // cap in slots (0: none), beside MaxExecutors
	MaxExecutors       int32         // the pool's maxExecutors
	DollarsPerSlotHour float64       // what one warm slot costs per hour (0: unknown)
	MaxDollarsPerHour  float64       // cap in dollars per hour (0: none)
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
	ExpectedShare  float64   // the share of starts the history says this level starts warm
	DollarsPerHour float64   // Executors * DollarsPerSlotHour
	Capped         string    // "" or which cap bound it: "maxSlots", "maxDollarsPerHour", "maxExecutors"
	Weeks          int       // weeks of history it rests on (0: none yet → Executors 0)
}

// Recommend is the least warm level, per slot of the coming week, that
// meets g.WarmShare over the history at the least cost (spend warm slots
// where they buy the most warm starts), never above the caps; it returns
// the level for [t, t+Lead] (the largest over the slots that interval
// touches). It is pure: t is the only clock it reads.
func (h *History) Recommend(t time.Time, g Goal) Recommendation {
	lead := max(0, g.Lead)
	// The answer changes when t, or t+lead, enters another slot.
	until := earliest(t.Truncate(SlotLength).Add(SlotLength), t.Add(lead).Truncate(SlotLength).Add(SlotLength).Add(-lead))
	weeks := h.weeks()
	if weeks == 0 {
		return Recommendation{Until: until, Reason: "no demand history yet: no learned warm slots until the pool has been observed"}
	}
	limit, capName := caps(g)
	p := h.plan(g.WarmShare, limit)
	first, last := slotOfWeek(t), slotOfWeek(t.Add(lead))
	level := p.level(first, last)
	r := Recommendation{
		Executors:      level,
		Until:          until,
		ExpectedShare:  p.share(),
		DollarsPerHour: float64(level) * g.DollarsPerSlotHour,
		Weeks:          weeks,
	}
	// The cap bound the level when, without it, the level would be higher.
	if level == limit && h.plan(g.WarmShare, math.MaxInt32).level(first, last) > limit {
		r.Capped = capName
	}
	r.Reason = reason(r, p, g)
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
	if g.MaxDollarsPerHour > 0 && g.DollarsPerSlotHour > 0 {
		if n := g.MaxDollarsPerHour / g.DollarsPerSlotHour; n < float64(limit) {
			limit, name = int32(n), CapMaxDollarsPerHour
		}
	}
	return limit, name
}

// weeks is how many of the last Weeks weeks have an observed slot.
func (h *History) weeks() int {
	n := 0
	for w := range h.cells {
		if slices.ContainsFunc(h.cells[w][:], cell.observed) {
			n++
		}
	}
	return n
}

func slotOfWeek(t time.Time) int {
	d := t.Sub(weekEpoch) % (7 * 24 * time.Hour)
	if d < 0 {
		d += 7 * 24 * time.Hour
	}
	return int(d / SlotLength)
}

// plan is a warm level for every slot of the week and the warm starts the
// history says it buys.
type plan struct {
	levels      [SlotsPerWeek]int32
	warm, total float64
	hours       float64
}

// level is the largest level of the slots from first to last, round the
// week's end.
func (p plan) level(first, last int) int32 {
	var l int32
	for s := first; ; s = (s + 1) % SlotsPerWeek {
		l = max(l, p.levels[s])
		if s == last {
			return l
		}
	}
}

func (p plan) share() float64 {
	if p.total == 0 {
		return 1
	}
	return min(1, p.warm/p.total)
}

// segment is a run of levels of one slot, from..to, over which each warm
// executor more buys rate warm starts (summed over the weeks of history).
type segment struct {
	slot     int
	from, to int32
	rate     float64
}

func (h *History) plan(share float64, limit int32) plan {
	var p plan
	var segs []segment
	for s := range SlotsPerWeek {
		var obs [Weeks]figures
		n := 0
		for w := range h.cells {
			if c := h.cells[w][s]; c.observed() {
				if f := c.figures(); f.starts > 0 {
					f.peak = max(f.peak, 1)
					obs[n] = f
					n++
					p.total += float64(f.starts)
				}
			}
		}
		segs = appendSegments(segs, s, obs[:n], limit)
	}
	// Most warm starts per slot-hour first; of equal rates, the earlier
	// slot of the week, and within a slot the lower levels (whose rates
	// are never lower).
	slices.SortFunc(segs, func(a, b segment) int {
		switch {
		case a.rate > b.rate:
			return -1
		case a.rate < b.rate:
			return 1
		case a.slot != b.slot:
			return a.slot - b.slot
		}
		return int(a.from - b.from)
	})
	target := min(1, max(0, share)) * p.total
	for _, sg := range segs {
		if p.warm >= target {
			break
		}
		gain := sg.rate * float64(sg.to-sg.from)
		to := sg.to
		if p.warm+gain > target {
			to = sg.from + int32(math.Ceil((target-p.warm)/sg.rate-1e-9))
			gain = sg.rate * float64(to-sg.from)
		}
		p.levels[sg.slot] = to
		p.warm += gain
	}
	for _, l := range p.levels {
		p.hours += float64(l) * SlotLength.Hours()
	}
	return p
}

// appendSegments adds slot s's segments: under the model, of a week's
// starts at peak P a level w starts min(1, w/P) warm, so between two
// peaks of the weeks each executor of level buys the starts per peak of
// every week whose peak is higher.
func appendSegments(segs []segment, s int, obs []figures, limit int32) []segment {
	slices.SortFunc(obs, func(a, b figures) int { return int(a.peak) - int(b.peak) })
	var from int32
	for i, f := range obs {
		to := int32(min(f.peak, uint32(limit)))
		if to > from {
			var rate float64
			for _, g := range obs[i:] {
				rate += float64(g.starts) / float64(g.peak)
			}
			segs = append(segs, segment{slot: s, from: from, to: to, rate: rate})
			from = to
		}
	}
	return segs
}

func reason(r Recommendation, p plan, g Goal) string {
	weeks := "weeks"
	if r.Weeks == 1 {
		weeks = "week"
	}
	s := fmt.Sprintf("%d %s of history: %.0f executor starts; a week of learned levels (%s slot-hours) starts %.0f%% of them warm against a target of %.0f%%",
		r.Weeks, weeks, p.total, strconv.FormatFloat(p.hours, 'f', -1, 64), 100*p.share(), 100*g.WarmShare)
	if r.Capped != "" {
		s += fmt.Sprintf(", bound by %s", r.Capped)
	}
	return s
}
