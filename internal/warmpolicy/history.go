package warmpolicy

import (
	"math"
	"slices"
	"time"
)

const (
	// SlotLength is the length of a slot of the week.
	SlotLength = 15 * time.Minute
	// Weeks is how many weeks a History holds.
	Weeks = 4
	// SlotsPerWeek is how many slots a week has: 672.
	SlotsPerWeek = int(7 * 24 * time.Hour / SlotLength)
	// MaxEncodedBytes bounds the length of History.Encode's result,
	// whatever the history records.
	MaxEncodedBytes = 8 << 10
)

// historyBytes is the size of a History in memory (TestMemory checks it):
// Weeks × SlotsPerWeek cells of 3 bytes (8,064), the open slot (8), whether
// one is open (1, padded to 4) and its exact figures (12).
const historyBytes = Weeks*SlotsPerWeek*3 + 8 + 4 + 12

// weekEpoch is a Monday, 00:00 UTC: slots of the week count from Monday
// 00:00 UTC.
var weekEpoch = time.Date(1970, time.January, 5, 0, 0, 0, 0, time.UTC)

// History is a pool's demand by time of week: for each slot of the week
// (SlotLength = 15 min, 672 slots) and each of the last Weeks (= 4) weeks,
// the peak executors wanted (running + waiting) and the starts, warm and
// cold, recorded in that slot. Its encoded size is bounded (MaxEncodedBytes,
// a constant <= 8 KiB) whatever it records.
//
// The zero History is empty and ready to use. In memory a History is
// historyBytes: 3 bytes a slot of each week and the open slot's exact
// figures, so a provider with 1,000 pools holds about 8 MB of them.
type History struct {
	// cells[w % Weeks][s] is slot s of absolute week w, for the Weeks
	// weeks up to the open slot's.
	cells [Weeks][SlotsPerWeek]cell
	// open is the absolute slot (slots since weekEpoch) of the latest
	// observation, and valid whether there has been one.
	open  int64
	valid bool
	// acc is the open slot's exact figures; its cell holds them rounded.
	acc figures
}

// figures are what a slot records.
type figures struct {
	peak, starts, cold uint32
}

// Observe records at t: wanted executors (running + waiting for the pool),
// starts since the previous Observe and how many of them started cold (on a
// node launched for them). Slots of weeks older than Weeks are forgotten.
//
// An observation at a time before the latest one's slot (a clock that went
// back) is added to the latest slot, so no start is lost; one Weeks or more
// before it finds a history from elsewhere (an altered status) and starts
// a new one; one before the week epoch (1970) is ignored. Negative
// figures count as 0 and cold starts as at most starts.
//
// It reports whether the history changed (a slot opened, a higher peak,
// starts recorded): whether Encode would now return something else.
func (h *History) Observe(t time.Time, wanted, starts, coldStarts int32) bool {
	if t.Before(weekEpoch) {
		return false
	}
	slot := int64(t.Sub(weekEpoch) / SlotLength)
	if h.valid && slot <= h.open-int64(Weeks*SlotsPerWeek) {
		// Weeks ahead of the clock: not a clock that went back but a
		// history from elsewhere; it starts again.
		*h = History{}
	}
	opened := !h.valid || slot > h.open
	if opened {
		h.advance(slot)
	}
	before := h.acc
	wanted, starts = max(0, wanted), max(0, starts)
	coldStarts = min(max(0, coldStarts), starts)
	h.acc.peak = max(h.acc.peak, uint32(wanted))
	h.acc.starts = addSat(h.acc.starts, uint32(starts))
	h.acc.cold = addSat(h.acc.cold, uint32(coldStarts))
	w, s := split(h.open)
	h.cells[w%Weeks][s] = round(h.acc)
	return opened || h.acc != before
}

// Weeks is how many of the last Weeks weeks, Monday to Monday UTC, up to
// the latest observation's, have an observed slot: the weeks of history a
// Recommendation rests on (Recommendation.Weeks). A week the pool was not
// observed in (the provider down) does not count.
func (h *History) Weeks() int {
	n := 0
	for w := range h.cells {
		if slices.ContainsFunc(h.cells[w][:], cell.observed) {
			n++
		}
	}
	return n
}

// advance opens slot: the weeks between the open slot's and slot's are
// cleared (at most Weeks of them), as slot's week is.
func (h *History) advance(slot int64) {
	week, _ := split(slot)
	from := week - Weeks + 1
	if h.valid {
		last, _ := split(h.open)
		from = max(from, last+1)
	}
	for w := from; w <= week; w++ {
		h.cells[w%Weeks] = [SlotsPerWeek]cell{}
	}
	h.open, h.valid, h.acc = slot, true, figures{}
}

// split is the absolute week of an absolute slot and its slot of the week.
func split(slot int64) (week int64, s int) {
	return slot / int64(SlotsPerWeek), int(slot % int64(SlotsPerWeek))
}

func addSat(a, b uint32) uint32 {
	if a > math.MaxInt32-b {
		return math.MaxInt32
	}
	return a + b
}
