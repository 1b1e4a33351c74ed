package warmweek

import (
	"slices"
	"time"
)

// Concurrency is the peak and the mean of the executors trace asks to run
// at once in [from, to), each for its duration from its request.
func Concurrency(trace []Request, from, to time.Time) (peak int, mean float64) {
	type change struct {
		at time.Time
		d  int
	}
	var cs []change
	var execHours float64
	for _, r := range trace {
		a, b := maxTime(r.At, from), minTime(r.At.Add(r.Duration), to)
		if !b.After(a) {
			continue
		}
		cs = append(cs, change{a, r.Executors}, change{b, -r.Executors})
		execHours += float64(r.Executors) * b.Sub(a).Hours()
	}
	slices.SortStableFunc(cs, func(x, y change) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return x.d - y.d // ends before starts at one instant
	})
	n := 0
	for _, c := range cs {
		n += c.d
		peak = max(peak, n)
	}
	return peak, execHours / to.Sub(from).Hours()
}
