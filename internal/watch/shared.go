package watch

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"

	"github.com/burstpool/burstpool/internal/capacity"
)

// maxShared bounds how many values a sharedTable holds. Once it would
// hold more it forgets them all, so that values no pod holds any longer
// (those of a template replaced by a rollout, or of pods that each carry a
// label of their own) do not accumulate; pods keep the values they were
// given.
const maxShared = 4096

// A sharedTable holds one copy of each value pods repeat, by its content,
// so that a hundred thousand executors of a few templates keep a few
// copies instead of one each. The copies are shared and never modified.
type sharedTable[T any] struct {
	mu    sync.Mutex
	m     map[uint64]T
	equal func(a, b T) bool
}

func newSharedTable[T any](equal func(a, b T) bool) *sharedTable[T] {
	return &sharedTable[T]{m: map[uint64]T{}, equal: equal}
}

// share returns the table's copy of a value equal to v, whose content
// hashes to h; when it holds none, it keeps and returns own(v), a copy of
// v that nothing else refers to.
func (t *sharedTable[T]) share(h uint64, v T, own func(T) T) T {
	t.mu.Lock()
	defer t.mu.Unlock()
	if held, ok := t.m[h]; ok && t.equal(held, v) {
		return held
	}
	out := own(v)
	if len(t.m) >= maxShared {
		clear(t.m)
	}
	t.m[h] = out
	return out
}

var seed = maphash.MakeSeed()

// podLabels shares the label maps of pods: the executors of one template
// carry the same labels.
var podLabels = newSharedTable(maps.Equal[map[string]string])

// sharedLabels returns the shared copy of labels, its keys and values
// interned; nil when there are none.
func sharedLabels(labels map[string]string) map[string]string {
	if len(labels) == 0 {
		return nil
	}
	// The sum of the entries' hashes does not depend on the order the map
	// yields them in.
	var h maphash.Hash
	h.SetSeed(seed)
	var sum uint64
	for k, v := range labels {
		h.Reset()
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
	}
	return podLabels.share(sum, labels, internLabels)
}

// podContainers shares the container lists of pods whose containers all
// run or wait to start without a word of why (no waiting reason, no
// termination): those of the executors of one template are the same.
var podContainers = newSharedTable(slices.Equal[[]capacity.Container])

// sharedContainers returns the shared copy of cs when every container of
// it is plain (no waiting state, no termination), else cs itself.
func sharedContainers(cs []capacity.Container) []capacity.Container {
	var h maphash.Hash
	h.SetSeed(seed)
	for _, c := range cs {
		if c.WaitingReason != "" || c.WaitingMessage != "" || c.Terminated != nil || c.LastTerminated != nil {
			return cs
		}
		h.WriteString(c.Name)
		h.WriteByte(0)
		h.WriteString(c.Image)
		if c.Init {
			h.WriteByte(1)
		}
		h.WriteByte(0)
	}
	return podContainers.share(h.Sum64(), cs, func(cs []capacity.Container) []capacity.Container { return cs })
}
