package warmpolicy

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/recommend.json from what Recommend returns now")

// recordedPath holds what Recommend returned for recordedCases when the
// file was last rewritten (-update).
var recordedPath = filepath.Join("testdata", "recommend.json")

// recordedHistories are histories of every shape the planner meets: none,
// the business pattern, random demand in every slot, sparse bursts with an
// outage, figures beyond the exact range of the rounding, bursts that never
// recur, weeks with a week missing, and a pattern that wanders by a slot.
func recordedHistories() map[string]*History {
	rng := rand.New(rand.NewPCG(42, 7))
	at := func(i int) time.Time { return monday.Add(time.Duration(i)*SlotLength + time.Minute) }
	hs := map[string]*History{
		"Empty":    {},
		"Pattern1": learned(1),
		"Pattern2": learned(2),
		"Pattern4": learned(4),
		"Random1":  busy(1, 101),
		"Random2":  busy(2, 102),
		"Random4":  busy(4, 104),
	}
	sparse := &History{}
	for i := range Weeks * SlotsPerWeek {
		if i/96 == 9 {
			continue // a day with the provider down
		}
		var wanted, starts int32
		if rng.IntN(20) == 0 {
			wanted, starts = 1+rng.Int32N(300), 1+rng.Int32N(400)
		}
		sparse.Observe(at(i), wanted, starts, rng.Int32N(starts+1))
	}
	hs["Sparse"] = sparse
	large := &History{}
	for i := range 3 * SlotsPerWeek {
		large.Observe(at(i), rng.Int32N(100_000), rng.Int32N(200_000), 0)
	}
	hs["Large"] = large
	wandering := &History{}
	for i := range Weeks * SlotsPerWeek {
		var n int32
		if i%SlotsPerWeek == 40+100*(i/SlotsPerWeek) {
			n = 6
		}
		wandering.Observe(at(i), n, n, 0)
	}
	hs["Wandering"] = wandering
	gap := &History{}
	for i := 2 * SlotsPerWeek / 7; i < Weeks*SlotsPerWeek; i++ { // from a Wednesday
		if i/SlotsPerWeek == 1 {
			continue // a week not observed
		}
		w, s := pattern(i % SlotsPerWeek)
		gap.Observe(at(i), w, s, 0)
	}
	hs["Gap"] = gap
	jitter := &History{}
	for i := range Weeks * SlotsPerWeek {
		w, s := pattern((i + rng.IntN(3) - 1 + SlotsPerWeek) % SlotsPerWeek)
		if s > 0 {
			s += rng.Int32N(9) - 4
			w += rng.Int32N(5) - 2
		}
		jitter.Observe(at(i), w, s, 0)
	}
	hs["Jitter"] = jitter
	return hs
}

// recordedGoals are goals with every cap binding and none.
func recordedGoals() map[string]Goal {
	return map[string]Goal{
		"Target90":    {WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 100, DollarsPerSlotHour: 0.25, PriceKnown: true},
		"Target99":    {WarmShare: 0.99, Lead: 2 * time.Hour, MaxExecutors: 1000},
		"Target50":    {WarmShare: 0.5},
		"AllWarm":     {WarmShare: 1, Lead: 8 * 24 * time.Hour, MaxExecutors: 20},
		"MaxSlots":    {WarmShare: 0.9, Lead: 5 * time.Minute, MaxSlots: 3, MaxExecutors: 64},
		"MaxExec":     {WarmShare: 0.95, Lead: 20 * time.Minute, MaxExecutors: 6},
		"MaxDollars":  {WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 64, DollarsPerSlotHour: 0.29, PriceKnown: true, MaxDollarsPerHour: 1, DollarCap: true},
		"FreeDollars": {WarmShare: 0.9, Lead: 5 * time.Minute, MaxExecutors: 64, PriceKnown: true, MaxDollarsPerHour: 1, DollarCap: true},
	}
}

// recordedTimes are when each history is asked, as offsets from the
// Monday after its four weeks: Monday 10:00, Tuesday 00:55 and Saturday
// 13:07.
var recordedTimes = []time.Duration{10 * time.Hour, 24*time.Hour + 55*time.Minute, 5*24*time.Hour + 13*time.Hour + 7*time.Minute}

// recordedCases is Recommend of every history, goal and time.
func recordedCases() map[string]Recommendation {
	out := map[string]Recommendation{}
	for hn, h := range recordedHistories() {
		for gn, g := range recordedGoals() {
			for i, d := range recordedTimes {
				t := monday.Add(Weeks*7*24*time.Hour + d)
				out[fmt.Sprintf("%s/%s/%d", hn, gn, i)] = h.Recommend(t, g)
			}
		}
	}
	return out
}

// TestRecommendRecorded checks that Recommend returns what it returned
// when testdata/recommend.json was written, on histories of every shape
// and goals with every cap: planning faster must not plan otherwise.
// Floats are compared to 1e-12 of their size, so that the file holds on a
// machine whose compiler fuses multiply-adds (arm64); on amd64 they are
// the same to the bit.
func TestRecommendRecorded(t *testing.T) {
	got := recordedCases()
	if *update {
		if err := os.WriteFile(recordedPath, recordedJSON(t, got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(recordedPath)
	if err != nil {
		t.Fatalf("cannot read the recorded recommendations (go test -run TestRecommendRecorded -update writes them): %v", err)
	}
	var want map[string]Recommendation
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("cannot read %s: %v", recordedPath, err)
	}
	near := cmp.Comparer(func(a, b float64) bool {
		return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
	})
	if diff := cmp.Diff(want, got, near); diff != "" {
		t.Errorf("Recommend differs from the recorded recommendations: -recorded, +now:\n%s", diff)
	}
}

// recordedJSON is rs as a JSON object of one case a line, in name order,
// so that a change shows as the lines of the cases it changed.
func recordedJSON(t *testing.T, rs map[string]Recommendation) []byte {
	t.Helper()
	b := []byte("{\n")
	for i, name := range slices.Sorted(maps.Keys(rs)) {
		r, err := json.Marshal(rs[name])
		if err != nil {
			t.Fatal(err)
		}
		b = fmt.Appendf(b, "\t%q: %s", name, r)
		if i < len(rs)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	return append(b, "}\n"...)
}
