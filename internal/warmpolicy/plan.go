package warmpolicy

import (
	"math"
	"slices"
)

// demand is a history's figures, read once for planning: every slot of
// every week that recorded starts (peak at least 1), in ring order.
type demand struct {
	cells    [Weeks][SlotsPerWeek]figures
	observed [Weeks][SlotsPerWeek]bool
	// near tells whether a slot or a neighbour within the kernel
	// recorded starts: the slots that can have segments.
	near [SlotsPerWeek]bool
	// starts are each week's starts.
	starts [Weeks]float64
	// made, keys and sorted are scratch space for segments, reused by
	// each plan of one Recommend.
	made, sorted []segment
	keys         []uint64
}

func (h *History) demand() *demand {
	d := &demand{}
	for w := range h.cells {
		for s, c := range h.cells[w] {
			d.observed[w][s] = c.observed()
			if f := c.figures(); f.starts > 0 {
				f.peak = max(f.peak, 1)
				d.cells[w][s] = f
				d.starts[w] += float64(f.starts)
				for o := 1 - len(kernel); o < len(kernel); o++ {
					d.near[(s+o+SlotsPerWeek)%SlotsPerWeek] = true
				}
			}
		}
	}
	return d
}

// kernel weighs a slot's neighbours, by distance in slots, in the
// neighbourhood's estimate of a slot's demand: the hour around it.
var kernel = []float64{1, 0.75, 0.5, 0.25}

// mean is the mean and the variance of the starts of slot s over the
// observed weeks but skip, and how many there are.
func (d *demand) mean(s, skip int) (mean, variance float64, n int) {
	var sum, sq float64
	for w := range d.cells {
		if w == skip || !d.observed[w][s] {
			continue
		}
		x := float64(d.cells[w][s].starts)
		sum, sq, n = sum+x, sq+x*x, n+1
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
// slots beside it.
func (d *demand) weights(ws []float64, s int, means []stat) {
	own := means[s]
	var sum float64
	for o := 1 - len(kernel); o < len(kernel); o++ {
		near := means[(s+o+SlotsPerWeek)%SlotsPerWeek]
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

func (d *demand) stats(skip int) []stat {
	out := make([]stat, SlotsPerWeek)
	for s := range out {
		m, v, n := d.mean(s, skip)
		if n > 0 {
			out[s] = stat{mean: m, noise: max(v, m) / float64(n)}
		}
	}
	return out
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
}

// segments are the segments of every slot from the weeks but skip (-1:
// none), most warm starts per slot-hour first; of equal rates, the
// earlier slot of the week, and within a slot the lower levels (whose
// rates are never lower); and the starts they estimate. Each slot's
// estimate blends its own weeks' figures with its kernel-weighed
// neighbours' (blend).
func (d *demand) segments(skip int, limit int32) ([]segment, float64) {
	segs := d.made[:0]
	var total float64
	samples := make([]sample, 0, Weeks*2*len(kernel))
	means := d.stats(skip)
	ws := make([]float64, 2*len(kernel)-1)
	for s := range SlotsPerWeek {
		if !d.near[s] {
			continue
		}
		samples = samples[:0]
		d.weights(ws, s, means)
		for o := 1 - len(kernel); o < len(kernel); o++ {
			j := (s + o + SlotsPerWeek) % SlotsPerWeek
			k := ws[o+len(kernel)-1]
			if k == 0 {
				continue
			}
			for w := range d.cells {
				if f := d.cells[w][j]; f.starts > 0 && w != skip {
					samples = append(samples, sample{peak: f.peak, starts: k * float64(f.starts)})
					total += k * float64(f.starts)
				}
			}
		}
		segs = appendSegments(segs, s, samples, limit)
	}
	d.made = segs
	d.sorted, d.keys = byRate(segs, d.sorted[:0], d.keys[:0])
	return d.sorted, total
}

// byRate appends segs to out sorted by rate, highest first, and of equal
// rates (to 32 bits of mantissa, a relative 2^-32) in their order in segs:
// by slot, then level. It sorts keys, each the rate's leading bits and the
// index, with a radix sort, several times faster than comparing segments;
// keys is scratch space. The sort is stable, so is the result.
func byRate(segs, out []segment, keys []uint64) ([]segment, []uint64) {
	const indexBits = 20
	if len(segs) >= 1<<indexBits {
		panic("more segments than a week of history can make") // Weeks × (2×len(kernel)-1) a slot
	}
	for i, sg := range segs {
		// A non-negative float's bits order as it does.
		keys = append(keys, ^(math.Float64bits(sg.rate)>>indexBits)<<indexBits|uint64(i))
	}
	keys = radixSort(keys)
	for _, k := range keys {
		out = append(out, segs[k&(1<<indexBits-1)])
	}
	return out, keys
}

// radixSort sorts keys, least significant 11 bits first.
func radixSort(keys []uint64) []uint64 {
	const bits, buckets = 11, 1 << 11
	if len(keys) < 2 {
		return keys
	}
	tmp := make([]uint64, len(keys))
	var count [buckets]int
	for shift := 0; shift < 64; shift += bits {
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
	return keys
}

// appendSegments adds slot s's segments: under the model, of a week's
// starts at peak P a level w starts min(1, w/P) warm, so between two
// peaks of the samples each executor of level buys the starts per peak of
// every sample whose peak is higher.
func appendSegments(segs []segment, s int, obs []sample, limit int32) []segment {
	// Insertion sort by peak: a slot has a few dozen samples at most.
	for i := 1; i < len(obs); i++ {
		for j := i; j > 0 && obs[j].peak < obs[j-1].peak; j-- {
			obs[j], obs[j-1] = obs[j-1], obs[j]
		}
	}
	var rest float64
	for _, o := range obs {
		rest += o.starts / float64(o.peak)
	}
	var from int32
	for _, o := range obs {
		if to := int32(min(o.peak, uint32(limit))); to > from {
			segs = append(segs, segment{slot: s, from: from, to: to, rate: rest})
			from = to
		}
		rest -= o.starts / float64(o.peak)
	}
	return segs
}

// plan is the least slot-hours that buy share of the history's
// (estimated) starts.
func (d *demand) plan(share float64, limit int32) plan {
	segs, total := d.segments(-1, limit)
	return greedy(segs, total, share)
}

// greedy takes segments in their order (most warm starts per slot-hour
// first) until they buy share of total: since each slot's warm starts
// are concave in its level, that is the least slot-hours that do, but for
// the last executor, which rounds up.
func greedy(segs []segment, total, share float64) plan {
	p := plan{total: total}
	target := min(1, max(0, share)) * p.total
	for _, sg := range segs {
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
	var folds []fold
	for w := range d.starts {
		if d.starts[w] == 0 {
			continue
		}
		f := fold{outTotal: d.starts[w]}
		segs, in := d.segments(w, limit)
		if in == 0 {
			continue
		}
		var levels [SlotsPerWeek]int32
		var inWarm, outWarm float64
		f.inShare, f.outWarm = make([]float64, 0, len(segs)), make([]float64, 0, len(segs))
		for _, sg := range segs {
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
