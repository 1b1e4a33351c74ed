package cost

import (
	"math"
	"sort"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// MaxGap is the longest interval Advance prices at the rates of the last
// observation. A longer one (a provider down, or unable to write status)
// is counted up to MaxGap; the rest is added to unaccountedSeconds.
const MaxGap = 15 * time.Minute

// Step is how long Advance lets the watermark stand while the rates do not
// change, so that a quiet pool's status is rewritten at most once a Step.
// Deferring is exact: the time after the watermark is priced at the same
// rates whenever it is counted.
const Step = time.Minute

// Decimal places kept in status: rates and totals round to them, each
// time Advance writes them.
const (
	dollarPlaces = 9
	nodePlaces   = 6
)

// Advance returns the cost observation at now, from prev (the current
// status.atProvider.cost, nil when counting begins) and the rates observed
// at now. The node time between prev's watermark and now is priced at
// prev's rates (what held since the last observation) and added to the
// totals; the watermark moves to now and the rates become r's. Each
// node-second is counted once, by the status write that moves the
// watermark past it: a write that fails leaves the watermark where it was,
// and the next Advance counts the same interval again from it.
//
// changed is false, and prev is returned as is, while r's rates equal
// prev's and less than Step has passed since the watermark, or when now is
// not after the watermark. now is truncated to seconds.
func Advance(prev *v1alpha1.CostObservation, r Rates, now time.Time) (obs *v1alpha1.CostObservation, changed bool) {
	now = now.UTC().Truncate(time.Second)
	cur := read(prev)
	next := r.lines()
	if prev != nil {
		dt := now.Sub(prev.AccountedUntil.Time)
		if dt <= 0 || (dt < Step && sameRates(cur, next)) {
			return prev, false
		}
	}
	out := &v1alpha1.CostObservation{AccountedUntil: metav1.NewTime(now), Since: metav1.NewTime(now)}
	if prev != nil {
		out.Since = prev.Since
		out.UnaccountedSeconds = prev.UnaccountedSeconds
		dt := now.Sub(prev.AccountedUntil.Time)
		if dt > MaxGap {
			out.UnaccountedSeconds += int64((dt - MaxGap) / time.Second)
			dt = MaxGap
		}
		cur.integrate(dt.Seconds())
	}
	cur.rerate(next)
	cur.bound(MaxUseLines)
	cur.write(out)
	return out, true
}

// figures are one line's rate and totals, as numbers.
type figures struct {
	rate         Rate
	nodeSeconds  float64
	dollars      float64
	pricePerHour float64
	priced       bool
}

// ledger is a cost observation as numbers.
type ledger struct {
	byType map[typeKey]*figures
	byUse  map[useKey]*figures
}

// read parses o; numbers that do not parse count as zero (status is
// written only by Advance).
func read(o *v1alpha1.CostObservation) ledger {
	l := ledger{byType: map[typeKey]*figures{}, byUse: map[useKey]*figures{}}
	if o == nil {
		return l
	}
	for _, t := range o.ByNodeType {
		f := parseFigures(t.CostFigures)
		f.pricePerHour, f.priced = number(t.PricePerHour), t.PricePerHour != ""
		l.byType[typeKey{t.InstanceType, t.CapacityType}] = f
	}
	for _, u := range o.ByUse {
		l.byUse[useKey{u.Part, u.QueryService, u.Namespace}] = parseFigures(u.CostFigures)
	}
	return l
}

func parseFigures(c v1alpha1.CostFigures) *figures {
	return &figures{
		rate:        Rate{Nodes: number(c.Nodes), DollarsPerHour: number(c.DollarsPerHour)},
		nodeSeconds: number(c.NodeSeconds),
		dollars:     number(c.Dollars),
	}
}

func number(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f
}

// lines returns r as a ledger with no totals, rounded as status keeps it.
func (r Rates) lines() ledger {
	l := ledger{byType: map[typeKey]*figures{}, byUse: map[useKey]*figures{}}
	for k, v := range r.byType {
		p, ok := r.price[k]
		l.byType[k] = &figures{rate: rounded(v), pricePerHour: round(p, dollarPlaces), priced: ok}
	}
	for k, v := range r.byUse {
		l.byUse[k] = &figures{rate: rounded(v)}
	}
	return l
}

func rounded(r Rate) Rate {
	return Rate{Nodes: round(r.Nodes, nodePlaces), DollarsPerHour: round(r.DollarsPerHour, dollarPlaces)}
}

func round(f float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(f*p) / p
}

// sameRates reports whether a and b hold the same rates and prices.
func sameRates(a, b ledger) bool {
	same := func(x, y *figures) bool {
		return x.rate == y.rate && x.priced == y.priced && x.pricePerHour == y.pricePerHour
	}
	return sameLines(a.byType, b.byType, same) && sameLines(a.byUse, b.byUse, same)
}

// sameLines reports whether a and b hold the same lines with a non-zero
// rate (a line of zero rate only carries totals).
func sameLines[K comparable](a, b map[K]*figures, same func(x, y *figures) bool) bool {
	for _, m := range []struct{ x, y map[K]*figures }{{a, b}, {b, a}} {
		for k, x := range m.x {
			y, ok := m.y[k]
			if x.rate == (Rate{}) && (!ok || y.rate == (Rate{})) {
				continue
			}
			if !ok || !same(x, y) {
				return false
			}
		}
	}
	return true
}

// integrate adds every line's rate over seconds to its totals.
func (l ledger) integrate(seconds float64) {
	for _, f := range l.byType {
		f.accrue(seconds)
	}
	for _, f := range l.byUse {
		f.accrue(seconds)
	}
}

func (f *figures) accrue(seconds float64) {
	f.nodeSeconds += f.rate.Nodes * seconds
	f.dollars += f.rate.DollarsPerHour * seconds / 3600
}

// rerate sets l's rates (and prices) to next's; lines next lacks keep
// their totals at a rate of zero.
func (l ledger) rerate(next ledger) {
	for k, f := range l.byType {
		n, ok := next.byType[k]
		if !ok {
			n = &figures{pricePerHour: f.pricePerHour, priced: f.priced}
		}
		f.rate, f.pricePerHour, f.priced = n.rate, n.pricePerHour, n.priced
	}
	for k, n := range next.byType {
		if _, ok := l.byType[k]; !ok {
			l.byType[k] = n
		}
	}
	for k, f := range l.byUse {
		f.rate = Rate{}
		if n, ok := next.byUse[k]; ok {
			f.rate = n.rate
		}
	}
	for k, n := range next.byUse {
		if _, ok := l.byUse[k]; !ok {
			l.byUse[k] = n
		}
	}
}

// MaxUseLines bounds status.atProvider.cost.byUse. Lines of QueryServices
// keep their totals while there is room; beyond it, lines are folded into
// one line of part QueryService with no name: first those that hold
// nothing now, smallest totals first, then (should more than MaxUseLines
// QueryServices run on one pool at once) the smallest running ones, rate
// and all. Every second stays counted once, and the parts still add up to
// the pool.
const MaxUseLines = 1000

// bound folds l's QueryService lines into one unnamed line until l holds
// at most max lines.
func (l ledger) bound(max int) {
	if len(l.byUse) <= max {
		return
	}
	var named []useKey
	for k := range l.byUse {
		if k.part == v1alpha1.CostQueryService && k.queryService != "" {
			named = append(named, k)
		}
	}
	sort.Slice(named, func(i, j int) bool {
		a, b := l.byUse[named[i]], l.byUse[named[j]]
		if ai, bi := a.rate == (Rate{}), b.rate == (Rate{}); ai != bi {
			return ai
		}
		if a.dollars != b.dollars {
			return a.dollars < b.dollars
		}
		if named[i].ns != named[j].ns {
			return named[i].ns < named[j].ns
		}
		return named[i].queryService < named[j].queryService
	})
	folded := useKey{part: v1alpha1.CostQueryService}
	for _, k := range named {
		if len(l.byUse) <= max {
			break
		}
		if l.byUse[folded] == nil {
			l.byUse[folded] = &figures{}
		}
		into, f := l.byUse[folded], l.byUse[k]
		into.nodeSeconds += f.nodeSeconds
		into.dollars += f.dollars
		into.rate.Nodes += f.rate.Nodes
		into.rate.DollarsPerHour += f.rate.DollarsPerHour
		delete(l.byUse, k)
	}
}

// write sets o's lines and pool totals from l, sorted and rounded.
func (l ledger) write(o *v1alpha1.CostObservation) {
	var pool figures
	o.ByNodeType = make([]v1alpha1.NodeTypeCost, 0, len(l.byType))
	for k, f := range l.byType {
		t := v1alpha1.NodeTypeCost{InstanceType: k.instanceType, CapacityType: k.capacityType, CostFigures: f.status()}
		if f.priced {
			t.PricePerHour = decimal(f.pricePerHour, dollarPlaces)
		}
		o.ByNodeType = append(o.ByNodeType, t)
		pool.rate.DollarsPerHour += f.rate.DollarsPerHour
		pool.nodeSeconds += round(f.nodeSeconds, nodePlaces)
		pool.dollars += round(f.dollars, dollarPlaces)
	}
	sort.Slice(o.ByNodeType, func(i, j int) bool {
		a, b := o.ByNodeType[i], o.ByNodeType[j]
		if a.InstanceType != b.InstanceType {
			return a.InstanceType < b.InstanceType
		}
		return a.CapacityType < b.CapacityType
	})
	o.ByUse = make([]v1alpha1.UseCost, 0, len(l.byUse))
	for k, f := range l.byUse {
		o.ByUse = append(o.ByUse, v1alpha1.UseCost{Part: k.part, QueryService: k.queryService, Namespace: k.ns, CostFigures: f.status()})
	}
	sort.Slice(o.ByUse, func(i, j int) bool {
		a, b := o.ByUse[i], o.ByUse[j]
		if a.Part != b.Part {
			return a.Part < b.Part
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.QueryService < b.QueryService
	})
	o.DollarsPerHour = decimal(pool.rate.DollarsPerHour, dollarPlaces)
	o.NodeSeconds = decimal(pool.nodeSeconds, nodePlaces)
	o.Dollars = decimal(pool.dollars, dollarPlaces)
}

func (f *figures) status() v1alpha1.CostFigures {
	return v1alpha1.CostFigures{
		Nodes:          decimal(f.rate.Nodes, nodePlaces),
		DollarsPerHour: decimal(f.rate.DollarsPerHour, dollarPlaces),
		NodeSeconds:    decimal(f.nodeSeconds, nodePlaces),
		Dollars:        decimal(f.dollars, dollarPlaces),
	}
}

// decimal formats f rounded to places, without trailing zeros.
func decimal(f float64, places int) string {
	return strconv.FormatFloat(round(f, places), 'f', -1, 64)
}
