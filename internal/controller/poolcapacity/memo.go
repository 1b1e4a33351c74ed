package poolcapacity

import (
	"sync"
	"time"

	"github.com/burstpool/burstpool/internal/capacity"
)

// A memo remembers, per PoolCapacity, what an actuator last applied to its
// cluster and when, so that a reconcile writes only what changed (and
// again after a while, in case it was undone). It is shared by every
// reconcile and safe for concurrent use; reconciles of one PoolCapacity
// never run at once, so a get and the set that follows it see no other
// write for that PoolCapacity.
type memo[T any] struct {
	mu   sync.Mutex
	last map[string]applied[T]
}

// applied is what was applied, and when.
type applied[T any] struct {
	value T
	at    time.Time
}

func newMemo[T any]() *memo[T] { return &memo[T]{last: map[string]applied[T]{}} }

// get returns what was last applied for the PoolCapacity named pc; ok is
// false when nothing was since the provider started.
func (m *memo[T]) get(pc string) (a applied[T], ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok = m.last[pc]
	return a, ok
}

// set remembers v as applied for pc at at.
func (m *memo[T]) set(pc string, v T, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last[pc] = applied[T]{value: v, at: at}
}

// forget drops what is remembered of a deleted PoolCapacity.
func (m *memo[T]) forget(pc string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.last, pc)
}

// reassert is how long something applied is trusted: after it, the same
// thing is applied again, so that a value changed by hand or lost to a
// restore comes back.
const reassert = time.Minute

// A gateState is what was last done about a PoolCapacity's executor
// gate: the gate applied (nil: removed), or why it could not be.
type gateState struct {
	gate *capacity.ExecutorGate
	// unavailable is the reason the last apply could not be made, reported
	// once per change.
	unavailable string
}
