package warmweek

import (
	"fmt"
	"os"
	"testing"
	"text/tabwriter"

	"github.com/burstpool/burstpool/internal/warmpolicy"
)

// TestOtherWeeks runs in make test, and make bench-warm prints it: it
// replays eight more traces of the same shape, with other seeds, under the
// scheduled and learned policies, and the shipped trace under scheduled
// windows at other business-hours levels, so that a reader can tell the
// shipped week's figures from luck and compare the policies at the same
// warm share. It fails when the learned level misses its target on
// average or costs more than the scheduled windows on average.
func TestOtherWeeks(t *testing.T) {
	price := slotPrice(t)
	pool := Pool{MaxExecutors: maxExecutors, PerNode: perNode, ConsolidateAfter: consolidateAfter, SlotDollarsPerHour: price}
	weeks := Shipped()
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprintln(w, "seeds\tscheduled warm starts\tscheduled $/week\tlearned warm starts\tlearned $/week\t")
	var sumS, sumL, costS, costL float64
	const traces = 8
	for i := range traces {
		var trace []Request
		seeds := ""
		for j, wk := range weeks {
			seed := uint64(100 + 10*i + j)
			trace = append(trace, Generate(wk.Monday, seed)...)
			seeds += fmt.Sprintf(" %d", seed)
		}
		r := replay{trace: trace, history: weeks[0].Monday, measured: weeks[len(weeks)-1].Monday}
		r.end = r.measured.AddDate(0, 0, 7)
		ps := policies(t, r, price)
		sched, err := Replay(trace, r.measured, r.end, ps[3](), cloud(), pool)
		if err != nil {
			t.Fatal(err)
		}
		learned, err := Replay(trace, r.measured, r.end, ps[4](), cloud(), pool)
		if err != nil {
			t.Fatal(err)
		}
		sumS, costS = sumS+sched.WarmShare(), costS+sched.WarmDollars
		sumL, costL = sumL+learned.WarmShare(), costL+learned.WarmDollars
		_, _ = fmt.Fprintf(w, "%s\t%.1f%%\t%.0f\t%.1f%%\t%.0f\t\n", seeds, 100*sched.WarmShare(), sched.WarmDollars, 100*learned.WarmShare(), learned.WarmDollars)
	}
	_, _ = fmt.Fprintf(w, "mean\t%.1f%%\t%.0f\t%.1f%%\t%.0f\t\n", 100*sumS/traces, costS/traces, 100*sumL/traces, costL/traces)
	_ = w.Flush()

	r := load(t)
	fmt.Println()
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprintln(w, "shipped week: business-hours window at\twarm starts\twarm $/week\t")
	for _, level := range []int32{12, 14, 16, 18, 20, 22, 24} {
		ws := append([]warmpolicy.Window(nil), Windows...)
		ws[0].Executors = level
		p, err := NewScheduled(ws, 0, maxExecutors, lead())
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(r.trace, r.measured, r.end, p, cloud(), pool)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fmt.Fprintf(w, "%d\t%.1f%%\t%.0f\t\n", level, 100*res.WarmShare(), res.WarmDollars)
	}
	_ = w.Flush()

	if sumL/traces < targetWarm {
		t.Errorf("the learned level started %.1f%% of executors warm on average, short of its target %.0f%%", 100*sumL/traces, 100*targetWarm)
	}
	if costL > costS {
		t.Errorf("the learned level cost $%.0f a week on average, more than the scheduled windows' $%.0f", costL/traces, costS/traces)
	}
}
