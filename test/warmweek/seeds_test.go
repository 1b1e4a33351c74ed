package warmweek

import (
	"fmt"
	"testing"
)

func TestSeedsDiag(t *testing.T) {
	price := slotPrice(t)
	weeks := Shipped()
	var sumL, sumS, costL, costS float64
	n := 0
	for base := uint64(10); base < 90; base += 10 {
		var trace []Request
		for i, w := range weeks {
			trace = append(trace, Generate(w.Monday, base+uint64(i))...)
		}
		r := replay{trace: trace, history: weeks[0].Monday, measured: weeks[3].Monday, end: weeks[3].Monday.AddDate(0, 0, 7)}
		r.peak, r.mean = Concurrency(trace, r.history, r.measured)
		ps := policies(t, r, price)
		line := fmt.Sprintf("seed %d:", base)
		for _, mk := range ps[3:] {
			p := mk()
			res, err := Replay(trace, r.measured, r.end, p, cloud(), Pool{MaxExecutors: maxExecutors, PerNode: perNode, ConsolidateAfter: consolidateAfter, SlotDollarsPerHour: price})
			if err != nil { t.Fatal(err) }
			line += fmt.Sprintf("  %s %.1f%% $%.0f", p.Name(), 100*res.WarmShare(), res.WarmDollars)
			if p.Name() == "learned" { sumL += res.WarmShare(); costL += res.WarmDollars } else { sumS += res.WarmShare(); costS += res.WarmDollars }
		}
		n++
		fmt.Println(line)
	}
	fmt.Printf("mean: scheduled %.1f%% $%.0f learned %.1f%% $%.0f\n", 100*sumS/float64(n), costS/float64(n), 100*sumL/float64(n), costL/float64(n))
}
