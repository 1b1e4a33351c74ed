package capacity

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// MaxUnplaceable bounds status.atProvider.unplaceableExecutors;
// unplaceableCount counts them all.
const MaxUnplaceable = 20

// maxReason bounds the reason of an unplaceable executor: a pod's
// requirements are its owner's to make as long as they like.
const maxReason = 200

// A site is what of a pool node decides which pods it takes: its name, its
// labels and the taints its pods must tolerate.
type site struct {
	name   string
	labels map[string]string
	taints []Taint
}

// A placer tells whether a pod that asks for the pool's nodes (aims) could
// run on one of them were there room. A pod that could not waits for
// nothing the pool can give: a slot freed for it, a share, a warm slot.
//
// The pool's nodes are its current ones: their labels, and their NoSchedule
// and NoExecute taints but the startup taint (spec.startup.taint), which
// every new node carries until it is opened (the pool's own taints are
// aims' to check: the snapshot leaves them out, and so does it the taints
// of a node on its way out). A pool with no node yet has the labels every
// pool node carries, its node selector, and no other taint.
type placer struct {
	sites []site
	// memo holds the verdict for each Aim: pods made from one template
	// share theirs.
	memo map[*Aim]string
}

// newPlacer returns the placer of the pool spec describes, whose current
// nodes are nodes.
func newPlacer(spec v1alpha1.PoolCapacityParameters, nodes []*Node) *placer {
	pl := &placer{memo: map[*Aim]string{}}
	if len(nodes) == 0 {
		pl.sites = []site{{labels: spec.NodeSelector}}
		return pl
	}
	var startup *Taint
	if s := spec.Startup; s != nil && s.Taint.Key != "" {
		t := startupTaint(s)
		startup = &t
	}
	pl.sites = make([]site, 0, len(nodes))
	for _, n := range nodes {
		s := site{name: n.Name, labels: n.Labels, taints: n.Taints}
		if startup != nil && slices.Contains(n.Taints, *startup) {
			s.taints = slices.DeleteFunc(slices.Clone(n.Taints), func(t Taint) bool { return t == *startup })
		}
		pl.sites = append(pl.sites, s)
	}
	return pl
}

// unplaceable returns why a pod of Aim a could run on no pool node; empty
// when it could on one.
func (pl *placer) unplaceable(a *Aim) string {
	if why, ok := pl.memo[a]; ok {
		return why
	}
	why := pl.why(a)
	pl.memo[a] = why
	return why
}

// why checks, in the order the scheduler filters nodes, the node
// selector, the required node affinity and the taints, and names the
// first that rules out every pool node.
func (pl *placer) why(a *Aim) string {
	selected := make([]site, 0, len(pl.sites))
	for _, s := range pl.sites {
		if matches(a.NodeSelector, s.labels) {
			selected = append(selected, s)
		}
	}
	if len(selected) == 0 {
		return bounded("nodeSelector " + selectorMiss(a.NodeSelector, pl.sites) + " matches no pool node")
	}
	if a.Affinity != nil {
		affine := selected[:0:0]
		for _, s := range selected {
			if slices.ContainsFunc(a.Affinity, func(t Term) bool { return t.holds(s) }) {
				affine = append(affine, s)
			}
		}
		if len(affine) == 0 {
			return bounded("required node affinity " + affinityMiss(a.Affinity, selected) + "matches no pool node")
		}
		selected = affine
	}
	for _, s := range selected {
		if tolerated(a.Tolerations, s.taints) {
			return ""
		}
	}
	for _, t := range selected[0].taints {
		if !tolerated(a.Tolerations, []Taint{t}) {
			return bounded("does not tolerate the taint " + t.String() + " of the pool nodes it selects")
		}
	}
	return bounded("does not tolerate the taints of the pool nodes it selects")
}

// selectorMiss names the first (by key) label of sel that no site
// carries, or all of sel when each is on some site but no site has all.
func selectorMiss(sel map[string]string, sites []site) string {
	keys := slices.Sorted(maps.Keys(sel))
	for _, k := range keys {
		if !slices.ContainsFunc(sites, func(s site) bool { v, ok := s.labels[k]; return ok && v == sel[k] }) {
			return k + "=" + sel[k]
		}
	}
	pairs := make([]string, 0, len(keys))
	for _, k := range keys {
		pairs = append(pairs, k+"="+sel[k])
	}
	return strings.Join(pairs, ",")
}

// affinityMiss names, when the affinity has one term, its first
// requirement that no site meets, followed by a space; empty otherwise.
func affinityMiss(terms []Term, sites []site) string {
	if len(terms) != 1 {
		return ""
	}
	for _, r := range terms[0] {
		if !slices.ContainsFunc(sites, r.holds) {
			return r.String() + " "
		}
	}
	return ""
}

// bounded cuts a reason to maxReason bytes.
func bounded(s string) string {
	if len(s) <= maxReason {
		return s
	}
	return s[:maxReason-3] + "..."
}

// pins reports whether term t requires the label k to be v: an In
// requirement on k with v as its one value.
func (t Term) pins(k, v string) bool {
	return slices.ContainsFunc(t, func(r Requirement) bool {
		return !r.Field && r.Key == k && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 && r.Values[0] == v
	})
}

// holds reports whether every requirement of t holds of s; a term without
// requirements matches no node.
func (t Term) holds(s site) bool {
	if len(t) == 0 {
		return false
	}
	for _, r := range t {
		if !r.holds(s) {
			return false
		}
	}
	return true
}

// holds is Kubernetes' node selector requirement matching
// (k8s.io/component-helpers/scheduling/corev1/nodeaffinity): a field
// requirement reads metadata.name, which a node the pool has yet to launch
// has not.
func (r Requirement) holds(s site) bool {
	var v string
	var ok bool
	switch {
	case !r.Field:
		v, ok = s.labels[r.Key]
	case r.Key == "metadata.name":
		v, ok = s.name, s.name != ""
	default:
		return false
	}
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return have > want
		}
		return have < want
	}
	return false
}

// String returns the requirement as "key Op [values]".
func (r Requirement) String() string {
	switch r.Operator {
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		return r.Key + " " + string(r.Operator)
	}
	return r.Key + " " + string(r.Operator) + " [" + strings.Join(r.Values, ",") + "]"
}

// String returns the taint as key=value:Effect.
func (t Taint) String() string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

// unplaceables sorts the unplaceable executors and keeps the first
// MaxUnplaceable; the count counts them all.
func unplaceables(list []v1alpha1.UnplaceableExecutor) ([]v1alpha1.UnplaceableExecutor, int32) {
	return firstByPod(list, MaxUnplaceable, func(u v1alpha1.UnplaceableExecutor) PodKey { return PodKey{u.Namespace, u.Pod} })
}
