package warmpolicy

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// monday is Monday 2 March 2026, 00:00 UTC: the start of a week of the
// history.
var monday = utc(3, 2, 0, 0)

var allowHistory = cmp.AllowUnexported(History{}, cell{}, figures{})

// observation is one call of History.Observe.
type observation struct {
	at                        time.Time
	wanted, starts, coldStart int32
}

func record(obs ...observation) *History {
	h := &History{}
	for _, o := range obs {
		h.Observe(o.at, o.wanted, o.starts, o.coldStart)
	}
	return h
}

// slotFigures is what the history holds for one slot of one week.
type slotFigures struct {
	Observed           bool
	Peak, Starts, Cold uint32
}

func (h *History) slot(t time.Time) slotFigures {
	a := int64(t.Sub(weekEpoch) / SlotLength)
	w, s := split(a)
	c := h.cells[w%Weeks][s]
	f := c.figures()
	return slotFigures{Observed: c.observed(), Peak: f.peak, Starts: f.starts, Cold: f.cold}
}

func TestObserve(t *testing.T) {
	week := 7 * 24 * time.Hour
	cases := map[string]struct {
		reason string
		obs    []observation
		at     time.Time
		want   slotFigures
		weeks  int
	}{
		"Empty": {
			reason: "An empty history has no observed slot and no week.",
			at:     monday,
			want:   slotFigures{},
		},
		"PeakAndSums": {
			reason: "A slot keeps the peak executors wanted and sums starts and cold starts.",
			obs: []observation{
				{at: monday.Add(time.Minute), wanted: 3, starts: 3, coldStart: 1},
				{at: monday.Add(5 * time.Minute), wanted: 7, starts: 4, coldStart: 2},
				{at: monday.Add(14 * time.Minute), wanted: 2},
			},
			at:    monday,
			want:  slotFigures{Observed: true, Peak: 7, Starts: 7, Cold: 3},
			weeks: 1,
		},
		"ObservedQuiet": {
			reason: "A slot observed without demand is observed, at zero.",
			obs:    []observation{{at: monday.Add(20 * time.Minute)}},
			at:     monday.Add(15 * time.Minute),
			want:   slotFigures{Observed: true},
			weeks:  1,
		},
		"NextSlotApart": {
			reason: "An observation 15 minutes on lands in the next slot; the earlier slot keeps its figures.",
			obs: []observation{
				{at: monday.Add(10 * time.Minute), wanted: 4, starts: 4},
				{at: monday.Add(16 * time.Minute), wanted: 9, starts: 5},
			},
			at:    monday,
			want:  slotFigures{Observed: true, Peak: 4, Starts: 4},
			weeks: 1,
		},
		"LargeRoundsUp": {
			reason: "Figures above 63 are kept within 1/16: a peak of 101 rounded up to 104; 100 starts to the nearest, 104; 50 cold starts as a share of them in sevenths (4/7 of 104), 59.",
			obs:    []observation{{at: monday, wanted: 101, starts: 100, coldStart: 50}},
			at:     monday,
			want:   slotFigures{Observed: true, Peak: 104, Starts: 104, Cold: 59},
			weeks:  1,
		},
		"Saturates": {
			reason: "The largest figures saturate: a peak at 245,760, starts at 122,880.",
			obs:    []observation{{at: monday, wanted: math.MaxInt32, starts: math.MaxInt32, coldStart: math.MaxInt32}},
			at:     monday,
			want:   slotFigures{Observed: true, Peak: 245760, Starts: 122880, Cold: 122880},
			weeks:  1,
		},
		"NegativeIsZero": {
			reason: "Negative figures count as 0, and cold starts as at most starts.",
			obs:    []observation{{at: monday, wanted: -3, starts: 2, coldStart: 5}, {at: monday.Add(time.Minute), starts: -4, coldStart: -1}},
			at:     monday,
			want:   slotFigures{Observed: true, Starts: 2, Cold: 2},
			weeks:  1,
		},
		"ClockBackAddsToTheLatestSlot": {
			reason: "An observation at a time before the latest slot adds to the latest slot, so no start is lost.",
			obs: []observation{
				{at: monday.Add(time.Hour), wanted: 2, starts: 2},
				{at: monday.Add(10 * time.Minute), wanted: 5, starts: 3},
			},
			at:    monday.Add(time.Hour),
			want:  slotFigures{Observed: true, Peak: 5, Starts: 5},
			weeks: 1,
		},
		"ClockBackLeavesTheEarlierSlot": {
			reason: "…and leaves the earlier slot unobserved.",
			obs: []observation{
				{at: monday.Add(time.Hour), wanted: 2, starts: 2},
				{at: monday.Add(10 * time.Minute), wanted: 5, starts: 3},
			},
			at:    monday,
			want:  slotFigures{},
			weeks: 1,
		},
		"KeepsFourWeeks": {
			reason: "A slot three weeks back is kept.",
			obs: []observation{
				{at: monday, wanted: 6, starts: 6},
				{at: monday.Add(3 * week), wanted: 1, starts: 1},
			},
			at:    monday,
			want:  slotFigures{Observed: true, Peak: 6, Starts: 6},
			weeks: 2,
		},
		"ForgetsTheFifthWeek": {
			reason: "A slot four weeks back is forgotten once its week's place holds the newest week.",
			obs: []observation{
				{at: monday, wanted: 6, starts: 6},
				{at: monday.Add(4 * week), wanted: 1, starts: 1},
			},
			at:    monday,
			want:  slotFigures{Observed: true, Peak: 1, Starts: 1},
			weeks: 1,
		},
		"ForgetsTheFifthWeekEntirely": {
			reason: "Every slot of the forgotten week goes, not only the one observed again.",
			obs: []observation{
				{at: monday.Add(time.Hour), wanted: 6, starts: 6},
				{at: monday.Add(4 * week), wanted: 1, starts: 1},
			},
			at:    monday.Add(4*week + time.Hour),
			want:  slotFigures{},
			weeks: 1,
		},
		"GapOfManyWeeks": {
			reason: "After a gap of ten weeks only the new week is held.",
			obs: []observation{
				{at: monday, wanted: 6, starts: 6},
				{at: monday.Add(week), wanted: 6, starts: 6},
				{at: monday.Add(2 * week), wanted: 6, starts: 6},
				{at: monday.Add(12*week + time.Hour), wanted: 2, starts: 2},
			},
			at:    monday.Add(12 * week),
			want:  slotFigures{},
			weeks: 1,
		},
		"GapOfTwoWeeks": {
			reason: "After a gap of two weeks the weeks between are unobserved, the old one kept.",
			obs: []observation{
				{at: monday, wanted: 6, starts: 6},
				{at: monday.Add(3 * week), wanted: 2, starts: 2},
			},
			at:    monday.Add(2 * week),
			want:  slotFigures{},
			weeks: 2,
		},
		"FromTheFuture": {
			reason: "A history whose latest slot lies weeks after the observation is not a clock gone back: it starts again.",
			obs: []observation{
				{at: monday.Add(8 * week), wanted: 6, starts: 6},
				{at: monday, wanted: 2, starts: 2},
			},
			at:    monday,
			want:  slotFigures{Observed: true, Peak: 2, Starts: 2},
			weeks: 1,
		},
		"BeforeTheEpoch": {
			reason: "An observation before 1970's first Monday is ignored.",
			obs:    []observation{{at: time.Date(1969, 12, 1, 0, 0, 0, 0, time.UTC), wanted: 3, starts: 3}},
			at:     time.Date(1969, 12, 1, 0, 0, 0, 0, time.UTC),
			want:   slotFigures{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := record(tc.obs...)
			if tc.at.Before(weekEpoch) {
				if diff := cmp.Diff(&History{}, h, allowHistory); diff != "" {
					t.Errorf("\n%s\nObserve(...): -want, +got:\n%s", tc.reason, diff)
				}
				return
			}
			if diff := cmp.Diff(tc.want, h.slot(tc.at)); diff != "" {
				t.Errorf("\n%s\nslot %s: -want, +got:\n%s", tc.reason, tc.at, diff)
			}
			if got := h.Weeks(); got != tc.weeks {
				t.Errorf("\n%s\nweeks: want %d, got %d", tc.reason, tc.weeks, got)
			}
		})
	}
}

// TestObserveReportsChange checks what Observe reports against what it
// did: the history changed exactly when its encoding did.
func TestObserveReportsChange(t *testing.T) {
	at := monday.Add(time.Hour)
	base := []observation{{at: at, wanted: 3, starts: 2}}
	cases := map[string]struct {
		reason string
		before []observation
		obs    observation
		want   bool
	}{
		"First":          {reason: "The first observation opens a slot.", obs: observation{at: at, wanted: 0}, want: true},
		"Nothing":        {reason: "The same peak and no start change nothing.", before: base, obs: observation{at: at.Add(time.Minute), wanted: 3}, want: false},
		"LowerPeak":      {reason: "A lower peak changes nothing.", before: base, obs: observation{at: at.Add(time.Minute), wanted: 1}, want: false},
		"HigherPeak":     {reason: "A higher peak is recorded.", before: base, obs: observation{at: at.Add(time.Minute), wanted: 4}, want: true},
		"Starts":         {reason: "Starts are recorded.", before: base, obs: observation{at: at.Add(time.Minute), wanted: 3, starts: 1}, want: true},
		"NextSlot":       {reason: "A new slot opens, quiet as it is.", before: base, obs: observation{at: at.Add(SlotLength)}, want: true},
		"ClockBack":      {reason: "An earlier time adds to the latest slot: nothing new, nothing changed.", before: base, obs: observation{at: at.Add(-time.Hour), wanted: 2}, want: false},
		"BeforeTheEpoch": {reason: "An observation before 1970 is ignored.", before: base, obs: observation{at: time.Date(1969, 12, 1, 0, 0, 0, 0, time.UTC), wanted: 9, starts: 9}, want: false},
		"Saturated": {
			reason: "Starts beyond the most a slot counts change nothing.",
			before: []observation{{at: at, starts: math.MaxInt32}},
			obs:    observation{at: at.Add(time.Minute), starts: 5},
			want:   false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := record(tc.before...)
			enc := h.Encode()
			got := h.Observe(tc.obs.at, tc.obs.wanted, tc.obs.starts, tc.obs.coldStart)
			if got != tc.want {
				t.Errorf("\n%s\nObserve(...): got %t, want %t", tc.reason, got, tc.want)
			}
			if changed := h.Encode() != enc; changed != got {
				t.Errorf("\n%s\nObserve reported %t, but the encoding changed: %t", tc.reason, got, changed)
			}
		})
	}
	// A random walk of the clock, mostly on, sometimes back.
	rng := rand.New(rand.NewPCG(5, 8))
	h, now := &History{}, monday
	for i := range 3000 {
		now = now.Add(time.Duration(rng.IntN(600)-60) * time.Second)
		enc := h.Encode()
		got := h.Observe(now, rng.Int32N(8), rng.Int32N(3)*rng.Int32N(2), 0)
		if changed := h.Encode() != enc; changed != got {
			t.Fatalf("observation %d at %s: Observe reported %t, but the encoding changed: %t", i, now, got, changed)
		}
	}
}

// TestScales checks the figures' codes against every value they cover:
// monotone, exact below 2^exact, within 1/2^mant above, and a peak never
// read back below what was observed (below saturation).
func TestScales(t *testing.T) {
	for name, sc := range map[string]scale{"peak": peakScale, "starts": startsScale} {
		up := name == "peak"
		top := sc.value(sc.maxCode)
		var last uint32
		for v := uint32(0); v <= top+top/8; v++ {
			c := sc.code(v, up)
			if c < last {
				t.Fatalf("%s: code(%d) = %d is below code(%d) = %d", name, v, c, v-1, last)
			}
			last = c
			got := sc.value(c)
			switch {
			case v < 1<<sc.exact && got != v:
				t.Fatalf("%s: %d reads back as %d", name, v, got)
			case v > top:
				if got != top {
					t.Fatalf("%s: %d above the top reads back as %d, not %d", name, v, got, top)
				}
			case up && got < v:
				t.Fatalf("%s: %d reads back as %d, below it", name, v, got)
			case math.Abs(float64(got)-float64(v)) > float64(v)/float64(uint(1)<<sc.mant):
				t.Fatalf("%s: %d reads back as %d, further than 1/%d", name, v, got, 1<<sc.mant)
			}
		}
	}
}

// full is a history of Weeks weeks with every slot observed, from fill.
func full(fill func(i int) observation) *History {
	h := &History{}
	for i := range Weeks * SlotsPerWeek {
		o := fill(i)
		o.at = monday.Add(time.Duration(i)*SlotLength + time.Minute)
		h.Observe(o.at, o.wanted, o.starts, o.coldStart)
	}
	return h
}

func TestEncodedSizeBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string]struct {
		reason string
		h      *History
	}{
		"Empty": {reason: "An empty history is short.", h: &History{}},
		"Maximal": {
			reason: "Every slot of every week at the largest figures.",
			h: full(func(int) observation {
				return observation{wanted: math.MaxInt32, starts: math.MaxInt32, coldStart: math.MaxInt32}
			}),
		},
		"Random": {
			reason: "Every slot at random figures, which do not compress.",
			h: full(func(int) observation {
				s := rng.Int32N(200000)
				return observation{wanted: rng.Int32N(200000), starts: s, coldStart: rng.Int32N(s + 1)}
			}),
		},
		"RandomCells": {
			reason: "Every cell at random codes, uniform over what a cell holds: the longest encoding, the packed form with the largest open slot.",
			h: func() *History {
				h := &History{}
				h.Observe(monday.Add(4*7*24*time.Hour-time.Minute), math.MaxInt32, math.MaxInt32, math.MaxInt32)
				ow, os := split(h.open)
				for w := range h.cells {
					for s := range h.cells[w] {
						if w == int(ow%Weeks) && s == os {
							continue // the open slot
						}
						c := cell{peak: uint8(1 + rng.IntN(255)), starts: uint8(rng.IntN(128))}
						if c.starts > 0 {
							c.cold = uint8(rng.IntN(8))
						}
						h.cells[w][s] = c
					}
				}
				return h
			}(),
		},
		"RandomOpenSlotMaximal": {
			reason: "Random slots, and the open slot's exact figures at their largest.",
			h: func() *History {
				h := full(func(int) observation {
					return observation{wanted: rng.Int32N(70), starts: rng.Int32N(40), coldStart: rng.Int32N(3)}
				})
				h.Observe(monday.Add(4*7*24*time.Hour-time.Minute), math.MaxInt32, math.MaxInt32, math.MaxInt32)
				return h
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.h.Encode()
			if len(s) > MaxEncodedBytes {
				t.Errorf("\n%s\nEncode(): %d bytes, more than MaxEncodedBytes (%d)", tc.reason, len(s), MaxEncodedBytes)
			}
			got, err := Decode(s)
			if err != nil {
				t.Fatalf("\n%s\nDecode(Encode()): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.h, got, allowHistory); diff != "" {
				t.Errorf("\n%s\nDecode(Encode()): -want, +got:\n%s", tc.reason, diff)
			}
			t.Logf("%s: %d bytes encoded", name, len(s))
		})
	}
}

// TestSurvivesRestart encodes a history mid-slot, as the provider writes
// it to status, decodes it as a restarted provider does and goes on
// observing: the result is the history that was never interrupted.
func TestSurvivesRestart(t *testing.T) {
	var obs []observation
	for i := range 500 {
		obs = append(obs, observation{at: monday.Add(time.Duration(i) * 4 * time.Minute), wanted: int32(i % 90), starts: int32(i % 7), coldStart: int32(i % 2)})
	}
	want := record(obs...)
	h := record(obs[:301]...)
	restarted, err := Decode(h.Encode())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs[301:] {
		restarted.Observe(o.at, o.wanted, o.starts, o.coldStart)
	}
	if diff := cmp.Diff(want, restarted, allowHistory); diff != "" {
		t.Errorf("a history decoded mid-slot and observed on: -uninterrupted, +restarted:\n%s", diff)
	}
}

func TestDecodeRefuses(t *testing.T) {
	good := full(func(i int) observation {
		return observation{wanted: int32(i % 300), starts: int32(i % 50), coldStart: int32(i % 3)}
	}).Encode()
	raw, _ := encoding.DecodeString(good)
	alter := func(f func(b []byte) []byte) string {
		return encoding.EncodeToString(f(append([]byte(nil), raw...)))
	}
	cases := map[string]struct {
		reason string
		in     string
	}{
		"NotBase64":       {reason: "Not base64.", in: "!!!not base64!!!"},
		"Empty":           {reason: "An empty string is no history.", in: ""},
		"UnknownFormat":   {reason: "An unknown format byte.", in: alter(func(b []byte) []byte { b[0] = 9; return b })},
		"TruncatedHeader": {reason: "Cut inside the header.", in: alter(func(b []byte) []byte { return b[:3] })},
		"Truncated":       {reason: "Cut inside the cells.", in: good[:len(good)/2]},
		"Trailing":        {reason: "Bytes after the cells.", in: alter(func(b []byte) []byte { return append(b, 0, 1, 2) })},
		"TooLong":         {reason: "Longer than any encoded history.", in: strings.Repeat("A", MaxEncodedBytes+1)},
		"OpenSlotDisagrees": {
			reason: "The open slot's exact figures disagree with its cell.",
			in: alter(func(b []byte) []byte {
				b[3] ^= 0x01 // the open slot's exact peak
				return b
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Decode(tc.in)
			if err == nil {
				t.Errorf("\n%s\nDecode(...): no error", tc.reason)
			}
			if diff := cmp.Diff(&History{}, got, allowHistory); diff != "" {
				t.Errorf("\n%s\nDecode(...): not an empty history: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestMemory bounds what a History holds in the provider: one per pool,
// up to 1,000 pools, each at most 16 KiB.
func TestMemory(t *testing.T) {
	const limit = 16 << 10
	if got := unsafe.Sizeof(History{}); got > limit {
		t.Errorf("unsafe.Sizeof(History{}) = %d bytes, more than %d", got, limit)
	}
	if got := unsafe.Sizeof(History{}); got != uintptr(historyBytes) {
		t.Errorf("unsafe.Sizeof(History{}) = %d bytes, but the comment on historyBytes says %d", got, historyBytes)
	}
	s := full(func(i int) observation { return observation{wanted: int32(i % 300), starts: int32(i % 50)} }).Encode()
	const pools = 1000
	hs := make([]*History, pools)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range hs {
		hs[i], _ = Decode(s)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perPool := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / pools
	if perPool > limit {
		t.Errorf("a decoded History holds %d bytes of heap, more than %d", perPool, limit)
	}
	t.Logf("a decoded History holds about %d bytes of heap", perPool)
	runtime.KeepAlive(hs)
}
