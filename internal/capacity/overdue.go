package capacity

import (
	"sort"
	"time"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// OverdueSlack is how long past its bound an executor may still carry the
// executor gate, or a Ready pool node the startup taint, before it is
// overdue. The provider releases an executor at ExecutorGateBound and
// opens a node at openAfter, on the reconcile that sees the bound pass;
// the slack covers that reconcile, its patch and the watch bringing the
// change back. Past it, the release or the opening is failing.
const OverdueSlack = 20 * time.Second

// MaxOverdueNodes bounds status.atProvider.overdue.nodeNames.
const MaxOverdueNodes = 10

// overdue is status.atProvider.overdue: the executors waiting at the gate
// that the plan releases now (release.Now) and that were created more than
// ExecutorGateBound + OverdueSlack ago, in the attached QueryServices'
// namespaces only (a pod anyone creates elsewhere with the pool's labels
// moves no counter), and the nodes the plan opens (open) that have been
// closed more than openAfter + OverdueSlack; nil when there are none.
// Executors the plan holds back for the shares of other QueryServices are
// not in release.Now: nothing bounds their wait but those shares.
func overdue(spec v1alpha1.PoolCapacityParameters, waiting []*Pod, release *Release, open []Opening, attachedNS map[string]bool, now time.Time) *v1alpha1.Overdue {
	var o v1alpha1.Overdue
	if release != nil && len(release.Now) > 0 {
		goes := make(map[PodKey]bool, len(release.Now))
		for _, u := range release.Now {
			goes[u.Pod] = true
		}
		for _, p := range waiting {
			if attachedNS[p.Namespace] && goes[p.Key()] && now.Sub(p.Created) > ExecutorGateBound+OverdueSlack {
				o.Executors++
			}
		}
	}
	var late []Opening
	if s := spec.Startup; s != nil {
		for _, op := range open {
			if op.Waited > s.OpenAfter.Duration+OverdueSlack {
				late = append(late, op)
			}
		}
	}
	sort.Slice(late, func(i, j int) bool {
		if late[i].Waited != late[j].Waited {
			return late[i].Waited > late[j].Waited
		}
		return late[i].Node < late[j].Node
	})
	o.Nodes = int32(len(late))
	for _, op := range late[:min(len(late), MaxOverdueNodes)] {
		o.NodeNames = append(o.NodeNames, op.Node)
	}
	if o.Executors == 0 && o.Nodes == 0 {
		return nil
	}
	return &o
}
