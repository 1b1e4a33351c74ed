package capacity

import (
	"sync"
)

// An Event is one change seen by a watch: a pod or node added or updated,
// or deleted.
type Event struct {
	// Pod or Node is set, not both.
	Pod  *Pod
	Node *Node

	// Deleted removes the pod (by key) or node (by name).
	Deleted bool
}

// A Store holds the current snapshot of one cluster and tells subscribers
// when it changes. Apply and Replace are safe for concurrent use; each
// commits one new snapshot. Current never blocks on writers.
type Store struct {
	mu   sync.Mutex // serialises writers
	cur  Snapshot
	rmu  sync.RWMutex // guards cur for readers
	subs []func(Snapshot, []string)
}

// NewStore returns a store holding an empty snapshot.
func NewStore() *Store { return &Store{} }

// Current returns the current snapshot.
func (s *Store) Current() Snapshot {
	s.rmu.RLock()
	defer s.rmu.RUnlock()
	return s.cur
}

// Subscribe registers fn, called after every commit with the new snapshot
// and the pools whose pods or nodes changed. fn runs on the committing
// goroutine and must not block or call back into the store's writers.
func (s *Store) Subscribe(fn func(snap Snapshot, pools []string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, fn)
}

// Apply commits a batch of events, in order, as one new snapshot.
func (s *Store) Apply(events []Event) {
	if len(events) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.Current().Edit()
	for _, e := range events {
		switch {
		case e.Pod != nil && e.Deleted:
			b.Depart(e.Pod)
		case e.Pod != nil:
			b.Update(e.Pod)
		case e.Node != nil && e.Deleted:
			b.deleteNode(e.Node.Name, e.Node.ResourceVersion)
		case e.Node != nil:
			b.UpdateNode(e.Node)
		}
	}
	s.commit(b.Snapshot(), b.Pools())
}

// A List is what a full relist read: every pool pod and node, and the
// resource versions of the pod and node lists.
type List struct {
	Pods  []*Pod
	Nodes []*Node

	PodsVersion, NodesVersion string
}

// Replace commits a snapshot that holds what the relist l read (see
// Snapshot.Replaced). Every pool of the old or new snapshot counts as
// changed.
func (s *Store) Replace(l List) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.Current()
	next := old.Replaced(l)
	set := map[string]struct{}{}
	for _, p := range old.Pools() {
		set[p] = struct{}{}
	}
	for _, p := range next.Pools() {
		set[p] = struct{}{}
	}
	s.commit(next, sortedKeys(set))
}

func (s *Store) commit(next Snapshot, pools []string) {
	s.rmu.Lock()
	s.cur = next
	s.rmu.Unlock()
	for _, fn := range s.subs {
		fn(next, pools)
	}
}
