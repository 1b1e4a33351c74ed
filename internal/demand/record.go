package demand

import (
	"crypto/sha256"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/warmpolicy"
)

// WriteEvery is the least time between two status writes made for the
// history alone: a history that changed while nothing else of the status
// did is written at most once a WriteEvery. A status write made anyway
// (an executor started, a count changed) carries the history with it, so
// the history in status always holds the starts the status counts.
const WriteEvery = time.Minute

// A Memory is what the provider keeps of one pool between reconciles: the
// history it records into, and what of it the status holds. Record
// updates the Memory it is given in place; reconciles of one pool never
// run at once. A Memory holds one History (warmpolicy's bound) and a few
// words.
type Memory struct {
	history *warmpolicy.History
	// since is when the history began.
	since time.Time
	// warm and cold are the executor starts, by placement, the history
	// has recorded: the counts of status.atProvider.executorStarts.
	warm, cold int64
	// dirty says the history changed since it was last encoded
	// (History.Observe says when). Encoding is what costs (a
	// compression), so it is done only then.
	dirty bool
	// written and before are the digests of the last two encodings
	// Record put in status, writtenAt when the last was.
	written, before digest
	writtenAt       time.Time
	// goal is what the recommendation in status was computed for; asked
	// is false until one was, since the Memory was made.
	goal  warmpolicy.Goal
	asked bool
}

// digest identifies an encoded history; the zero digest is no history.
type digest [sha256.Size]byte

func digestOf(d *v1alpha1.DemandHistory) digest {
	if d == nil {
		return digest{}
	}
	return sha256.Sum256([]byte(d.Encoded))
}

// Input is what Record decides from.
type Input struct {
	Spec v1alpha1.PoolCapacityParameters
	// Prev is the status.atProvider the reconcile read; Next is the one
	// it computed so far (capacity.Compute, cost.Account), whose demand
	// and recommendation are still Prev's.
	Prev, Next v1alpha1.PoolCapacityObservation
	Now        time.Time
}

// Output is what Record decided: the status fields to write.
type Output struct {
	Demand         *v1alpha1.DemandHistory
	Recommendation *v1alpha1.WarmRecommendation
	// Reset says why the history in status could not be read and was
	// replaced by an empty one; empty when it was read.
	Reset string
	// Err is a problem of the spec's learned goal: the recommendation
	// in status is kept as it was.
	Err error
}

// Record records one observation of the pool into m's history, and
// returns the history and the recommendation to write and the Memory to
// keep (m, or a new one when m is nil or no longer what the status
// holds). In order:
//
//  1. Load: a Memory is trusted while the status holds one of the last
//     two encodings it wrote (the second: a status read before the last
//     write reached the provider's cache). Otherwise (a new provider, a
//     new leader, a status written by someone else) the history is
//     decoded from the status, and the starts it recorded are the
//     status's counts; a history that cannot be decoded is replaced by
//     an empty one, and Reset says why.
//  2. Observe: the executors the attached QueryServices want now
//     (Wanted), and the executors counted as started since the last
//     observation, by placement (Starts).
//  3. Write: the encoding goes into status when the history changed and
//     the status is written anyway, or holds no history or an unreadable
//     one, or WriteEvery passed since the last write; and when the status
//     lacks the last encoding written (that write failed).
//  4. Recommend: the learned warm level for the spec's goal, when the spec
//     asks for one and the last one is due (recommend.go).
func Record(m *Memory, in Input) (*Memory, Output) {
	now := in.Now.UTC().Truncate(time.Second)
	inStatus := digestOf(in.Prev.Demand)
	m, reset := load(m, in.Prev, inStatus, now)
	var out Output
	out.Reset = reset

	warm, cold := Starts(in.Next.ExecutorStarts)
	dw, dc := max(0, warm-m.warm), max(0, cold-m.cold)
	m.warm, m.cold = max(m.warm, warm), max(m.cold, cold)
	wanted := Wanted(in.Next)
	if m.history.Observe(now, wanted, clamp(dw+dc), clamp(dc)) {
		m.dirty = true
	}

	out.Demand = write(m, in, inStatus, now, reset != "")
	out.Recommendation, out.Err = recommend(m, in, now)
	return m, out
}

// load returns m while the status holds (digest d) what it last wrote,
// else a Memory decoded from the status.
func load(m *Memory, prev v1alpha1.PoolCapacityObservation, d digest, now time.Time) (*Memory, string) {
	if m != nil && (d == m.written || d == m.before) {
		return m, ""
	}
	m = &Memory{since: now, written: d}
	m.warm, m.cold = Starts(prev.ExecutorStarts)
	if prev.Demand == nil {
		m.history = &warmpolicy.History{}
		return m, ""
	}
	h, err := warmpolicy.Decode(prev.Demand.Encoded)
	if err != nil {
		m.history = &warmpolicy.History{}
		return m, fmt.Sprintf("The demand history in status.atProvider.demand is replaced by an empty one, recorded from now (%v); the learned warm level starts again from no history.", err)
	}
	m.history = h
	if !prev.Demand.Since.IsZero() {
		m.since = prev.Demand.Since.UTC()
	}
	return m, ""
}

// write returns the history to put in status (whose history has digest
// inStatus): the new encoding when it is due, else the status's. It is
// due when the history changed and the status is written anyway, holds
// no history or an unreadable one, or was last written WriteEvery ago;
// and at once when the status lacks the last encoding written (a write
// that failed).
func write(m *Memory, in Input, inStatus digest, now time.Time, reset bool) *v1alpha1.DemandHistory {
	behind := inStatus != m.written
	if !m.dirty && !behind {
		return in.Prev.Demand
	}
	due := behind || reset || in.Prev.Demand == nil || othersChange(in.Prev, in.Next) || !now.Before(m.writtenAt.Add(WriteEvery))
	if !due {
		return in.Prev.Demand
	}
	enc := m.history.Encode()
	d := digest(sha256.Sum256([]byte(enc)))
	m.dirty = false
	if d == inStatus {
		m.written = d
		return in.Prev.Demand
	}
	if d != m.written {
		m.before, m.written = m.written, d
	}
	m.writtenAt = now
	return &v1alpha1.DemandHistory{Encoded: enc, Since: metav1.NewTime(m.since), Weeks: int32(m.history.Weeks())}
}

// othersChange reports whether the status changes this reconcile in
// anything but the demand history and the recommendation: whether it is
// written anyway.
func othersChange(prev, next v1alpha1.PoolCapacityObservation) bool {
	prev.Demand, prev.WarmRecommendation = nil, nil
	next.Demand, next.WarmRecommendation = nil, nil
	return !equality.Semantic.DeepEqual(prev, next)
}

// Wanted is the executors the pool is wanted for now: those of the
// attached QueryServices on its nodes and those waiting for a slot
// (status.atProvider.allocations), each QueryService's at most its share
// (maxPoolExecutors) when it has one. Executors of QueryServices that are
// not attached count for nothing: a tenant who may create pods only in
// its own namespace cannot raise another pool's demand. Nor can an
// attached tenant raise the warm slots the platform pays for beyond what
// its share lets it use, by creating executors that can only wait.
func Wanted(o v1alpha1.PoolCapacityObservation) int32 {
	var n int64
	for _, a := range o.Allocations {
		q := int64(a.PoolExecutors) + int64(a.PendingExecutors)
		if a.MaxPoolExecutors > 0 {
			q = min(q, int64(a.MaxPoolExecutors))
		}
		n += q
	}
	return clamp(n)
}

// Starts are the executor starts o counts (status.atProvider
// .executorStarts, classified by the provider's placement), on a node
// that was there before them (warm) and on one launched for them (cold).
func Starts(o *v1alpha1.ExecutorStarts) (warm, cold int64) {
	if o == nil {
		return 0, 0
	}
	for _, p := range o.ByPlacement {
		switch p.Placement {
		case v1alpha1.PlacementExistingNode:
			warm = p.Count
		case v1alpha1.PlacementNewNode:
			cold = p.Count
		}
	}
	return warm, cold
}

func clamp(n int64) int32 {
	return int32(min(max(n, 0), 1<<31-1))
}
