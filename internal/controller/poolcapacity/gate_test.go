package poolcapacity

import (
	"testing"
	"time"

	"github.com/burstpool/burstpool/internal/capacity"
)

// TestGatesDue: the executor gate is applied when it changes and again
// after reassert, but a pool without one is checked once: most pools
// never have a gate, and deleting nothing every minute would cost each of
// them two requests and an Update.
func TestGatesDue(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	later := t0.Add(2 * reassert)
	g := &capacity.ExecutorGate{Gate: "e6data.io/pool-slot", Namespaces: []string{"team-a"}, Selector: map[string]string{"e6data.io/pool": "p"}}
	other := &capacity.ExecutorGate{Gate: "e6data.io/pool-slot", Namespaces: []string{"team-a", "team-b"}, Selector: g.Selector}
	cases := map[string]struct {
		reason   string
		recorded bool
		last     *capacity.ExecutorGate
		lastWhy  string
		want     *capacity.ExecutorGate
		at       time.Time
		due      bool
	}{
		"NeverApplied":       {reason: "A PoolCapacity not seen since the provider started is checked once.", want: nil, at: t0, due: true},
		"NoneStaysNone":      {reason: "No gate wanted, none applied: nothing to do, even much later.", recorded: true, want: nil, at: later},
		"GateWanted":         {reason: "A gate wanted where none is.", recorded: true, want: g, at: t0, due: true},
		"SameGate":           {reason: "The same gate, applied a moment ago.", recorded: true, last: g, want: g, at: t0},
		"SameGateReasserted": {reason: "The same gate, applied long ago: applied again, in case it was removed.", recorded: true, last: g, want: g, at: later, due: true},
		"NamespacesChanged":  {reason: "A QueryService attached from another namespace.", recorded: true, last: g, want: other, at: t0, due: true},
		"GateGone":           {reason: "The gate is no longer wanted: removed.", recorded: true, last: g, want: nil, at: t0, due: true},
		"UnavailableRetried": {reason: "Removing failed for a reason worth retrying: tried again after the interval.", recorded: true, lastWhy: "forbidden", want: nil, at: later, due: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := newMemo[gateState]()
			if tc.recorded {
				gateRecord(m, "pc", tc.last, t0, tc.lastWhy)
			}
			if got := gateDue(m, "pc", tc.want, tc.at); got != tc.due {
				t.Errorf("%s\ndue = %t, want %t", tc.reason, got, tc.due)
			}
		})
	}
}
