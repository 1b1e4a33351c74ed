package main

import (
	"maps"
	"slices"
	"strings"
)

// scheduling is where pool pods go: nodes with the pool's name and
// namespace labels (the capacity provider watches only those), and, on
// existing nodes, also
// spec.nodeSelector. Karpenter and managed cloud pools put the label on
// their nodes; on existing nodes a person labels them (the
// NodesProvisioned condition says how).
func (s *state) scheduling() Scheduling {
	sel := maps.Clone(s.in.Spec.NodeSelector)
	if !isKarpenter(s.det.Method) && s.det.Method != methodStatic && s.manageNodePool() {
		// The cloud labels the nodes of a new pool itself: only the labels
		// burstpool puts on them select them.
		sel = ownLabels(sel)
	}
	if len(sel) == 0 && s.static() {
		// Nothing picks existing nodes yet (Pending).
		return Scheduling{Tolerations: tolerationsOf(s.in.Pool, s.in.Namespace, s.in.Spec.Tolerations)}
	}
	if sel == nil {
		sel = map[string]string{}
	}
	// The pool's identity wins over spec.nodeSelector: a pool never
	// selects another pool's nodes.
	maps.Copy(sel, nodeIdentity(s.in.Pool, s.in.Namespace))
	return Scheduling{NodeSelector: sel, Tolerations: tolerationsOf(s.in.Pool, s.in.Namespace, s.in.Spec.Tolerations)}
}

// static tells whether the pool runs on existing nodes.
func (s *state) static() bool {
	return s.det.Method == methodStatic || (!isKarpenter(s.det.Method) && !s.manageNodePool())
}

// selectorString renders a node selector as kubectl's -l argument.
func selectorString(sel map[string]string) string {
	parts := make([]string, 0, len(sel))
	for _, k := range sortedKeys(sel) {
		parts = append(parts, k+"="+sel[k])
	}
	return strings.Join(parts, ",")
}

// cloudDomains own the node labels under them: a node pool cannot set
// them, the cloud or Kubernetes does.
var cloudDomains = []string{"kubernetes.io", "k8s.io", "linode.com", "digitalocean.com", "coreweave.com", "coreweave.cloud"}

// ownLabels are the labels of sel that a node pool may put on its nodes.
func ownLabels(sel map[string]string) map[string]string {
	out := make(map[string]string, len(sel))
	for k, v := range sel {
		domain, _, ok := strings.Cut(k, "/")
		if ok && slices.ContainsFunc(cloudDomains, func(d string) bool { return domain == d || strings.HasSuffix(domain, "."+d) }) {
			continue
		}
		out[k] = v
	}
	return out
}

// manageNodePool tells whether the function emits the cloud's node pool.
func (s *state) manageNodePool() bool {
	if p := s.in.Spec.Provisioning; p != nil && p.ManageNodePool {
		return true
	}
	return s.in.Config.Provisioning != nil && s.in.Config.Provisioning.ManageNodePool
}
