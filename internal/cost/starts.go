package cost

import (
	"sort"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// StartBounds are the upper bounds, in seconds, of the buckets of the
// executors' start times: from a warm slot (about a second) to a node
// launched and an image pulled (a minute or more).
var StartBounds = []float64{1, 2, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300, 600}

// StartSettle is how far behind now CountStarts keeps its watermark, so
// that an executor that ran just before a reconcile but reached the
// provider's view just after it is still counted: the watch delivers a
// change well within it, and it absorbs a few seconds of clock skew
// between the kubelet and the provider.
const StartSettle = 10 * time.Second

// CountStarts returns the executor starts at now, from prev (the current
// status.atProvider.executorStarts, nil when counting begins) and snap.
// Every executor of the pool spec describes, bound to one of its nodes,
// that ran in the window from prev's watermark to now less StartSettle,
// is added to the histogram of its placement: ExistingNode when its node
// was created before it, NewNode otherwise. Its start time is from its
// creation to when it ran, to the second (the API's timestamps). The
// watermark moves to the end of the window only when the window counts
// an executor, so a quiet pool's status is not rewritten; an executor
// that ran in the window is counted by the one status write that moves
// the watermark past it, so once across restarts and failed writes.
//
// changed is false, and prev is returned as is, when nothing was counted.
func CountStarts(prev *v1alpha1.ExecutorStarts, spec v1alpha1.PoolCapacityParameters, snap capacity.Snapshot, now time.Time) (obs *v1alpha1.ExecutorStarts, changed bool) {
	upTo := now.UTC().Add(-StartSettle).Truncate(time.Second)
	if prev == nil {
		return &v1alpha1.ExecutorStarts{CountedUntil: metav1.NewTime(upTo), Since: metav1.NewTime(upTo)}, true
	}
	from := prev.CountedUntil.Time
	if !upTo.After(from) {
		return prev, false
	}
	pool := capacity.PoolKey(spec)
	nodes := poolNodes(spec, snap)
	h := readStarts(prev)
	counted := false
	snap.Pods(pool, func(p *capacity.Pod) bool {
		n, ok := nodes[p.NodeName]
		if !ok || p.Running.IsZero() || !p.Running.After(from) || p.Running.After(upTo) ||
			!capacity.Matches(spec.ExecutorSelector, p.Labels) {
			return true
		}
		pl := v1alpha1.PlacementNewNode
		if n.Created.Before(p.Created) {
			pl = v1alpha1.PlacementExistingNode
		}
		h.observe(pl, max(p.Running.Sub(p.Created), 0).Seconds())
		counted = true
		return true
	})
	if !counted {
		return prev, false
	}
	out := &v1alpha1.ExecutorStarts{CountedUntil: metav1.NewTime(upTo), Since: prev.Since}
	out.ByPlacement = h.write()
	return out, true
}

// histogram is a start-time histogram per placement: counts per bucket of
// StartBounds (not cumulative), the count and the sum.
type histogram map[v1alpha1.Placement]*starts

type starts struct {
	buckets []int64
	count   int64
	sum     float64
}

// readStarts parses o's histograms; a bucket whose bound is not one of
// StartBounds is dropped (status is written only by CountStarts).
func readStarts(o *v1alpha1.ExecutorStarts) histogram {
	h := histogram{}
	for _, p := range o.ByPlacement {
		s := &starts{buckets: make([]int64, len(StartBounds)), count: p.Count, sum: number(p.SumSeconds)}
		var below int64
		for _, b := range p.Buckets {
			i := sort.SearchFloat64s(StartBounds, number(b.UpToSeconds))
			if i < len(StartBounds) && StartBounds[i] == number(b.UpToSeconds) {
				s.buckets[i] = b.Count - below
				below = b.Count
			}
		}
		h[p.Placement] = s
	}
	return h
}

func (h histogram) observe(pl v1alpha1.Placement, seconds float64) {
	s := h[pl]
	if s == nil {
		s = &starts{buckets: make([]int64, len(StartBounds))}
		h[pl] = s
	}
	s.count++
	s.sum += seconds
	if i := sort.SearchFloat64s(StartBounds, seconds); i < len(StartBounds) {
		s.buckets[i]++
	}
}

// write returns h as status lines, ExistingNode first.
func (h histogram) write() []v1alpha1.PlacementStarts {
	out := make([]v1alpha1.PlacementStarts, 0, len(h))
	for _, pl := range []v1alpha1.Placement{v1alpha1.PlacementExistingNode, v1alpha1.PlacementNewNode} {
		s := h[pl]
		if s == nil {
			continue
		}
		p := v1alpha1.PlacementStarts{Placement: pl, Count: s.count, SumSeconds: decimal(s.sum, 3)}
		var cum int64
		for i, n := range s.buckets {
			cum += n
			p.Buckets = append(p.Buckets, v1alpha1.StartBucket{UpToSeconds: strconv.FormatFloat(StartBounds[i], 'f', -1, 64), Count: cum})
		}
		p.P50Seconds = decimal(Quantile(0.5, p), 3)
		out = append(out, p)
	}
	return out
}

// Quantile estimates the q-quantile (0 to 1) of the start times p
// counts, as Prometheus's histogram_quantile does: the bucket the rank
// falls in, by linear interpolation from its lower bound (0 for the
// first); the highest bound when the rank is beyond the buckets; 0 when
// p counts nothing.
func Quantile(q float64, p v1alpha1.PlacementStarts) float64 {
	if p.Count == 0 {
		return 0
	}
	rank := q * float64(p.Count)
	lower, below := 0.0, int64(0)
	for _, b := range p.Buckets {
		upper := number(b.UpToSeconds)
		if float64(b.Count) >= rank && b.Count > below {
			return lower + (upper-lower)*(rank-float64(below))/float64(b.Count-below)
		}
		lower, below = upper, b.Count
	}
	return lower
}
