package cost

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// throughAPI returns o as a provider that starts again reads it back from
// the PoolCapacity's status: JSON, and nothing kept in memory.
func throughAPI(t *testing.T, o *v1alpha1.CostObservation) *v1alpha1.CostObservation {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	out := &v1alpha1.CostObservation{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// run reconciles the day every minute from 00:00 to 24:00, except while
// down (from, to): the provider is stopped, and starts again at to from
// what its status holds. lost says the status write of the last reconcile
// before the stop failed.
func run(t *testing.T, from, to time.Time, lost bool) *v1alpha1.CostObservation {
	t.Helper()
	var st, written *v1alpha1.CostObservation
	for now := midnight; !now.After(at(24, 0)); now = now.Add(time.Minute) {
		if now.After(from) && now.Before(to) {
			continue
		}
		if now.Equal(to) {
			st = throughAPI(t, written)
		}
		st = reconcile(t, st, now)
		if !(lost && now.Equal(from)) {
			written = st
		}
	}
	return st
}

// TestRestart replays a provider that stops during the day and starts
// again from its status. What survives is the status: watermark, rates and
// totals. What a stop can cost is bounded by the interval since the last
// status write: that interval is priced at the rates of that write, so a
// change of the pool while the provider is down is dated when it starts
// again; beyond MaxGap nothing is priced and the time is reported as
// unaccounted. Nothing is counted twice.
func TestRestart(t *testing.T) {
	whole := run(t, at(25, 0), at(25, 0), false)
	cases := map[string]struct {
		reason   string
		from, to time.Time
		lost     bool
		// want* are the pool's dollars (to the cent) and unaccounted
		// seconds, computed by hand from TestDay's.
		wantDollars     string
		wantUnaccounted int64
	}{
		"ShortStop": {
			reason: "A stop of ten minutes while the pool stands still loses and doubles nothing.",
			from:   at(10, 0), to: at(10, 10), wantDollars: "38.79",
		},
		"FailedWriteBeforeStop": {
			reason: "A status write that failed before the stop is recounted from the watermark before it, once.",
			from:   at(10, 0), to: at(10, 10), lost: true, wantDollars: "38.79",
		},
		"StopAcrossAnEvent": {
			// spot-1 empties at 12:00 while the provider is down from
			// 11:55 to 12:05: those 10 minutes are priced at 11:55's
			// rates, so sales pays 5 more minutes of spot-1 (0.038703)
			// and waste 5 fewer; the pool pays the same.
			reason: "A stop across a change prices the stop at the rates before it: the pool's total holds, the split moves by at most the stop.",
			from:   at(11, 55), to: at(12, 5), wantDollars: "38.79",
		},
		"LongOutage": {
			// Down from 09:00 to 11:00: 15 minutes are priced at 09:00's
			// rates (they hold until 12:00), 105 minutes are not: the
			// warm node (1.16109/h) and spot-1 (0.464436/h) for 1.75 h,
			// 2.844671 USD, go uncounted: 38.789455 - 2.844671 = 35.944784.
			reason: "A stop longer than MaxGap prices MaxGap of it and reports the rest as unaccounted.",
			from:   at(9, 0), to: at(11, 0), wantDollars: "35.94", wantUnaccounted: 6300,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := run(t, tc.from, tc.to, tc.lost)
			if d := cents(t, got.Dollars); d != tc.wantDollars {
				t.Errorf("%s\npool dollars = %s, want %s", tc.reason, d, tc.wantDollars)
			}
			if got.UnaccountedSeconds != tc.wantUnaccounted {
				t.Errorf("%s\nunaccountedSeconds = %d, want %d", tc.reason, got.UnaccountedSeconds, tc.wantUnaccounted)
			}
			if tc.wantUnaccounted > 0 {
				return
			}
			// Each part moves by at most the stop at the pool's rate
			// (1.625526 USD/h at most, 08:00-12:30).
			bound := tc.to.Sub(tc.from).Hours() * 1.625526
			for i, u := range got.ByUse {
				if d := number(u.Dollars) - number(whole.ByUse[i].Dollars); d > bound+1e-6 || d < -bound-1e-6 {
					t.Errorf("%s\n%s %s moved by %.6f USD, more than the stop's %.6f", tc.reason, u.Part, u.QueryService, d, bound)
				}
			}
			if tc.from.Equal(at(10, 0)) {
				if diff := cmp.Diff(whole.ByUse, got.ByUse); diff != "" {
					t.Errorf("%s\nby use: -uninterrupted +restarted:\n%s", tc.reason, diff)
				}
			}
		})
	}
}

// TestAdvanceOnce checks that a reconcile replayed at the same time (a
// requeue, a conflict retried) counts nothing again.
func TestAdvanceOnce(t *testing.T) {
	st := reconcile(t, nil, at(8, 0))
	st = reconcile(t, st, at(9, 0))
	prices, err := NewPrices(daySpec.Pricing)
	if err != nil {
		t.Fatal(err)
	}
	again, changed := Advance(st, Observe(daySpec, day(at(9, 0)), prices), at(9, 0))
	if changed {
		t.Errorf("Advance at the watermark changed the status")
	}
	if diff := cmp.Diff(st, again); diff != "" {
		t.Errorf("Advance at the watermark: -want +got:\n%s", diff)
	}
}

// TestBoundedLines checks that status stays within its schema's bound
// (1,002 lines) however many QueryServices once ran on the pool, and that
// the parts still add up to the pool.
func TestBoundedLines(t *testing.T) {
	prev := &v1alpha1.CostObservation{AccountedUntil: metav1.NewTime(at(0, 0)), Since: metav1.NewTime(at(0, 0)), NodeSeconds: "0", Dollars: "0"}
	for i := range MaxUseLines + 50 {
		prev.ByUse = append(prev.ByUse, v1alpha1.UseCost{Part: v1alpha1.CostQueryService, QueryService: fmt.Sprintf("qs-%04d", i), Namespace: "team",
			CostFigures: v1alpha1.CostFigures{Nodes: "0", DollarsPerHour: "0", NodeSeconds: strconv.Itoa(i), Dollars: strconv.Itoa(i)}})
	}
	got, _ := Advance(prev, Rates{byType: map[typeKey]Rate{}, byUse: map[useKey]Rate{}, price: map[typeKey]float64{}}, at(1, 0))
	if len(got.ByUse) > MaxUseLines {
		t.Fatalf("%d lines by use, want at most %d", len(got.ByUse), MaxUseLines)
	}
	var sum float64
	for _, u := range got.ByUse {
		sum += number(u.Dollars)
		if u.QueryService == "" && u.Dollars != "1275" {
			// qs-0000 to qs-0050 folded: 0 + 1 + ... + 50.
			t.Errorf("folded line holds %s USD, want 1275", u.Dollars)
		}
	}
	want := float64((MaxUseLines + 50) * (MaxUseLines + 49) / 2)
	if sum != want {
		t.Errorf("lines add up to %v USD, want %v", sum, want)
	}
}
