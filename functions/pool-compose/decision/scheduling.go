package decision

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// scheduling is where pool pods go: nodes with the pool's name and
// namespace labels (the capacity provider watches only those), and, when
// the pool runs on existing nodes (existing, Facts.Static), also
// spec.nodeSelector. Karpenter and managed cloud pools put the label on
// their nodes; on existing nodes a person labels them (the
// NodesProvisioned condition says how).
func scheduling(in Input, det Detection, existing bool) objects.Scheduling {
	sel := maps.Clone(in.Spec.NodeSelector)
	if !existing && !isKarpenter(det.Method) {
		// The cloud labels the nodes of a new pool itself: only the labels
		// burstpool puts on them select them.
		sel = ownLabels(sel)
	}
	tolerations := tolerationsOf(in.Pool, in.Namespace, in.Spec.Tolerations)
	if det.Method == methodNodeGroup && det.Cloud == cloudAzure && spotEnabled(in) {
		// AKS taints every node of a Spot node pool (cloudpool.AKSSpotTaint).
		t := cloudpool.AKSSpotTaint
		tolerations = append(tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect})
	}
	if len(sel) == 0 && existing {
		// Nothing picks existing nodes yet (Pending).
		return objects.Scheduling{Tolerations: tolerations}
	}
	if sel == nil {
		sel = map[string]string{}
	}
	// The pool's identity wins over spec.nodeSelector: a pool never
	// selects another pool's nodes.
	maps.Copy(sel, objects.Identity(in.Pool, in.Namespace))
	return objects.Scheduling{NodeSelector: sel, Tolerations: tolerations}
}

// spotEnabled tells whether the pool asks for spot nodes.
func spotEnabled(in Input) bool {
	return in.Spec.InstanceConfig != nil && in.Spec.InstanceConfig.SpotEnabled
}

// isStatic tells whether the pool runs on existing nodes.
func isStatic(in Input, det Detection) bool {
	return det.Method == methodStatic || (!isKarpenter(det.Method) && det.Method != methodNodeGroup && !manageNodePool(in))
}

// selectorString renders a node selector as kubectl's -l argument.
func selectorString(sel map[string]string) string {
	parts := make([]string, 0, len(sel))
	for _, k := range slices.Sorted(maps.Keys(sel)) {
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
func manageNodePool(in Input) bool {
	if p := in.Spec.Provisioning; p != nil && p.ManageNodePool {
		return true
	}
	return in.Config.Provisioning != nil && in.Config.Provisioning.ManageNodePool
}

// tolerationsOf converts the Pool's tolerations, with those of the pool's
// identity taints first.
func tolerationsOf(pool, ns string, ts []poolv1alpha1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range cloudpool.IdentityTaints(pool, ns) {
		out = append(out, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect})
	}
	own := len(out)
	for _, t := range ts {
		ct := corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
			Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds,
		}
		if slices.Contains(out[:own], ct) {
			continue
		}
		out = append(out, ct)
	}
	return out
}
