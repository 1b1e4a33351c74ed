package warmweek

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestReplay(t *testing.T) {
	c := Cloud{Launch: 45 * time.Second, Pull: 25 * time.Second, WarmStart: time.Second}
	pool := Pool{MaxExecutors: 10, PerNode: 1, ConsolidateAfter: 5 * time.Minute, SlotDollarsPerHour: 1}
	t0 := time.Date(2026, time.April, 27, 9, 0, 0, 0, time.UTC)
	cold := c.ColdStart() // 71 s
	type args struct {
		trace []Request
		p     Policy
	}
	cases := map[string]struct {
		reason string
		args   args
		want   Result
	}{
		"ColdBurst": {
			reason: "Without warm slots each executor waits for a node of its own (71 s); each node stays 5 minutes after its executor ends.",
			args: args{
				trace: []Request{{At: t0, Executors: 3, Duration: 10 * time.Minute}},
				p:     &Static{Label: "none", MaxExecutors: 10},
			},
			want: Result{
				Policy: "none", Executors: 3, ToRunning: []time.Duration{cold, cold, cold},
				NodeHours: 3 * (cold + 15*time.Minute).Hours(), NodeDollars: 3 * (cold + 15*time.Minute).Hours(),
			},
		},
		"WarmSlots": {
			reason: "Two warm slots, held from the first event, start two of three executors an hour later at once; the third waits for a node; the slots return once the executors end.",
			args: args{
				trace: []Request{
					{At: t0, Executors: 0},
					{At: t0.Add(time.Hour), Executors: 3, Duration: 10 * time.Minute},
				},
				p: &Static{Label: "static", MinExecutors: 2, MaxExecutors: 10},
			},
			want: Result{
				Policy: "static", Executors: 3, Warm: 2, ToRunning: []time.Duration{time.Second, time.Second, cold},
				// Two held from t0 to t0+1h; the level less the executors
				// running after: one from when the executors on the warm
				// nodes end (t0+1h+10m+1s) until the third ends
				// (t0+1h+11m+11s), then two until t0+2h.
				WarmSlotHours: 2 + (70 * time.Second).Hours() + 2*(48*time.Minute+49*time.Second).Hours(),
				// Two nodes for two hours, the third from t0+1h for its
				// executor and 5 minutes.
				NodeHours: 4 + (cold + 15*time.Minute).Hours(),
				MaxLevel:  2,
			},
		},
		"LingeringNode": {
			reason: "A node left empty stays for consolidateAfter: an executor that comes within it starts warm on it.",
			args: args{
				trace: []Request{
					{At: t0, Executors: 1, Duration: time.Minute},
					{At: t0.Add(cold + 3*time.Minute), Executors: 1, Duration: time.Minute},
				},
				p: &Static{Label: "none", MaxExecutors: 10},
			},
			want: Result{
				Policy: "none", Executors: 2, Warm: 1, ToRunning: []time.Duration{cold, time.Second},
				// Created at t0, its second executor ends at
				// t0+71s+3m+1s+1m, then 5 minutes.
				NodeHours: (cold + 3*time.Minute + time.Second + time.Minute + 5*time.Minute).Hours(),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Replay(tc.args.trace, t0, t0.Add(2*time.Hour), tc.args.p, c, pool)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.WarmDollars = tc.want.WarmSlotHours
			tc.want.NodeDollars = tc.want.NodeHours
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("\n%s\nReplay(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReplayRefusesBeyondMaxExecutors(t *testing.T) {
	t0 := time.Date(2026, time.April, 27, 9, 0, 0, 0, time.UTC)
	_, err := Replay([]Request{{At: t0, Executors: 3, Duration: time.Minute}}, t0, t0.Add(time.Hour), &Static{Label: "none", MaxExecutors: 2},
		Cloud{Launch: time.Second}, Pool{MaxExecutors: 2, PerNode: 1})
	if err == nil {
		t.Error("a trace that asks for more than maxExecutors replayed without an error")
	}
}
