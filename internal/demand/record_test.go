package demand

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/warmpolicy"
)

// step is one reconcile of a test: what the pool holds and has counted
// at the time.
type step struct {
	at     time.Time
	wanted int32
	// warm and cold are the executor starts the status counts.
	warm, cold int64
	// lost: the status write fails; restart: the provider starts again
	// before this reconcile.
	lost, restart bool
}

// observation is one History.Observe call.
type observation struct {
	at                         time.Time
	wanted, starts, coldStarts int32
}

func encoded(obs []observation) string {
	h := &warmpolicy.History{}
	for _, o := range obs {
		h.Observe(o.at, o.wanted, o.starts, o.coldStarts)
	}
	return h.Encode()
}

func TestRecord(t *testing.T) {
	t0 := at(0, 10, 0)
	cases := map[string]struct {
		reason string
		// status is what the PoolCapacity's status holds at first.
		status v1alpha1.PoolCapacityObservation
		steps  []step
		// want is what the history in status recorded after the last
		// step, as observations of an empty history, and since.
		want      []observation
		wantSince time.Time
		// wantWritten says which steps wrote the history into the
		// status, or tried to (a lost write).
		wantWritten []bool
		wantReset   bool
	}{
		"NewPool": {
			reason:      "A pool seen for the first time begins its history and writes it at once, counting the starts its status counts.",
			steps:       []step{{at: t0, wanted: 3, warm: 2, cold: 1}},
			want:        []observation{{t0, 3, 3, 1}},
			wantSince:   t0,
			wantWritten: []bool{true},
		},
		"StartsCountedOnce": {
			reason: "Each reconcile records the starts counted since the one before, by placement.",
			steps: []step{
				{at: t0, wanted: 3, warm: 2, cold: 1},
				{at: t0.Add(10 * time.Second), wanted: 5, warm: 4, cold: 2},
			},
			want:        []observation{{t0, 3, 3, 1}, {t0.Add(10 * time.Second), 5, 3, 1}},
			wantSince:   t0,
			wantWritten: []bool{true, true},
		},
		"FailedWriteNotRecounted": {
			reason: "A status write that failed is made again at the next reconcile, and the starts of the failed one are not recorded twice though the status counts them again.",
			steps: []step{
				{at: t0, wanted: 3, warm: 2, cold: 1},
				{at: t0.Add(10 * time.Second), wanted: 3, warm: 4, cold: 1, lost: true},
				{at: t0.Add(20 * time.Second), wanted: 3, warm: 4, cold: 1},
			},
			want:        []observation{{t0, 3, 3, 1}, {t0.Add(10 * time.Second), 3, 2, 0}},
			wantSince:   t0,
			wantWritten: []bool{true, true, true},
		},
		"FailedWriteAtPeak": {
			reason: "A peak seen only by a reconcile whose status write failed stays in the history the provider writes next.",
			steps: []step{
				{at: t0, wanted: 3},
				{at: t0.Add(10 * time.Second), wanted: 6, lost: true},
				{at: t0.Add(20 * time.Second), wanted: 3},
			},
			want:        []observation{{t0, 3, 0, 0}, {t0.Add(10 * time.Second), 6, 0, 0}},
			wantSince:   t0,
			wantWritten: []bool{true, true, true},
		},
		"Restart": {
			reason: "A restarted provider decodes the history from status and records only the starts the status did not count before.",
			steps: []step{
				{at: t0, wanted: 3, warm: 2, cold: 1},
				{at: t0.Add(time.Minute), wanted: 4, warm: 3, cold: 2, restart: true},
			},
			want:        []observation{{t0, 3, 3, 1}, {t0.Add(time.Minute), 4, 2, 1}},
			wantSince:   t0,
			wantWritten: []bool{true, true},
		},
		"FailedWriteThenRestart": {
			reason: "A restart after a failed write starts again from the status, whose counts the failed write did not move: its starts are recorded once.",
			steps: []step{
				{at: t0, wanted: 3, warm: 2, cold: 1},
				{at: t0.Add(10 * time.Second), wanted: 3, warm: 4, cold: 1, lost: true},
				{at: t0.Add(20 * time.Second), wanted: 3, warm: 4, cold: 1, restart: true},
			},
			want:        []observation{{t0, 3, 3, 1}, {t0.Add(20 * time.Second), 3, 2, 0}},
			wantSince:   t0,
			wantWritten: []bool{true, true, true},
		},
		"Corrupt": {
			reason: "A history in status that cannot be decoded is replaced by an empty one, begun now, and said so.",
			status: v1alpha1.PoolCapacityObservation{Demand: &v1alpha1.DemandHistory{Encoded: "not a history", Since: metav1.NewTime(monday), Weeks: 2}},
			steps:  []step{{at: t0, wanted: 3}},
			want:   []observation{{t0, 3, 0, 0}}, wantSince: t0,
			wantWritten: []bool{true},
			wantReset:   true,
		},
		"Oversized": {
			reason: "A history longer than the encoding's bound is not read at all: it is replaced and said so.",
			status: v1alpha1.PoolCapacityObservation{Demand: &v1alpha1.DemandHistory{Encoded: strings.Repeat("A", warmpolicy.MaxEncodedBytes+1), Since: metav1.NewTime(monday)}},
			steps:  []step{{at: t0, wanted: 3}},
			want:   []observation{{t0, 3, 0, 0}}, wantSince: t0,
			wantWritten: []bool{true},
			wantReset:   true,
		},
		"SinceKept": {
			reason: "A history decoded from status keeps the time it began.",
			status: v1alpha1.PoolCapacityObservation{Demand: &v1alpha1.DemandHistory{Encoded: encoded([]observation{{monday, 2, 0, 0}}), Since: metav1.NewTime(monday)}},
			steps:  []step{{at: t0, wanted: 3}},
			want:   []observation{{monday, 2, 0, 0}, {t0, 3, 0, 0}}, wantSince: monday,
			wantWritten: []bool{true},
		},
		"HistoryAloneWaits": {
			reason: "A history that changed while nothing else of the status did (a new slot begins) is written at most once a WriteEvery.",
			steps: []step{
				{at: t0.Add(14*time.Minute + 30*time.Second), wanted: 3},
				{at: t0.Add(15 * time.Minute), wanted: 3},
				{at: t0.Add(15*time.Minute + 30*time.Second), wanted: 3},
			},
			want:        []observation{{t0.Add(14*time.Minute + 30*time.Second), 3, 0, 0}, {t0.Add(15 * time.Minute), 3, 0, 0}},
			wantSince:   t0.Add(14*time.Minute + 30*time.Second),
			wantWritten: []bool{true, false, true},
		},
		"HistoryWithTheStatus": {
			reason: "A history that changed with the rest of the status (more executors wanted) is written with it at once.",
			steps: []step{
				{at: t0, wanted: 3},
				{at: t0.Add(10 * time.Second), wanted: 5},
			},
			want:        []observation{{t0, 3, 0, 0}, {t0.Add(10 * time.Second), 5, 0, 0}},
			wantSince:   t0,
			wantWritten: []bool{true, true},
		},
		"Unchanged": {
			reason: "A reconcile that changes nothing writes nothing.",
			steps: []step{
				{at: t0, wanted: 3},
				{at: t0.Add(2 * time.Minute), wanted: 3},
				{at: t0.Add(4 * time.Minute), wanted: 2},
			},
			want:        []observation{{t0, 3, 0, 0}},
			wantSince:   t0,
			wantWritten: []bool{true, false, false},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &provider{spec: testSpec, status: tc.status}
			var written []bool
			reset := false
			for _, s := range tc.steps {
				if s.restart {
					p.restart()
				}
				before := p.writes
				out := p.reconcile(t, observed(s.wanted, s.warm, s.cold), s.at, s.lost)
				written = append(written, p.writes > before || (s.lost && out.Demand != p.status.Demand))
				reset = reset || out.Reset != ""
			}
			d := p.status.Demand
			if d == nil {
				t.Fatalf("%s\nno demand history in status", tc.reason)
			}
			if diff := cmp.Diff(encoded(tc.want), d.Encoded); diff != "" {
				t.Errorf("%s\nthe history in status is not the one recorded by %v", tc.reason, tc.want)
			}
			if !d.Since.Time.Equal(tc.wantSince) {
				t.Errorf("%s\nsince: got %s, want %s", tc.reason, d.Since.Time, tc.wantSince)
			}
			if diff := cmp.Diff(tc.wantWritten, written); diff != "" {
				t.Errorf("%s\nsteps that wrote the history: -want, +got:\n%s", tc.reason, diff)
			}
			if reset != tc.wantReset {
				t.Errorf("%s\nreset said: got %t, want %t", tc.reason, reset, tc.wantReset)
			}
		})
	}
}

// TestRestartReplay replays a week and a day of the workday pool,
// reconciled every minute and at each burst, against providers that stop
// and start again, lose status writes, or read a status from before their
// last write. Whatever the provider does between two reconciles, the
// history in status is the one a provider that kept running and lost no
// write recorded from the same reconciles: a restart costs nothing but the
// reconciles it skips.
func TestRestartReplay(t *testing.T) {
	end := at(8, 0, 0)
	type fault struct{ from, to time.Time }
	cases := map[string]struct {
		reason string
		// down: no reconcile in [from, to); the provider starts again at
		// to. lost: the status writes in [from, to) fail. stale: the
		// reconciles in [from, to) read the status from before the last
		// write, and their writes fail.
		down, lost, stale []fault
	}{
		"StopWhileQuiet": {
			reason: "A stop between bursts.",
			down:   []fault{{at(1, 9, 40), at(1, 9, 50)}},
		},
		"StopAcrossABurst": {
			reason: "A stop while a burst begins: its starts are counted when the provider is back, once.",
			down:   []fault{{at(2, 10, 55), at(2, 11, 10)}},
		},
		"StopAcrossASlot": {
			reason: "A stop across the start of a new slot.",
			down:   []fault{{at(3, 13, 14), at(3, 13, 16)}},
		},
		"FailedWritesInABurst": {
			reason: "Status writes that fail for a few minutes of a burst.",
			lost:   []fault{{at(1, 14, 0), at(1, 14, 4)}},
		},
		"FailedWriteThenStop": {
			reason: "The write before a stop fails.",
			lost:   []fault{{at(4, 9, 1), at(4, 9, 2)}},
			down:   []fault{{at(4, 9, 2), at(4, 9, 5)}},
		},
		"StaleReads": {
			reason: "Reconciles that read a status one write behind, in a burst and across a slot.",
			stale:  []fault{{at(1, 11, 1), at(1, 11, 3)}, {at(2, 12, 14), at(2, 12, 17)}},
		},
		"ManyStops": {
			reason: "A stop every day at a different time.",
			down: []fault{{at(0, 9, 0), at(0, 9, 1)}, {at(1, 10, 1), at(1, 10, 3)}, {at(2, 16, 29), at(2, 16, 31)},
				{at(3, 0, 0), at(3, 2, 0)}, {at(4, 12, 0), at(4, 13, 0)}, {at(7, 9, 0), at(7, 9, 30)}},
		},
	}
	in := func(fs []fault, now time.Time) bool {
		for _, f := range fs {
			if !now.Before(f.from) && now.Before(f.to) {
				return true
			}
		}
		return false
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			faulty, steady := &provider{spec: testSpec}, &provider{spec: testSpec}
			wasDown := false
			for now := monday; now.Before(end); now = now.Add(time.Minute) {
				if in(tc.down, now) {
					wasDown = true
					continue
				}
				if wasDown {
					faulty.restart()
					wasDown = false
				}
				wanted, warm, cold := workday(now)
				if in(tc.stale, now) {
					faulty.reconcileStale(t, observed(wanted, warm, cold), now)
				} else {
					faulty.reconcile(t, observed(wanted, warm, cold), now, in(tc.lost, now))
				}
				steady.reconcile(t, observed(wanted, warm, cold), now, false)
			}
			// One more reconcile after the last write that could fail.
			wanted, warm, cold := workday(end)
			faulty.reconcile(t, observed(wanted, warm, cold), end, false)
			steady.reconcile(t, observed(wanted, warm, cold), end, false)
			if faulty.status.Demand.Encoded != steady.status.Demand.Encoded {
				t.Errorf("%s\nthe history in status differs from the one recorded without faults", tc.reason)
			}
			if !faulty.status.Demand.Since.Equal(&steady.status.Demand.Since) {
				t.Errorf("%s\nsince: got %s, want %s", tc.reason, faulty.status.Demand.Since, steady.status.Demand.Since)
			}
			if got, want := faulty.status.Demand.Weeks, int32(2); got != want {
				t.Errorf("%s\nweeks: got %d, want %d", tc.reason, got, want)
			}
		})
	}
}

// TestWeeks checks that the weeks the history in status says it holds
// (status.atProvider.demand.weeks) are the weeks the recommendation rests
// on: the weeks of the last four the pool was observed in.
func TestWeeks(t *testing.T) {
	ask := learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: metav1.Duration{Duration: 5 * time.Minute}})
	cases := map[string]struct {
		reason string
		steps  []step
		want   int32
	}{
		"FirstWeek": {
			reason: "A pool observed this week has one week of history.",
			steps:  []step{{at: at(0, 10, 0), wanted: 3, warm: 3}},
			want:   1,
		},
		"NextWeek": {
			reason: "A pool observed last week and this one has two.",
			steps:  []step{{at: at(0, 10, 0), wanted: 3, warm: 3}, {at: at(7, 10, 0), wanted: 3, warm: 6}},
			want:   2,
		},
		"AWeekNotObserved": {
			reason: "A week the provider did not run in holds nothing: two weeks of the three since the history began.",
			steps:  []step{{at: at(0, 10, 0), wanted: 3, warm: 3}, {at: at(14, 10, 0), wanted: 3, warm: 6, restart: true}},
			want:   2,
		},
		"AtMostFour": {
			reason: "A history holds four weeks at most.",
			steps: []step{
				{at: at(0, 10, 0), wanted: 3, warm: 3}, {at: at(7, 10, 0), wanted: 3, warm: 6}, {at: at(14, 10, 0), wanted: 3, warm: 9},
				{at: at(21, 10, 0), wanted: 3, warm: 12}, {at: at(28, 10, 0), wanted: 3, warm: 15},
			},
			want: 4,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &provider{spec: ask}
			var out Output
			for _, s := range tc.steps {
				if s.restart {
					p.restart()
				}
				out = p.reconcile(t, observed(s.wanted, s.warm, s.cold), s.at, false)
			}
			if out.Demand == nil || out.Recommendation == nil {
				t.Fatalf("%s\nno history or no recommendation in status: %+v", tc.reason, out)
			}
			if got := out.Demand.Weeks; got != tc.want {
				t.Errorf("%s\ndemand.weeks: got %d, want %d", tc.reason, got, tc.want)
			}
			if got := out.Recommendation.Weeks; got != tc.want {
				t.Errorf("%s\nwarmRecommendation.weeks: got %d, want %d", tc.reason, got, tc.want)
			}
		})
	}
}

func TestWanted(t *testing.T) {
	cases := map[string]struct {
		reason      string
		allocations []v1alpha1.Allocation
		want        int32
	}{
		"RunningAndWaiting": {
			reason:      "A QueryService wants the executors it runs on the pool and those waiting for a slot.",
			allocations: []v1alpha1.Allocation{{QueryService: "a", Namespace: "ws-a", PoolExecutors: 3, PendingExecutors: 2}},
			want:        5,
		},
		"EveryQueryService": {
			reason: "The pool is wanted for the sum over its QueryServices.",
			allocations: []v1alpha1.Allocation{
				{QueryService: "a", Namespace: "ws-a", PoolExecutors: 3},
				{QueryService: "b", Namespace: "ws-b", PoolExecutors: 1, PendingExecutors: 1},
			},
			want: 5,
		},
		"WaitingBeyondItsShare": {
			reason: "An attached tenant that creates executors beyond its share, which can only wait, raises the pool's demand by its share at most.",
			allocations: []v1alpha1.Allocation{
				{QueryService: "greedy", Namespace: "ws-a", PoolExecutors: 4, PendingExecutors: 996, MaxPoolExecutors: 4},
				{QueryService: "b", Namespace: "ws-b", PoolExecutors: 2, MaxPoolExecutors: 4},
			},
			want: 6,
		},
		"NoShare": {
			reason:      "A QueryService with no share is bounded by the pool alone.",
			allocations: []v1alpha1.Allocation{{QueryService: "a", Namespace: "ws-a", PoolExecutors: 4, PendingExecutors: 6}},
			want:        10,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Wanted(v1alpha1.PoolCapacityObservation{Allocations: tc.allocations})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nWanted(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
