package capacity

import (
	"sort"
	"strings"
	"sync"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// degree of the B-trees. Wide nodes keep trees shallow; a write copies the
// nodes on one path.
const degree = 16

// maxGoneNodes bounds how many deleted node names a snapshot remembers to
// tell a lost node from one it never saw.
const maxGoneNodes = 4096

// maxDeparted bounds how many deleted pods that failed a snapshot keeps, so
// that a failure whose pod went before any reconcile saw it still reaches
// the status; the oldest go first.
const maxDeparted = 1024

// A departedPod is the last state of a deleted pod that had failed.
type departedPod struct {
	p   *Pod
	seq uint64
}

func lessDeparted(a, b departedPod) bool { return lessPod(a.p, b.p) }

type podRef struct {
	key  PodKey
	pool string
}

type goneNode struct {
	name string
	seq  uint64
	// rv is the resource version of the deletion, when known.
	rv string
}

// A deletedPod remembers a pod deletion the watch delivered, so that a
// relist read before it does not bring the pod back.
type deletedPod struct {
	key PodKey
	seq uint64
	rv  string
}

func lessDeleted(a, b deletedPod) bool {
	if a.key.Namespace != b.key.Namespace {
		return a.key.Namespace < b.key.Namespace
	}
	return a.key.Name < b.key.Name
}

// newer reports whether resource version a is known to be later than b.
// Versions that cannot be compared are not.
func newer(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c > 0
}

func lessPod(a, b *Pod) bool {
	if c := strings.Compare(a.Pool, b.Pool); c != 0 {
		return c < 0
	}
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c < 0
	}
	return a.Name < b.Name
}

func lessPodRef(a, b podRef) bool {
	if c := strings.Compare(a.key.Namespace, b.key.Namespace); c != 0 {
		return c < 0
	}
	return a.key.Name < b.key.Name
}

func lessNode(a, b *Node) bool {
	if a.Pool != b.Pool {
		return a.Pool < b.Pool
	}
	return a.Name < b.Name
}

func lessNodeRef(a, b *Node) bool { return a.Name < b.Name }

func lessGone(a, b goneNode) bool { return a.name < b.name }

// trees are the copy-on-write B-trees behind a snapshot.
type trees struct {
	// mu serialises Clone, which writes the source tree's copy-on-write
	// context. Reads need no lock.
	mu sync.Mutex

	pods     *btree.BTreeG[*Pod]   // by pool, namespace, name
	podIndex *btree.BTreeG[podRef] // by namespace, name
	nodes    *btree.BTreeG[*Node]  // by pool, name
	nodeIdx  *btree.BTreeG[*Node]  // by name
	gone     *btree.BTreeG[goneNode]
	deleted  *btree.BTreeG[deletedPod]
	departed *btree.BTreeG[departedPod]
	seq      uint64
	version  uint64
}

func newTrees() *trees {
	return &trees{
		pods:     btree.NewG(degree, lessPod),
		podIndex: btree.NewG(degree, lessPodRef),
		nodes:    btree.NewG(degree, lessNode),
		nodeIdx:  btree.NewG(degree, lessNodeRef),
		gone:     btree.NewG(degree, lessGone),
		deleted:  btree.NewG(degree, lessDeleted),
		departed: btree.NewG(degree, lessDeparted),
	}
}

func (t *trees) clone() *trees {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &trees{
		pods:     t.pods.Clone(),
		podIndex: t.podIndex.Clone(),
		nodes:    t.nodes.Clone(),
		nodeIdx:  t.nodeIdx.Clone(),
		gone:     t.gone.Clone(),
		deleted:  t.deleted.Clone(),
		departed: t.departed.Clone(),
		seq:      t.seq,
		version:  t.version,
	}
}

// A Snapshot is an immutable view of one cluster's pool nodes and pool pods,
// grouped by pool. Reads are safe from any number of goroutines, and so are
// the With methods, which return a new snapshot and leave this one as it
// was. The zero Snapshot is empty.
type Snapshot struct {
	t *trees
}

// NewSnapshot returns a snapshot of the given pods and nodes.
func NewSnapshot(pods []*Pod, nodes []*Node) Snapshot {
	b := &Batch{t: newTrees(), pools: map[string]struct{}{}}
	for _, n := range nodes {
		b.UpdateNode(n)
	}
	for _, p := range pods {
		b.Update(p)
	}
	return b.Snapshot()
}

func (s Snapshot) trees() *trees {
	if s.t == nil {
		return emptyTrees
	}
	return s.t
}

var emptyTrees = newTrees()

// Version counts the batches behind this snapshot; it grows with every
// committed batch.
func (s Snapshot) Version() uint64 { return s.trees().version }

// Len returns how many pods and nodes the snapshot holds.
func (s Snapshot) Len() (pods, nodes int) {
	t := s.trees()
	return t.pods.Len(), t.nodes.Len()
}

// Pods calls fn for each pod of pool, by namespace and name, until fn
// returns false. fn must not modify the pod.
func (s Snapshot) Pods(pool string, fn func(*Pod) bool) {
	s.trees().pods.AscendGreaterOrEqual(&Pod{Pool: pool}, func(p *Pod) bool {
		if p.Pool != pool {
			return false
		}
		return fn(p)
	})
}

// Nodes calls fn for each node of pool, by name, until fn returns false. fn
// must not modify the node.
func (s Snapshot) Nodes(pool string, fn func(*Node) bool) {
	s.trees().nodes.AscendGreaterOrEqual(&Node{Pool: pool}, func(n *Node) bool {
		if n.Pool != pool {
			return false
		}
		return fn(n)
	})
}

// Departed calls fn for each deleted pod of pool that had failed when it
// was deleted (its last state), by namespace and name, until fn returns
// false. The snapshot keeps the latest maxDeparted of them.
func (s Snapshot) Departed(pool string, fn func(*Pod) bool) {
	s.trees().departed.AscendGreaterOrEqual(departedPod{p: &Pod{Pool: pool}}, func(d departedPod) bool {
		if d.p.Pool != pool {
			return false
		}
		return fn(d.p)
	})
}

// Pod returns the pod with key k.
func (s Snapshot) Pod(k PodKey) (*Pod, bool) {
	t := s.trees()
	ref, ok := t.podIndex.Get(podRef{key: k})
	if !ok {
		return nil, false
	}
	return t.pods.Get(&Pod{Pool: ref.pool, Namespace: k.Namespace, Name: k.Name})
}

// Node returns the node called name.
func (s Snapshot) Node(name string) (*Node, bool) {
	return s.trees().nodeIdx.Get(&Node{Name: name})
}

// NodeGone reports whether a node called name was in an earlier snapshot and
// has since been deleted.
func (s Snapshot) NodeGone(name string) bool {
	return s.trees().gone.Has(goneNode{name: name})
}

// AllPods returns every pod, by pool, namespace and name.
func (s Snapshot) AllPods() []*Pod {
	t := s.trees()
	out := make([]*Pod, 0, t.pods.Len())
	t.pods.Ascend(func(p *Pod) bool { out = append(out, p); return true })
	return out
}

// AllNodes returns every node, by pool and name.
func (s Snapshot) AllNodes() []*Node {
	t := s.trees()
	out := make([]*Node, 0, t.nodes.Len())
	t.nodes.Ascend(func(n *Node) bool { out = append(out, n); return true })
	return out
}

// Pools returns the pools that have pods or nodes, sorted.
func (s Snapshot) Pools() []string {
	set := map[string]struct{}{}
	t := s.trees()
	t.pods.Ascend(func(p *Pod) bool { set[p.Pool] = struct{}{}; return true })
	t.nodes.Ascend(func(n *Node) bool { set[n.Pool] = struct{}{}; return true })
	return sortedKeys(set)
}

// WithUpdate returns a snapshot in which p replaces any pod with its key.
func (s Snapshot) WithUpdate(p *Pod) Snapshot { return s.with(func(b *Batch) { b.Update(p) }) }

// WithoutPod returns a snapshot without the pod with key k.
func (s Snapshot) WithoutPod(k PodKey) Snapshot { return s.with(func(b *Batch) { b.Delete(k) }) }

// WithNode returns a snapshot in which n replaces any node with its name.
func (s Snapshot) WithNode(n *Node) Snapshot { return s.with(func(b *Batch) { b.UpdateNode(n) }) }

// WithoutNode returns a snapshot without the node called name; the snapshot
// remembers that the node is gone.
func (s Snapshot) WithoutNode(name string) Snapshot {
	return s.with(func(b *Batch) { b.DeleteNode(name) })
}

// with returns the snapshot that edit makes of this one.
func (s Snapshot) with(edit func(*Batch)) Snapshot {
	b := s.Edit()
	edit(b)
	return b.Snapshot()
}

// Replaced returns a snapshot that holds what the relist l read, except
// where this snapshot knows better: a pod or node this snapshot holds at a
// later resource version than the LIST read stays as it is, one created
// after the LIST stays, and one the watch saw deleted after the LIST stays
// deleted. A relist therefore never takes the snapshot back in time. Where
// versions are missing or cannot be compared, the LIST wins. Nodes of this
// snapshot that the result lacks are remembered as gone.
func (s Snapshot) Replaced(l List) Snapshot {
	cur := s.trees()
	b := &Batch{t: newTrees(), pools: map[string]struct{}{}}
	for _, n := range l.Nodes {
		if g, ok := cur.gone.Get(goneNode{name: n.Name}); ok && newer(g.rv, n.ResourceVersion) {
			continue
		}
		if c, ok := cur.nodeIdx.Get(n); ok && newer(c.ResourceVersion, n.ResourceVersion) {
			n = c
		}
		b.UpdateNode(n)
	}
	cur.nodeIdx.Ascend(func(n *Node) bool {
		if !b.t.nodeIdx.Has(n) && newer(n.ResourceVersion, l.NodesVersion) {
			b.UpdateNode(n)
		}
		return true
	})
	for _, p := range l.Pods {
		if d, ok := cur.deleted.Get(deletedPod{key: p.Key()}); ok && newer(d.rv, p.ResourceVersion) {
			continue
		}
		if c, ok := s.Pod(p.Key()); ok && newer(c.ResourceVersion, p.ResourceVersion) {
			p = c
		}
		b.Update(p)
	}
	cur.pods.Ascend(func(p *Pod) bool {
		if !b.t.podIndex.Has(podRef{key: p.Key()}) && newer(p.ResourceVersion, l.PodsVersion) {
			b.Update(p)
		}
		return true
	})

	nt := b.t
	nt.seq, nt.version = cur.seq, cur.version
	nt.gone = cur.gone.Clone()
	cur.nodeIdx.Ascend(func(n *Node) bool {
		if !nt.nodeIdx.Has(n) {
			nt.seq++
			nt.gone.ReplaceOrInsert(goneNode{name: n.Name, seq: nt.seq})
		}
		return true
	})
	nt.nodeIdx.Ascend(func(n *Node) bool {
		nt.gone.Delete(goneNode{name: n.Name})
		return true
	})
	trimGone(nt)
	cur.departed.Ascend(func(d departedPod) bool {
		if !nt.podIndex.Has(podRef{key: d.p.Key()}) {
			nt.departed.ReplaceOrInsert(d)
		}
		return true
	})
	// Deletions the LIST already reflects need no memory any more.
	cur.deleted.Ascend(func(d deletedPod) bool {
		if newer(d.rv, l.PodsVersion) {
			nt.deleted.ReplaceOrInsert(d)
		}
		return true
	})
	return b.Snapshot()
}

// Edit starts a batch of changes on top of this snapshot. The snapshot
// itself does not change.
func (s Snapshot) Edit() *Batch {
	return &Batch{t: s.trees().clone(), pools: map[string]struct{}{}}
}

// A Batch collects changes to a snapshot; Snapshot commits them. A Batch is
// not safe for concurrent use.
type Batch struct {
	t     *trees
	pools map[string]struct{}
	n     int
}

// Len returns how many changes the batch holds.
func (b *Batch) Len() int { return b.n }

// Pools returns the pools the batch touched, sorted.
func (b *Batch) Pools() []string { return sortedKeys(b.pools) }

// Update replaces the pod with p's key by p, or adds p.
func (b *Batch) Update(p *Pod) {
	b.n++
	b.pools[p.Pool] = struct{}{}
	if b.t.departed.Len() > 0 {
		// A new pod of the same name (a StatefulSet's) replaces the record
		// of the old one.
		b.t.departed.Delete(departedPod{p: p})
	}
	// The common case, a pod that stays in its pool, costs one tree write.
	if _, replaced := b.t.pods.ReplaceOrInsert(p); replaced {
		return
	}
	old, had := b.t.podIndex.ReplaceOrInsert(podRef{key: p.Key(), pool: p.Pool})
	if had && old.pool != p.Pool {
		b.pools[old.pool] = struct{}{}
		b.t.pods.Delete(&Pod{Pool: old.pool, Namespace: p.Namespace, Name: p.Name})
	}
}

// Delete removes the pod with key k, if there is one.
func (b *Batch) Delete(k PodKey) { b.deletePod(k, "") }

// deletePod removes the pod with key k, deleted at resource version rv,
// and remembers the deletion.
func (b *Batch) deletePod(k PodKey, rv string) {
	b.n++
	if rv != "" {
		b.t.seq++
		b.t.deleted.ReplaceOrInsert(deletedPod{key: k, seq: b.t.seq, rv: rv})
		trimDeleted(b.t)
	}
	old, had := b.t.podIndex.Delete(podRef{key: k})
	if !had {
		return
	}
	b.pools[old.pool] = struct{}{}
	b.t.pods.Delete(&Pod{Pool: old.pool, Namespace: k.Namespace, Name: k.Name})
}

// UpdateNode replaces the node with n's name by n, or adds n.
func (b *Batch) UpdateNode(n *Node) {
	b.n++
	b.pools[n.Pool] = struct{}{}
	if old, had := b.t.nodeIdx.ReplaceOrInsert(n); had && old.Pool != n.Pool {
		b.pools[old.Pool] = struct{}{}
		b.t.nodes.Delete(old)
	}
	b.t.nodes.ReplaceOrInsert(n)
	if b.t.gone.Len() > 0 {
		b.t.gone.Delete(goneNode{name: n.Name})
	}
}

// Depart removes the pod p was the last state of, as Delete does, and
// keeps that last state among the departed pods when it says the pod
// failed.
func (b *Batch) Depart(p *Pod) {
	b.deletePod(p.Key(), p.ResourceVersion)
	if _, failed := Diagnose(p, false); !failed {
		return
	}
	b.pools[p.Pool] = struct{}{}
	b.t.seq++
	b.t.departed.ReplaceOrInsert(departedPod{p: p, seq: b.t.seq})
	trimOldest(b.t.departed, maxDeparted, func(d departedPod) uint64 { return d.seq })
}

// DeleteNode removes the node called name and remembers it as gone.
func (b *Batch) DeleteNode(name string) { b.deleteNode(name, "") }

// deleteNode removes the node called name, deleted at resource version rv,
// and remembers it as gone.
func (b *Batch) deleteNode(name, rv string) {
	b.n++
	old, had := b.t.nodeIdx.Delete(&Node{Name: name})
	if !had {
		return
	}
	b.pools[old.Pool] = struct{}{}
	b.t.nodes.Delete(old)
	b.t.seq++
	b.t.gone.ReplaceOrInsert(goneNode{name: name, seq: b.t.seq, rv: rv})
	trimGone(b.t)
}

// Snapshot commits the batch and returns the new snapshot. The batch can
// take further changes, which later snapshots see.
func (b *Batch) Snapshot() Snapshot {
	b.t.version++
	return Snapshot{t: b.t.clone()}
}

// trimOldest forgets the oldest half of the entries of t (by seq) once it
// holds more than limit.
func trimOldest[T any](t *btree.BTreeG[T], limit int, seq func(T) uint64) {
	if t.Len() <= limit {
		return
	}
	all := make([]T, 0, t.Len())
	t.Ascend(func(e T) bool { all = append(all, e); return true })
	sort.Slice(all, func(i, j int) bool { return seq(all[i]) < seq(all[j]) })
	for _, e := range all[:len(all)/2] {
		t.Delete(e)
	}
}

func trimGone(t *trees) {
	trimOldest(t.gone, maxGoneNodes, func(g goneNode) uint64 { return g.seq })
}

func trimDeleted(t *trees) {
	trimOldest(t.deleted, maxGoneNodes, func(d deletedPod) uint64 { return d.seq })
}

func sortedKeys(set map[string]struct{}) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
