package capacity

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// MaxOpenedCold bounds status.atProvider.openedCold.
const MaxOpenedCold = 10

// An Opening is a pool node to open to executors: its startup taint is
// removed.
type Opening struct {
	Node  string
	Taint Taint
	// Cold lists the warm images not on the node: it is opened at the
	// bound, not because it is warm. Empty for a warm node.
	Cold []string
	// Waited is how long the node waited, from its creation.
	Waited time.Duration
}

// Message says why the node is opened, for events.
func (o Opening) Message() string {
	if len(o.Cold) == 0 {
		return fmt.Sprintf("Opened pool node %s to executors: every warm image is on it (%s after it was created).", o.Node, o.Waited.Round(time.Second))
	}
	return fmt.Sprintf("Opened pool node %s to executors after %s without these warm images on it: %s. Executors placed there pull them first; see the warmup pods on the node and the pool's warmupFailures.",
		o.Node, o.Waited.Round(time.Second), strings.Join(o.Cold, ", "))
}

// An Ungate is a placeholder pod whose scheduling gate is removed, so that
// it holds a warm slot.
type Ungate struct {
	Pod  PodKey
	UID  string
	Gate string
}

// startupTaint is the Startup's taint as the snapshot holds it.
func startupTaint(s *v1alpha1.Startup) Taint {
	return Taint{Key: s.Taint.Key, Value: s.Taint.Value, Effect: string(s.Taint.Effect)}
}

// openings decides which of the pool's warming nodes (those that carry the
// startup taint) to open: a node is opened when a running warmup pod of
// every warm image is on it, or once it is older than openAfter. A node
// not Ready or being deleted waits: its pods cannot run yet, or it is
// going. warming counts the nodes that stay closed.
func openings(spec v1alpha1.PoolCapacityParameters, snap Snapshot, pool string, now time.Time) (open []Opening, warming int32) {
	s := spec.Startup
	if s == nil || s.Taint.Key == "" {
		return nil, 0
	}
	taint := startupTaint(s)
	// warm[node] holds the images a running warmup pod of the pool's
	// namespace has pulled there.
	warm := map[string]map[string]bool{}
	snap.Pods(pool, func(p *Pod) bool {
		if p.State != PodRunning || p.NodeName == "" || p.Image == "" || p.Namespace != spec.Pool.Namespace ||
			len(spec.WarmupSelector) == 0 || !matches(spec.WarmupSelector, p.Labels) {
			return true
		}
		if warm[p.NodeName] == nil {
			warm[p.NodeName] = map[string]bool{}
		}
		warm[p.NodeName][p.Image] = true
		return true
	})
	snap.Nodes(pool, func(n *Node) bool {
		if !matches(spec.NodeSelector, n.Labels) || !slices.Contains(n.Taints, taint) {
			return true
		}
		var cold []string
		for _, img := range s.Images {
			if !warm[n.Name][img] {
				cold = append(cold, img)
			}
		}
		waited := now.Sub(n.Created)
		switch {
		case !n.Ready || n.Deleting:
			warming++
		case len(cold) == 0:
			open = append(open, Opening{Node: n.Name, Taint: taint, Waited: waited})
		case waited >= s.OpenAfter.Duration:
			open = append(open, Opening{Node: n.Name, Taint: taint, Waited: waited, Cold: cold})
		default:
			warming++
		}
		return true
	})
	return open, warming
}

// openedCold is the new status.atProvider.openedCold: the nodes opened
// cold now, then those prev lists whose nodes are still in the pool,
// newest first, at most MaxOpenedCold.
func openedCold(open []Opening, prev []v1alpha1.ColdNode, snap Snapshot, pool string, now time.Time) []v1alpha1.ColdNode {
	present := map[string]bool{}
	snap.Nodes(pool, func(n *Node) bool {
		present[n.Name] = true
		return true
	})
	var out []v1alpha1.ColdNode
	listed := map[string]bool{}
	for _, o := range open {
		if len(o.Cold) > 0 {
			out = append(out, v1alpha1.ColdNode{Node: o.Node, Images: o.Cold, OpenedAt: metav1.NewTime(now)})
			listed[o.Node] = true
		}
	}
	for _, c := range prev {
		if present[c.Node] && !listed[c.Node] {
			out = append(out, c)
			listed[c.Node] = true
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].OpenedAt.After(out[j].OpenedAt.Time) })
	if len(out) > MaxOpenedCold {
		out = out[:MaxOpenedCold]
	}
	return out
}

// warmPods is what the pool's warm slots are decided from, counted in one
// pass over its pods.
type warmPods struct {
	// wanted is how many warm slots the pool wants held now: its slots
	// less the executors that occupy a slot or wait unbound for the
	// pool's nodes, which a free slot is about to take. An unbound pod
	// counts only in the namespace of an attached QueryService, as
	// Compute counts executors (counts): anyone may create pods with the
	// pool's labels in a namespace of their own, and they must not empty
	// another tenant's warm slots.
	wanted int32
	// held counts the placeholders that hold a warm slot: bound, or
	// pending without the gate; terminating ones do not. Placeholders run
	// in the pool's namespace: a pod with their labels elsewhere is
	// anyone's.
	held int32
	// gated lists the placeholders still gated.
	gated []*Pod
	// leaving counts the pool's executors and placeholders terminating on
	// a pool node. They hold no slot, but their node's room is not free
	// until they are gone: a buffer that asked for it at once would have
	// the autoscaler see it short and launch a node for it.
	leaving int32
}

// countWarmPods counts the pool's pods for its warm slots; poolNodes and
// attachedNS are Compute's pool nodes and the namespaces of the attached
// QueryServices.
func countWarmPods(spec v1alpha1.PoolCapacityParameters, snap Snapshot, pool string, occupied int32, poolNodes, attachedNS map[string]bool) warmPods {
	w := spec.WarmSlots
	c := warmPods{wanted: w.Slots - occupied}
	snap.Pods(pool, func(p *Pod) bool {
		executor := matches(spec.ExecutorSelector, p.Labels)
		placeholder := !executor && len(w.Selector) > 0 && p.Namespace == spec.Pool.Namespace && matches(w.Selector, p.Labels)
		_, onPool := poolNodes[p.NodeName]
		switch {
		case !executor && !placeholder:
		case p.State == PodDeleted:
			if onPool {
				c.leaving++
			}
		case executor:
			if p.NodeName == "" && p.State == PodPending && attachedNS[p.Namespace] && aims(spec, p.Aim) {
				c.wanted--
			}
		case p.State != PodPending && p.State != PodRunning:
		case w.Gate != "" && slices.Contains(p.Gates, w.Gate):
			c.gated = append(c.gated, p)
		default:
			c.held++
		}
		return true
	})
	c.wanted = max(0, c.wanted)
	return c
}

// ungates decides which gated placeholder pods to release: as many as the
// pool wants warm slots beyond those held. A placeholder an executor just
// preempted is recreated gated by its ReplicaSet, and stays gated while
// the executor that took its slot counts, until the pool lowers the
// placeholders' replicas and the ReplicaSet removes it (unscheduled pods
// first). The oldest gated placeholders go first.
func ungates(spec v1alpha1.PoolCapacityParameters, c warmPods) []Ungate {
	w := spec.WarmSlots
	if len(w.Selector) == 0 || w.Gate == "" || spec.Suspend {
		return nil
	}
	want := c.wanted - c.held
	gated := c.gated
	if want <= 0 || len(gated) == 0 {
		return nil
	}
	sort.Slice(gated, func(i, j int) bool {
		if !gated[i].Started.Equal(gated[j].Started) {
			return gated[i].Started.Before(gated[j].Started)
		}
		return gated[i].Name < gated[j].Name
	})
	out := make([]Ungate, 0, min(int(want), len(gated)))
	for _, p := range gated[:min(int(want), len(gated))] {
		out = append(out, Ungate{Pod: p.Key(), UID: p.UID, Gate: w.Gate})
	}
	return out
}

// A BufferScale is the replica count the pool's CapacityBuffer is kept at.
type BufferScale struct {
	Namespace, Name string
	Replicas        int32
}

// bufferScale decides the pool's CapacityBuffer replicas: the slots the
// pool wants less those placeholders still hold and the room pods leaving
// still take, while the buffer holds them; 0 while it does not or the
// pool is suspended. Lowering them as soon as an executor is created,
// bound or not, narrows the time in which an autoscaler sees the buffer
// short and restores on a new node the room the executor took, a node the
// pool would give back a moment later; counting the placeholders keeps the
// buffer from asking for slots placeholders hold until they go, when it
// takes over from them.
func bufferScale(spec v1alpha1.PoolCapacityParameters, c warmPods) *BufferScale {
	b := spec.WarmSlots.CapacityBuffer
	if b == nil || b.Name == "" {
		return nil
	}
	out := &BufferScale{Namespace: spec.Pool.Namespace, Name: b.Name}
	if b.Holds && !spec.Suspend {
		out.Replicas = max(0, c.wanted-c.held-c.leaving)
	}
	return out
}

// ExecutorGateBound is the longest a new executor waits at the executor
// gate for the buffer's autoscaler: past it the executor is released
// whether or not the autoscaler has seen the lower count, so that an
// autoscaler that is slow or gone delays a burst by at most this much.
const ExecutorGateBound = 10 * time.Second

// waitingGate is the gate executors wait at: the spec's executor gate, or
// the well-known one when the spec names none (any longer), so that
// executors gated before the pool stopped holding any back are still
// released.
func waitingGate(spec v1alpha1.PoolCapacityParameters) string {
	if g := spec.ExecutorGate; g != "" {
		return g
	}
	return qsv1alpha1.GateExecutor
}

// bufferHolds tells whether a CapacityBuffer holds the pool's warm slots.
func bufferHolds(spec v1alpha1.PoolCapacityParameters) bool {
	return spec.WarmSlots != nil && spec.WarmSlots.CapacityBuffer != nil && spec.WarmSlots.CapacityBuffer.Holds && !spec.Suspend
}

// sharesEnforced tells whether the pool evicts executors above their
// QueryService's share: the policy is on and some share is set.
func sharesEnforced(spec v1alpha1.PoolCapacityParameters) bool {
	return spec.Policies.EnforceShares && !spec.Suspend &&
		slices.ContainsFunc(spec.QueryServices, func(q v1alpha1.AttachedQueryService) bool { return q.MaxPoolExecutors > 0 })
}

// An ExecutorGate says which new pods the admission policy gates for the
// pool: those created with every Selector label in one of Namespaces.
type ExecutorGate struct {
	Gate       string
	Namespaces []string
	Selector   map[string]string
}

// gateBinding decides the pool's executor gate: while the spec names one
// and the pool may hold executors back (a buffer holds its warm slots, or
// its shares are enforced), executors created in the attached
// QueryServices' namespaces are gated; otherwise (nil) none are. Only
// those namespaces: an executor elsewhere takes no warm slot and has no
// share, and a gate there would only delay it.
func gateBinding(spec v1alpha1.PoolCapacityParameters, attachedNS map[string]bool) *ExecutorGate {
	if spec.ExecutorGate == "" || len(attachedNS) == 0 || (!bufferHolds(spec) && !sharesEnforced(spec)) {
		return nil
	}
	ns := make([]string, 0, len(attachedNS))
	for n := range attachedNS {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return &ExecutorGate{Gate: spec.ExecutorGate, Namespaces: ns, Selector: spec.ExecutorSelector}
}

// A Release is the pool's executors waiting at the executor gate that may
// go, and when.
type Release struct {
	// Now are released at once: nothing holds them back (or not any
	// longer), or they have waited ExecutorGateBound for the buffer.
	Now []Ungate
	// Buffered are released once the buffer's autoscaler reports at most
	// Buffer.Replicas, the count that leaves their slots to them.
	Buffered []Ungate
	Buffer   *BufferScale
	// Until is when the first of Buffered reaches ExecutorGateBound.
	Until time.Time
}

// releases decides when the executors at the gate go; nil when none may
// go now.
//
// Shares first: an executor whose QueryService is at or above its share
// stays while QueryServices below theirs have executors waiting that the
// pool has no free slot for, the case in which the pool evicts for them
// (overShare). Released, it would take the slot an eviction just freed for
// a waiter (a ReplicaSet replaces an evicted executor at once, and the
// scheduler tries a new pod before one in backoff), and be evicted in
// turn. It goes as soon as the waiters are placed: nothing bounds it but
// the waiters' own share.
//
// Then the buffer: an executor counts against the buffer's replicas from
// its creation (countWarmPods), so the count bufferScale applies already
// leaves its slot; it waits only until the autoscaler has seen that count,
// or ExecutorGateBound, because an executor that takes the slot before
// then has the autoscaler restore the slot's room on a new node.
func releases(spec v1alpha1.PoolCapacityParameters, waiting []*Pod, buffer *BufferScale, attachedNS map[string]bool, sharesHold func(*Pod) bool, now time.Time) *Release {
	if len(waiting) == 0 {
		return nil
	}
	gate := waitingGate(spec)
	buffered := spec.ExecutorGate != "" && buffer != nil && bufferHolds(spec)
	shares := spec.ExecutorGate != "" && sharesEnforced(spec)
	r := &Release{}
	for _, p := range waiting {
		u := Ungate{Pod: p.Key(), UID: p.UID, Gate: gate}
		until := p.Created.Add(ExecutorGateBound)
		switch {
		case !attachedNS[p.Namespace]:
			r.Now = append(r.Now, u)
		case shares && sharesHold(p):
		case buffered && now.Before(until):
			r.Buffered = append(r.Buffered, u)
			if r.Until.IsZero() || until.Before(r.Until) {
				r.Until = until
			}
		default:
			r.Now = append(r.Now, u)
		}
	}
	if len(r.Now) == 0 && len(r.Buffered) == 0 {
		return nil
	}
	if len(r.Buffered) > 0 {
		r.Buffer = buffer
	}
	sortUngates(r.Now)
	sortUngates(r.Buffered)
	return r
}

func sortUngates(us []Ungate) {
	sort.Slice(us, func(i, j int) bool {
		if us[i].Pod.Namespace != us[j].Pod.Namespace {
			return us[i].Pod.Namespace < us[j].Pod.Namespace
		}
		return us[i].Pod.Name < us[j].Pod.Name
	})
}
