package capacity

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
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
