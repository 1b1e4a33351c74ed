package warmweek

import (
	"container/heap"
	"fmt"
	"slices"
	"time"
)

// Cloud is what the simulated cloud costs in time, from make bench-burst's
// figures (package test/burst).
type Cloud struct {
	// Launch is a new node's launch, creation to Ready.
	Launch time.Duration
	// Pull is the executor image's pull onto a new node: the pool's
	// warmup pulls it before the node opens to executors (the startup
	// taint, docs/capacity.md).
	Pull time.Duration
	// WarmStart is an executor's creation to Running on an open node.
	WarmStart time.Duration
}

// ColdStart is an executor's creation to Running on a node launched for
// it.
func (c Cloud) ColdStart() time.Duration { return c.Launch + c.Pull + c.WarmStart }

// Pool is the simulated pool.
type Pool struct {
	MaxExecutors int32
	// PerNode is executorsPerNode: slots a node.
	PerNode int32
	// ConsolidateAfter is how long an empty node stays (Karpenter's
	// consolidateAfter under consolidationPolicy WhenEmpty, as the pool's
	// NodePool sets it).
	ConsolidateAfter time.Duration
	// SlotDollarsPerHour is what one slot costs an hour: the node's
	// price over PerNode.
	SlotDollarsPerHour float64
}

// Policy is the warm level as the capacity provider and the function
// decide it. Replay calls Observe and then Level at every event, in time
// order.
type Policy interface {
	// Name names the policy in the results.
	Name() string
	// Observe is what the provider sees at now: executors wanted (on the
	// pool's nodes or waiting for one), and the starts and cold starts
	// since the last call.
	Observe(now time.Time, wanted, starts, cold int32)
	// Level is the warm level at now, and the next time it may change
	// without a change of demand (zero: never).
	Level(now time.Time) (level int32, next time.Time)
}

// Result is what a replay measured in its measured week.
type Result struct {
	Policy string
	// Executors started, and how many of them on a node that was there
	// before them (warm).
	Executors, Warm int
	// ToRunning is each executor's time from its request to Running.
	ToRunning []time.Duration
	// WarmSlotHours are the hours of warm slots held (the level less the
	// executors on the pool's nodes, as placeholders), and WarmDollars
	// what they cost.
	WarmSlotHours, WarmDollars float64
	// NodeHours are the hours of every node of the pool, and NodeDollars
	// what they cost: warm slots, executors, and empty nodes waiting for
	// consolidation.
	NodeHours, NodeDollars float64
	// MaxLevel is the highest warm level the policy set.
	MaxLevel int32
}

// WarmShare is the share of executors that started on an existing node.
func (r Result) WarmShare() float64 {
	if r.Executors == 0 {
		return 0
	}
	return float64(r.Warm) / float64(r.Executors)
}

// node is one node of the pool: created, open to executors (Ready and its
// images pulled), its slots held by executors and placeholders.
type node struct {
	created, open  time.Time
	execs, holders int32
	emptySince     time.Time
}

func (n *node) empty() bool { return n.execs+n.holders == 0 }

// ending is an executor that ends at end, on n.
type ending struct {
	end time.Time
	n   *node
}

type endings []ending

func (e endings) Len() int           { return len(e) }
func (e endings) Less(i, j int) bool { return e[i].end.Before(e[j].end) }
func (e endings) Swap(i, j int)      { e[i], e[j] = e[j], e[i] }
func (e *endings) Push(x any)        { *e = append(*e, x.(ending)) }
func (e *endings) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// sim is the state of one replay.
type sim struct {
	cloud        Cloud
	pool         Pool
	from, to     time.Time
	nodes        []*node
	ends         endings
	occupied     int32
	starts, cold int32
	last         time.Time
	beyond       int
	res          Result
}

// tick is how often the provider observes the pool when nothing happens.
const tick = time.Minute

// Replay runs trace (sorted by time) through p on the simulated cloud and
// pool, and measures [from, to). The pool starts empty at the first
// request; demand wanted beyond MaxExecutors waits, as the NodePool's
// limits make it.
func Replay(trace []Request, from, to time.Time, p Policy, c Cloud, pool Pool) (Result, error) {
	if len(trace) == 0 {
		return Result{}, fmt.Errorf("empty trace")
	}
	s := &sim{cloud: c, pool: pool, from: from, to: to, last: trace[0].At, res: Result{Policy: p.Name()}}
	i := 0
	nextTick := trace[0].At
	var nextLevel time.Time
	for now := trace[0].At; now.Before(to); {
		s.account(now)
		s.expire(now)
		for len(s.ends) > 0 && !s.ends[0].end.After(now) {
			e := heap.Pop(&s.ends).(ending)
			e.n.execs--
			s.occupied--
			s.emptied(e.n, e.end)
		}
		for ; i < len(trace) && !trace[i].At.After(now); i++ {
			s.place(trace[i])
		}
		p.Observe(now, s.occupied, s.starts, s.cold)
		s.starts, s.cold = 0, 0
		level, next := p.Level(now)
		level = min(level, pool.MaxExecutors)
		s.res.MaxLevel = max(s.res.MaxLevel, level)
		// The function's placeholders: the warm level less the executors
		// on the pool's nodes (decidePlaceholders,
		// functions/pool-compose/decision/placeholders.go).
		s.hold(now, max(0, level-s.occupied))
		nextLevel = next
		if !nextTick.After(now) {
			nextTick = now.Add(tick)
		}
		// The next event.
		now = nextTick
		if i < len(trace) && trace[i].At.Before(now) {
			now = trace[i].At
		}
		if len(s.ends) > 0 && s.ends[0].end.Before(now) {
			now = s.ends[0].end
		}
		if !nextLevel.IsZero() && nextLevel.Before(now) {
			now = nextLevel
		}
	}
	s.account(to)
	for _, n := range s.nodes {
		s.nodeCost(n, to)
	}
	s.res.WarmDollars = s.res.WarmSlotHours * pool.SlotDollarsPerHour
	s.res.NodeDollars = s.res.NodeHours * pool.SlotDollarsPerHour * float64(pool.PerNode)
	if s.beyond > 0 {
		return s.res, fmt.Errorf("%d executors asked for beyond maxExecutors (%d): raise it for this trace", s.beyond, pool.MaxExecutors)
	}
	return s.res, nil
}

// account adds the warm slots held since the last event, within the
// measured week.
func (s *sim) account(now time.Time) {
	a, b := maxTime(s.last, s.from), minTime(now, s.to)
	if b.After(a) {
		var holders int32
		for _, n := range s.nodes {
			holders += n.holders
		}
		s.res.WarmSlotHours += float64(holders) * b.Sub(a).Hours()
	}
	s.last = now
}

// nodeCost adds n's hours within the measured week, up to gone.
func (s *sim) nodeCost(n *node, gone time.Time) {
	a, b := maxTime(n.created, s.from), minTime(gone, s.to)
	if b.After(a) {
		s.res.NodeHours += b.Sub(a).Hours()
	}
}

// expire removes the nodes empty for ConsolidateAfter by now.
func (s *sim) expire(now time.Time) {
	s.nodes = slices.DeleteFunc(s.nodes, func(n *node) bool {
		if !n.empty() || n.emptySince.IsZero() || n.emptySince.Add(s.pool.ConsolidateAfter).After(now) {
			return false
		}
		s.nodeCost(n, n.emptySince.Add(s.pool.ConsolidateAfter))
		return true
	})
}

func (s *sim) emptied(n *node, at time.Time) {
	if n.empty() {
		n.emptySince = at
	}
}

func (s *sim) filled(n *node) { n.emptySince = time.Time{} }

// place schedules r's executors, each on the first of: a free slot of an
// open node, a placeholder's slot of an open node (preempted), a free or
// placeholder's slot of a node still launching, a new node. An executor
// on a node created before it started warm.
func (s *sim) place(r Request) {
	for range r.Executors {
		if s.occupied >= s.pool.MaxExecutors {
			s.beyond++ // beyond the NodePool's limits
			continue
		}
		n := s.slot(r.At)
		if n == nil {
			n = s.launch(r.At)
		}
		if n.execs+n.holders >= s.pool.PerNode {
			n.holders--
		}
		n.execs++
		s.filled(n)
		s.occupied++
		start := maxTime(r.At, n.open).Add(s.cloud.WarmStart)
		heap.Push(&s.ends, ending{end: start.Add(r.Duration), n: n})
		s.starts++
		warm := n.created.Before(r.At)
		if !warm {
			s.cold++
		}
		if !r.At.Before(s.from) && r.At.Before(s.to) {
			s.res.Executors++
			if warm {
				s.res.Warm++
			}
			s.res.ToRunning = append(s.res.ToRunning, start.Sub(r.At))
		}
	}
}

// slot is the node an executor takes at now, nil when none has room.
func (s *sim) slot(now time.Time) *node {
	var best *node
	rank := func(n *node) int {
		open := !n.open.After(now)
		free := n.execs+n.holders < s.pool.PerNode
		switch {
		case open && free:
			return 4
		case open && n.holders > 0:
			return 3
		case free:
			return 2
		case n.holders > 0:
			return 1
		}
		return 0
	}
	for _, n := range s.nodes {
		if r := rank(n); r > 0 && (best == nil || r > rank(best)) {
			best = n
		}
	}
	return best
}

func (s *sim) launch(now time.Time) *node {
	n := &node{created: now, open: now.Add(s.cloud.Launch + s.cloud.Pull)}
	s.nodes = append(s.nodes, n)
	return n
}

// hold keeps want placeholders: fewer leave nodes still launching first,
// then the newest; more fill free slots, open nodes first, then new nodes.
func (s *sim) hold(now time.Time, want int32) {
	var have int32
	for _, n := range s.nodes {
		have += n.holders
	}
	for have > want {
		// A Deployment scaled down removes pods not yet running first,
		// then the newest.
		var pick *node
		for _, n := range s.nodes {
			if n.holders > 0 && (pick == nil || before(pick, n, now)) {
				pick = n
			}
		}
		pick.holders--
		have--
		s.emptied(pick, now)
	}
	for have < want {
		var pick *node
		for _, n := range s.nodes {
			if n.execs+n.holders < s.pool.PerNode && (pick == nil || !n.open.After(now) && pick.open.After(now)) {
				pick = n
			}
		}
		if pick == nil {
			pick = s.launch(now)
		}
		pick.holders++
		have++
		s.filled(pick)
	}
}

// before tells whether a placeholder on b goes before one on a: b's node
// is still launching and a's is open, or both are alike and b's is newer.
func before(a, b *node, now time.Time) bool {
	aOpen, bOpen := !a.open.After(now), !b.open.After(now)
	if aOpen != bOpen {
		return !bOpen
	}
	return b.created.After(a.created)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
