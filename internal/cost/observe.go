package cost

import (
	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// typeKey identifies a line of the split by node type.
type typeKey struct{ instanceType, capacityType string }

// useKey identifies a line of the split by use.
type useKey struct {
	part             v1alpha1.CostPart
	queryService, ns string
}

// A Rate is how many nodes' worth something holds and what that costs per
// hour.
type Rate struct {
	Nodes          float64
	DollarsPerHour float64
}

func (r *Rate) add(nodes, price float64) {
	r.Nodes += nodes
	r.DollarsPerHour += nodes * price
}

// Rates are what a pool's nodes cost now, split two ways that each add up
// to the whole: by instance type and capacity type, and by use.
type Rates struct {
	byType map[typeKey]Rate
	byUse  map[useKey]Rate
	// price is the hourly price of one node of each type; absent when
	// unknown.
	price map[typeKey]float64
}

// node is what one node holds.
type node struct {
	// shares requested by each QueryService's executors, and by
	// placeholders (key part Warm).
	shares map[useKey]float64
	used   bool
}

// Observe returns what the nodes of the pool spec describes cost now, as
// snap holds them. Every pool node costs, whatever its state, until it is
// gone. A node's time goes to the QueryServices whose executors it holds
// (bound, running or terminating), each by the larger of the shares of the
// node's allocatable CPU and memory its executors request; to Warm for
// what placeholder pods request; and its rest to Warm when it holds
// executors or placeholders (free slots ready for a burst), else to Waste
// (an empty node, launching or awaiting consolidation). An executor holds
// a slot whatever it requests, so its share is at least 1/executorsPerNode
// (an executor that requests nothing does not ride for free); a node that
// reports no allocatable gives each executor or placeholder
// 1/executorsPerNode of it. Shares that add up to more than the node are
// scaled down to it.
func Observe(spec v1alpha1.PoolCapacityParameters, snap capacity.Snapshot, prices Prices) Rates {
	pool := capacity.PoolKey(spec)
	nodes := poolNodes(spec, snap)
	held := make(map[string]*node, len(nodes))
	snap.Pods(pool, func(p *capacity.Pod) bool {
		n, ok := nodes[p.NodeName]
		if !ok || !holds(p) {
			return true
		}
		var k useKey
		sh := share(p, n, spec.ExecutorsPerNode)
		switch {
		case capacity.Matches(spec.ExecutorSelector, p.Labels):
			k = useKey{part: v1alpha1.CostQueryService, queryService: p.Labels[qsv1alpha1.LabelQueryService], ns: p.Namespace}
			sh = max(sh, slot(spec.ExecutorsPerNode))
		case p.Labels[qsv1alpha1.LabelComponent] == qsv1alpha1.ComponentPlaceholder && p.Namespace == spec.Pool.Namespace:
			// The pool's placeholders run in the pool's namespace; a pod
			// elsewhere with their labels is anyone's.
			k = useKey{part: v1alpha1.CostWarm}
		default:
			return true
		}
		h := held[n.Name]
		if h == nil {
			h = &node{shares: map[useKey]float64{}}
			held[n.Name] = h
		}
		h.shares[k] += sh
		h.used = true
		return true
	})

	r := Rates{byType: map[typeKey]Rate{}, byUse: map[useKey]Rate{}, price: map[typeKey]float64{}}
	for name, n := range nodes {
		tk := typeKey{n.Labels[LabelInstanceType], n.Labels[LabelCapacityType]}
		if tk.capacityType == "" {
			tk.capacityType = OnDemand
		}
		price, ok := prices.PerHour(tk.instanceType, tk.capacityType)
		if ok {
			r.price[tk] = price
		}
		t := r.byType[tk]
		t.add(1, price)
		r.byType[tk] = t

		rest, h := 1.0, held[name]
		if h != nil {
			total := 0.0
			for _, s := range h.shares {
				total += s
			}
			scale := 1.0
			if total > 1 {
				scale = 1 / total
			}
			for k, s := range h.shares {
				u := r.byUse[k]
				u.add(s*scale, price)
				r.byUse[k] = u
				rest -= s * scale
			}
		}
		k := useKey{part: v1alpha1.CostWaste}
		if h != nil && h.used {
			k = useKey{part: v1alpha1.CostWarm}
		}
		if rest > 0 {
			u := r.byUse[k]
			u.add(rest, price)
			r.byUse[k] = u
		}
	}
	return r
}

// holds reports whether a pod bound to a node holds its share of it: it
// is pending there, running or terminating. Pods that succeeded or failed
// hold nothing.
func holds(p *capacity.Pod) bool {
	switch p.State {
	case capacity.PodPending, capacity.PodRunning, capacity.PodDeleted:
		return true
	}
	return false
}

// share is the part of node n pod p requests: the larger of its CPU and
// memory shares of n's allocatable, or 1/executorsPerNode when n reports
// no allocatable.
func share(p *capacity.Pod, n *capacity.Node, executorsPerNode int32) float64 {
	if n.AllocatableCPUMillis <= 0 || n.AllocatableMemoryBytes <= 0 {
		return slot(executorsPerNode)
	}
	return max(float64(p.CPUMillis)/float64(n.AllocatableCPUMillis), float64(p.MemoryBytes)/float64(n.AllocatableMemoryBytes))
}

// slot is the share of a node one executor slot is.
func slot(executorsPerNode int32) float64 { return 1 / float64(executorsPerNode) }

// poolNodes are the pool's nodes in snap that its node selector matches,
// by name: the nodes whose time the pool pays for.
func poolNodes(spec v1alpha1.PoolCapacityParameters, snap capacity.Snapshot) map[string]*capacity.Node {
	nodes := map[string]*capacity.Node{}
	snap.Nodes(capacity.PoolKey(spec), func(n *capacity.Node) bool {
		if capacity.Matches(spec.NodeSelector, n.Labels) {
			nodes[n.Name] = n
		}
		return true
	})
	return nodes
}
