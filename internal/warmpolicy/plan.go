package warmpolicy

import (
	"math"
	"slices"
	"sync"
)

// demand is a history's figures, read once for planning: every slot of
// every week that recorded starts (peak at least 1), in ring order, and
// each slot's neighbourhood; and what planning computes from them once,
// the segments of each leave-out (rank), which a plan under any cap takes
// its part of (clip).
//
// A demand is large (about 64 KB, with scratch space from 0.2 MB for a
// pool busy at known hours to 3.5 MB for one with distinct figures in
// every slot of four weeks), so Recommend takes one from demands and
// gives it back: planning allocates nothing once the scratch space has
// grown to the histories planned.
type demand struct {
	cells    [Weeks][SlotsPerWeek]figures
	observed [Weeks][SlotsPerWeek]bool
	// near tells whether a slot or a neighbour within the kernel
	// recorded starts: the slots that can have segments.
	near [SlotsPerWeek]bool
	// starts are each week's starts.
	starts [Weeks]float64
	// sums are each slot's starts over its observed weeks.
	sums [SlotsPerWeek]sums
	// around[first[s]:first[s+1]] are the cells of slot s's neighbourhood
	// that recorded starts, by offset, then week; byPeak, at the same
	// places, their indices among them, lowest peak first (and of equal
	// peaks, in that order): the order appendSegments takes a slot's
	// samples in, for every leave-out.
	first [SlotsPerWeek + 1]int32
	// means are the slots' stat for the leave-out being ranked.
	means [SlotsPerWeek]stat
	// ranked[skip+1] tells whether ranks[skip+1] holds the segments of
	// the weeks but skip (-1: none).
	ranked [Weeks + 1]bool
	scratch
}

// scratch is what a demand reuses from one Recommend to the next: the
// slots' neighbourhoods; each leave-out's segments, most warm starts per
// slot-hour first, and the starts they estimate; the segments as made and
// the sort's keys; the folds of calibrate.
type scratch struct {
	around    []neighbour
	byPeak    []uint8
	ranks     [Weeks + 1]rank
	made      []segment
	keys, tmp []uint64
	folds     [Weeks]fold
}

// rank is the segments of the weeks but one, uncapped, by rate, and the
// starts they estimate.
type rank struct {
	segs  []segment
	total float64
}

// sums are a slot's starts summed over its observed weeks, their squares
// summed, and how many weeks: whole numbers below 2^53, so exact in any
// order, and a week's can be taken out again exactly.
type sums struct {
	sum, sq float64
	n       int
}

// neighbour is a cell of a slot's neighbourhood that recorded starts: its
// offset from the slot (0 to neighbours-1, for -3 to 3), its week, and its
// figures.
type neighbour struct {
	offset, week uint8
	peak         uint32
	starts       float64
}

// demands are demands to reuse: Recommend takes one and gives it back.
var demands = sync.Pool{New: func() any { return new(demand) }}

// demand is h's figures, in a demand from demands; release gives it back.
func (h *History) demand() *demand {
	d := demands.Get().(*demand)
	*d = demand{scratch: d.scratch}
	for w := range h.cells {
		for s, c := range h.cells[w] {
			d.observed[w][s] = c.observed()
			if !c.observed() {
				continue
			}
			f := c.figures()
			x := float64(f.starts)
			d.sums[s].sum, d.sums[s].sq, d.sums[s].n = d.sums[s].sum+x, d.sums[s].sq+x*x, d.sums[s].n+1
			if f.starts > 0 {
				f.peak = max(f.peak, 1)
				d.cells[w][s] = f
				d.starts[w] += float64(f.starts)
				for o := 1 - len(kernel); o < len(kernel); o++ {
					d.near[(s+o+SlotsPerWeek)%SlotsPerWeek] = true
				}
			}
		}
	}
	d.around, d.byPeak = d.around[:0], d.byPeak[:0]
	for s := range SlotsPerWeek {
		d.first[s] = int32(len(d.around))
		if d.near[s] {
			d.addNeighbourhood(s)
		}
	}
	d.first[SlotsPerWeek] = int32(len(d.around))
	return d
}

// release gives d back to demands; d is not to be used after.
func (d *demand) release() { demands.Put(d) }

// addNeighbourhood appends slot s's neighbourhood to around, and its
// order by peak to byPeak: stable, as it sorts each cell's peak above its
// index (28 cells at most).
func (d *demand) addNeighbourhood(s int) {
	var keys [neighbours * Weeks]uint64
	n := 0
	for o := range neighbours {
		j := (s + o - (len(kernel) - 1) + SlotsPerWeek) % SlotsPerWeek
		for w := range Weeks {
			if f := d.cells[w][j]; f.starts > 0 {
				d.around = append(d.around, neighbour{offset: uint8(o), week: uint8(w), peak: f.peak, starts: float64(f.starts)})
				keys[n] = uint64(f.peak)<<8 | uint64(n)
				n++
			}
		}
	}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	for _, k := range keys[:n] {
		d.byPeak = append(d.byPeak, uint8(k))
	}
}

// kernel weighs a slot's neighbours, by distance in slots, in the
// neighbourhood's estimate of a slot's demand: the hour around it.
var kernel = [...]float64{1, 0.75, 0.5, 0.25}

// neighbours is how many slots a slot's estimate reads: itself and three
// on each side.
const neighbours = 2*len(kernel) - 1

// mean is the mean and the variance of the starts of slot s over the
// observed weeks but skip, and how many there are.
func (d *demand) mean(s, skip int) (mean, variance float64, n int) {
	sum, sq, n := d.sums[s].sum, d.sums[s].sq, d.sums[s].n
	if skip >= 0 && d.observed[skip][s] {
		x := float64(d.cells[skip][s].starts)
		sum, sq, n = sum-x, sq-x*x, n-1
	}
	if n == 0 {
		return 0, 0, 0
	}
	mean = sum / float64(n)
	if n == 1 {
		return mean, mean, n // one week: as variable as a Poisson count
	}
	return mean, max(0, (sq-sum*mean)/float64(n-1)), n
}

// weights sets ws to how much each neighbour of slot s (kernel's offsets,
// -3 to 3) counts in its estimate, summing to 1: kernel's weight, less the
// further the neighbour's mean starts lie from the slot's beyond what
// chance explains (an edge-preserving, bilateral smoothing). Bursts that
// land at random within the hour are spread over it; a job that starts
// at the same time every week keeps its own slot, and so do the quiet
// slots beside it. It reads the means of the leave-out being ranked.
func (d *demand) weights(ws *[neighbours]float64, s int) {
	own := d.means[s]
	var sum float64
	for o := 1 - len(kernel); o < len(kernel); o++ {
		near := d.means[(s+o+SlotsPerWeek)%SlotsPerWeek]
		gap := (own.mean - near.mean) * (own.mean - near.mean)
		noise := own.noise + near.noise
		w := kernel[abs(o)]
		switch {
		case o == 0:
		case noise == 0 && gap > 0:
			w = 0
		case gap > 16*noise:
			w = 0 // four standard deviations apart: nothing alike
		case gap > 0:
			w *= math.Exp(-gap / (2 * noise))
		}
		ws[o+len(kernel)-1] = w
		sum += w
	}
	for i := range ws {
		ws[i] /= sum
	}
}

// stat is a slot's mean starts over its observed weeks, and the variance
// of that mean: the weeks' variance (at least the mean's, as if the
// starts were a Poisson count) over their number.
type stat struct{ mean, noise float64 }

// stats sets means to the slots' stat over the weeks but skip.
func (d *demand) stats(skip int) {
	for s := range d.means {
		d.means[s] = stat{}
		if d.sums[s].sum == 0 {
			continue // no starts in any week: a mean of 0, without noise
		}
		if m, v, n := d.mean(s, skip); n > 0 {
			d.means[s] = stat{mean: m, noise: max(v, m) / float64(n)}
		}
	}
}

// plan is a warm level for every slot of the week and the warm starts the
// history says it buys.
type plan struct {
	levels      [SlotsPerWeek]int32
	warm, total float64
	hours       float64
}

// level is the largest level of n slots from first, round the week's end.
func (p plan) level(first, n int) int32 {
	var l int32
	for i := range min(n, SlotsPerWeek) {
		l = max(l, p.levels[(first+i)%SlotsPerWeek])
	}
	return l
}

func (p plan) share() float64 {
	if p.total == 0 {
		return 1
	}
	return min(1, p.warm/p.total)
}

// segment is a run of levels of one slot, from..to, over which each warm
// executor more buys rate warm starts (summed over the weeks of history).
type segment struct {
	slot     int
	from, to int32
	rate     float64
}

// sample is one week's figures of a slot, weighed.
type sample struct {
	peak   uint32
	starts float64
	// perPeak is starts/peak, which appendSegments sets.
	perPeak float64
}

// rank is the segments of every slot from the weeks but skip (-1: none),
// uncapped, most warm starts per slot-hour first; of equal rates, the
// earlier slot of the week, and within a slot the lower levels (whose
// rates are never lower); and the starts they estimate. Each slot's
// estimate blends its own weeks' figures with its neighbours', as weights
// weighs them. It is computed once per leave-out, and kept; a plan under
// a cap takes its part of it (clip).
func (d *demand) rank(skip int) *rank {
	r := &d.ranks[skip+1]
	if d.ranked[skip+1] {
		return r
	}
	segs := d.made[:0]
	var total float64
	var obs [neighbours * Weeks]sample
	var ws [neighbours]float64
	d.stats(skip)
	for s := range SlotsPerWeek {
		if !d.near[s] {
			continue
		}
		d.weights(&ws, s)
		ns := d.around[d.first[s]:d.first[s+1]]
		for _, nb := range ns {
			if k := ws[nb.offset]; k != 0 && int(nb.week) != skip {
				total += k * nb.starts
			}
		}
		n := 0
		for _, i := range d.byPeak[d.first[s]:d.first[s+1]] {
			if nb := ns[i]; ws[nb.offset] != 0 && int(nb.week) != skip {
				obs[n] = sample{peak: nb.peak, starts: ws[nb.offset] * nb.starts}
				n++
			}
		}
		segs = appendSegments(segs, s, obs[:n])
	}
	d.made = segs
	r.segs, d.keys, d.tmp = byRate(segs, r.segs[:0], d.keys[:0], d.tmp)
	r.total, d.ranked[skip+1] = total, true
	return r
}

// clip is the part of sg below limit executors a slot, and whether there
// is one. The segments of a slot under a cap are its uncapped segments,
// clipped: those that start below it, the last cut at it, at the same
// rates and in the same order.
func clip(sg segment, limit int32) (segment, bool) {
	sg.to = min(sg.to, limit)
	return sg, sg.to > sg.from
}

// byRate appends segs to out sorted by rate, highest first, and of equal
// rates (to 32 bits of mantissa, a relative 2^-32) in their order in segs:
// by slot, then level. It sorts keys, each the rate's leading bits above
// the index, with a radix sort of the rate's bits, several times faster
// than comparing segments; keys and tmp are scratch space, returned to be
// used again. The sort is stable, so is the result.
func byRate(segs, out []segment, keys, tmp []uint64) ([]segment, []uint64, []uint64) {
	if len(segs) >= 1<<indexBits {
		panic("more segments than a week of history can make") // Weeks × neighbours a slot
	}
	keys, out = slices.Grow(keys, len(segs)), slices.Grow(out, len(segs))
	for i, sg := range segs {
		// A non-negative float's bits order as it does.
		keys = append(keys, ^(math.Float64bits(sg.rate)>>indexBits)<<indexBits|uint64(i))
	}
	keys, tmp = radixSort(keys, tmp)
	for _, k := range keys {
		out = append(out, segs[k&(1<<indexBits-1)])
	}
	return out, keys, tmp
}

// indexBits are the low bits of byRate's keys: a segment's index.
const indexBits = 20

// radixSort sorts keys, given in the order of their low indexBits, by
// the bits above them, least significant 11 first; it is stable, so keys
// come out in the order of all their bits. tmp is scratch space: it
// returns the sorted keys and the other buffer.
func radixSort(keys, tmp []uint64) (sorted, spare []uint64) {
	const bits, buckets = 11, 1 << 11
	if len(keys) < buckets {
		// Fewer keys than buckets: clearing and summing the counts
		// would cost more than comparing. The keys differ in their
		// index, so any sort orders them as the radix sort does.
		slices.Sort(keys)
		return keys, tmp
	}
	tmp = slices.Grow(tmp[:0], len(keys))[:len(keys)]
	var count [buckets]int
	for shift := indexBits; shift < 64; shift += bits {
		count = [buckets]int{}
		for _, k := range keys {
			count[k>>shift&(buckets-1)]++
		}
		if count[keys[0]>>shift&(buckets-1)] == len(keys) {
			continue // every key has this digit
		}
		sum := 0
		for i, c := range count {
			count[i], sum = sum, sum+c
		}
		for _, k := range keys {
			d := k >> shift & (buckets - 1)
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys, tmp
}

// appendSegments adds slot s's segments, uncapped, from its samples
// sorted by peak, lowest first: under the model, of a week's starts at
// peak P a level w starts min(1, w/P) warm, so between two peaks of the
// samples each executor of level buys the starts per peak of every
// sample whose peak is higher.
func appendSegments(segs []segment, s int, obs []sample) []segment {
	var rest float64
	for i, o := range obs {
		obs[i].perPeak = o.starts / float64(o.peak)
		rest += obs[i].perPeak
	}
	var from int32
	for _, o := range obs {
		if to := int32(o.peak); to > from {
			segs = append(segs, segment{slot: s, from: from, to: to, rate: rest})
			from = to
		}
		rest -= o.perPeak
	}
	return segs
}

// plan is the least slot-hours that buy share of the history's
// (estimated) starts.
func (d *demand) plan(share float64, limit int32) plan {
	r := d.rank(-1)
	return greedy(r.segs, limit, r.total, share)
}

// greedy takes segments, clipped at limit, in their order (most warm
// starts per slot-hour first) until they buy share of total: since each
// slot's warm starts are concave in its level, that is the least
// slot-hours that do, but for the last executor, which rounds up.
func greedy(segs []segment, limit int32, total, share float64) plan {
	p := plan{total: total}
	target := min(1, max(0, share)) * p.total
	for _, sg := range segs {
		sg, ok := clip(sg, limit)
		if !ok {
			continue
		}
		if p.warm >= target*(1-1e-12) {
			break
		}
		gain := sg.rate * float64(sg.to-sg.from)
		if p.warm+gain < target {
			p.levels[sg.slot], p.warm = sg.to, p.warm+gain
			continue
		}
		// The last segment, in part: to the executor that reaches the
		// target.
		to := sg.from + int32(math.Ceil((target-p.warm)/sg.rate-1e-9))
		p.levels[sg.slot], p.warm = to, p.warm+sg.rate*float64(to-sg.from)
		break
	}
	for _, l := range p.levels {
		p.hours += float64(l) * SlotLength.Hours()
	}
	return p
}

// fold is a plan made without one week, walked segment by segment: the
// share of the other weeks' starts it buys, and the warm starts of the
// week left out, after each segment.
type fold struct {
	inShare, outWarm []float64
	outTotal         float64
}

// calibration is the share a plan aims at so that it meets the target on
// weeks it has not seen.
type calibration struct {
	// Plan is the share of the history's (estimated) starts to plan for.
	Plan float64
	// Unseen is the share of starts such plans start warm on the weeks
	// left out of them; Checked whether there were weeks to leave out.
	Unseen  float64
	Checked bool
}

// calibrate finds the share to plan for so that a plan meets share on
// weeks it has not seen: each week with starts is left out in turn, the
// plan of the other weeks is walked segment by segment, and the least
// planned share whose plans start share of the left-out weeks' starts
// warm (all of them pooled) is taken; 1 when none does (the most the
// history supports, within the caps). With fewer than two weeks with
// starts there is nothing to check a plan on: share itself.
func (d *demand) calibrate(share float64, limit int32) calibration {
	folds := d.folds[:0]
	for w := range d.starts {
		if d.starts[w] == 0 {
			continue
		}
		r := d.rank(w)
		in := r.total
		if in == 0 {
			continue
		}
		// The fold's buffers are the ones of the last calibrate.
		f := fold{outTotal: d.starts[w], inShare: slices.Grow(d.folds[len(folds)].inShare[:0], len(r.segs)), outWarm: slices.Grow(d.folds[len(folds)].outWarm[:0], len(r.segs))}
		var levels [SlotsPerWeek]int32
		var inWarm, outWarm float64
		for _, sg := range r.segs {
			sg, ok := clip(sg, limit)
			if !ok {
				continue
			}
			inWarm += sg.rate * float64(sg.to-sg.from)
			if o := d.cells[w][sg.slot]; o.starts > 0 {
				p := float64(o.peak)
				outWarm += float64(o.starts) * (min(1, float64(sg.to)/p) - min(1, float64(levels[sg.slot])/p))
			}
			levels[sg.slot] = sg.to
			f.inShare = append(f.inShare, inWarm/in)
			f.outWarm = append(f.outWarm, outWarm)
		}
		folds = append(folds, f)
	}
	if len(folds) < 2 {
		return calibration{Plan: share}
	}
	// unseen is the pooled share of the left-out weeks' starts that plans
	// of x start warm.
	unseen := func(x float64) float64 {
		var warm, total float64
		for _, f := range folds {
			total += f.outTotal
			if i, _ := slices.BinarySearch(f.inShare, x-1e-12); i < len(f.outWarm) {
				warm += f.outWarm[i]
			} else if len(f.outWarm) > 0 {
				warm += f.outWarm[len(f.outWarm)-1]
			}
		}
		return warm / total
	}
	lo, hi := share, 1.0
	switch {
	case unseen(lo) >= share:
		hi = lo
	case unseen(hi) < share:
	default:
		for range 30 {
			mid := (lo + hi) / 2
			if unseen(mid) >= share {
				hi = mid
			} else {
				lo = mid
			}
		}
	}
	return calibration{Plan: hi, Unseen: unseen(hi), Checked: true}
}

func abs(d int) int {
	if d < 0 {
		return -d
	}
	return d
}
