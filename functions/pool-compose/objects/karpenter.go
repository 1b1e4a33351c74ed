package objects

import (
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// Karpenter's capacity types.
const (
	CapacitySpot     = "spot"
	CapacityOnDemand = "on-demand"
)

// A spot type set of at least spotMinValuesFrom types asks Karpenter for
// SpotMinValues distinct types in every launch (the requirement's
// minValues).
const (
	spotMinValuesFrom = 3
	SpotMinValues     = 2
)

// NodePoolArgs is everything a pool's Karpenter NodePool is made of.
type NodePoolArgs struct {
	Pool, Namespace string
	NodeClass       NodeClassKind
	Types           []string
	Arch            string
	Spot            bool
	// Taints are the pool taint followed by spec.tolerations as taints.
	Taints []corev1.Taint
	// StartupTaint, when set, is the NodePool's one startup taint
	// (the warming taint, set while warm images are pulled).
	StartupTaint *corev1.Taint
	// NodeSelector labels from spec.nodeSelector become single-value
	// requirements, so the pool's nodes carry them.
	NodeSelector map[string]string
	// Limits are the NodePool's spec.limits (nodePoolLimits).
	Limits map[string]string
	Tuning v1beta1.Karpenter
	// DriftBudgets are the Drifted budgets of the pool's drift windows
	// (decision's driftBudgets); none keeps drift at 0 always.
	DriftBudgets []DriftBudget
}

// DriftBudget is one scheduled Drifted budget of a NodePool: Nodes may be
// disrupted for drift for Duration from each time Schedule (a cron, UTC)
// fires.
type DriftBudget struct {
	Nodes    string
	Schedule string
	Duration string
}

// NodePool returns the pool's karpenter.sh/v1 NodePool.
func NodePool(a NodePoolArgs) *unstructured.Unstructured {
	types := requirement(LabelInstanceType, a.Types...)
	if len(a.Types) >= spotMinValuesFrom {
		// Wide enough to ask Karpenter to keep a choice of types in every
		// launch, so one type's spot shortage does not stall the pool.
		types["minValues"] = int64(SpotMinValues)
	}
	reqs := []any{types}
	autoMode := a.NodeClass == EKSNodeClass
	if !autoMode { // EKS Auto Mode does not support the kubernetes.io/os requirement
		reqs = append(reqs, requirement(LabelOS, "linux"))
	}
	if a.Arch != "" {
		reqs = append(reqs, requirement(LabelArch, a.Arch))
	}
	if a.Spot {
		reqs = append(reqs, requirement(LabelCapacityType, CapacitySpot, CapacityOnDemand))
	} else {
		reqs = append(reqs, requirement(LabelCapacityType, CapacityOnDemand))
	}
	for _, k := range slices.Sorted(maps.Keys(a.NodeSelector)) {
		if k == qsv1alpha1.LabelPool || k == qsv1alpha1.LabelPoolNamespace {
			continue
		}
		reqs = append(reqs, requirement(k, a.NodeSelector[k]))
	}

	tmplSpec := map[string]any{
		"nodeClassRef": map[string]any{
			"group": a.NodeClass.Group,
			"kind":  a.NodeClass.Kind,
			"name":  a.Pool + SuffixNodeClass,
		},
		"requirements": reqs,
		"taints":       cloudpool.TaintList(a.Taints),
	}
	if a.StartupTaint != nil {
		tmplSpec["startupTaints"] = cloudpool.TaintList([]corev1.Taint{*a.StartupTaint})
	}
	// Expiry drains a node whatever its budgets; executors that carry
	// do-not-disrupt keep running for the grace period (lifespan).
	expire, grace := lifespan(autoMode, a.Tuning.ExpireAfter, a.Tuning.TerminationGracePeriod)
	if expire != "" {
		tmplSpec["expireAfter"] = expire
	}
	if grace != "" {
		tmplSpec["terminationGracePeriod"] = grace
	}
	spec := map[string]any{
		"template": map[string]any{
			"metadata": map[string]any{"labels": StringMap(Identity(a.Pool, a.Namespace))},
			"spec":     tmplSpec,
		},
		"limits": StringMap(a.Limits),
		"disruption": map[string]any{
			"consolidationPolicy": "WhenEmpty",
			"consolidateAfter":    a.Tuning.ConsolidateAfter,
			// Empty nodes go; drift drains nodes only in the drift
			// windows (disruptionBudgets).
			"budgets": disruptionBudgets(a.DriftBudgets),
		},
	}
	if a.Tuning.Weight > 0 {
		spec["weight"] = int64(a.Tuning.Weight)
	}
	u := New("karpenter.sh/v1", "NodePool", a.Pool+SuffixNodePool, "", Identity(a.Pool, a.Namespace))
	u.Object["spec"] = spec
	return u
}

// requirement is a NodeSelectorRequirement with operator In.
func requirement(key string, values ...string) map[string]any {
	vs := make([]any, 0, len(values))
	for _, v := range values {
		vs = append(vs, v)
	}
	return map[string]any{"key": key, "operator": "In", "values": vs}
}

// PoolTaints are the pool taint and spec.tolerations turned into taints: a
// toleration without a key (which tolerates everything) has no taint, and
// one without an effect taints NoSchedule.
func PoolTaints(pool, ns string, tols []corev1.Toleration) []corev1.Taint {
	out := cloudpool.IdentityTaints(pool, ns)
	seen := map[string]bool{}
	for _, t := range out {
		seen[t.Key+":"+string(t.Effect)] = true
	}
	for _, t := range tols {
		if t.Key == "" {
			continue
		}
		eff := t.Effect
		if eff == "" {
			eff = corev1.TaintEffectNoSchedule
		}
		id := t.Key + ":" + string(eff)
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: eff})
	}
	return out
}

// Karpenter's disruption reasons (karpenter.sh/v1 NodePool
// spec.disruption.budgets[].reasons).
const (
	reasonEmpty         = "Empty"
	reasonDrifted       = "Drifted"
	reasonUnderutilized = "Underutilized"
)

// disruptionBudgets are a pool NodePool's budgets, one per kind of
// voluntary disruption:
//
//   - Empty: every empty node may go once consolidateAfter has passed; it
//     runs nothing, and the pool launches another when executors need it.
//   - Drifted and Underutilized: none. With a terminationGracePeriod set,
//     Karpenter drains a drifted node even when its pods carry
//     do-not-disrupt and deletes them once the period runs out
//     (karpenter v1.14.1 pkg/controllers/disruption/types.go: drift is
//     the "eventual" class; the NodePool CRD's terminationGracePeriod
//     description). Budgets cannot tell a node with executors from one
//     without, so drift never starts a replacement: a drifted node goes
//     when it is empty (the Empty budget) or when it expires, and the
//     pool's new nodes come from the changed NodeClass or template.
//     Underutilized does not happen under WhenEmpty; its budget says so.
//   - With drift windows (drift): Underutilized 0, and Drifted the windows'
//     budgets while they are open and 0 between them. In a window
//     Karpenter replaces drifted nodes, a window's nodes at a time: empty
//     ones and those holding only placeholders at once; one that runs
//     executors is tainted so no executor lands on it, and goes once they
//     end or terminationGracePeriod runs out (without one, its executors'
//     do-not-disrupt keeps it until they end).
func disruptionBudgets(drift []DriftBudget) []any {
	if len(drift) == 0 {
		return []any{
			map[string]any{"nodes": "100%", "reasons": []any{reasonEmpty}},
			map[string]any{"nodes": "0", "reasons": []any{reasonDrifted, reasonUnderutilized}},
		}
	}
	out := []any{
		map[string]any{"nodes": "100%", "reasons": []any{reasonEmpty}},
		map[string]any{"nodes": "0", "reasons": []any{reasonUnderutilized}},
	}
	for _, b := range drift {
		out = append(out, map[string]any{"nodes": b.Nodes, "reasons": []any{reasonDrifted}, "schedule": b.Schedule, "duration": b.Duration})
	}
	return out
}

// graceNever is the karpenter.terminationGracePeriod that leaves a
// NodePool's terminationGracePeriod unset.
const graceNever = "Never"

// lifespan is a NodePool template's expireAfter and
// terminationGracePeriod ("" leaves a field out): the settings, within
// EKS Auto Mode's node lifetime on Auto Mode.
func lifespan(autoMode bool, expireAfter, grace string) (expire, terminationGrace string) {
	if autoMode {
		return autoModeLifespan(expireAfter, grace)
	}
	if grace == graceNever {
		grace = ""
	}
	return expireAfter, grace
}

// EKS Auto Mode accepts less than the karpenter.sh and EC2 APIs do; these
// are its rules that no CRD carries (AWS, "Create a Node Pool for EKS Auto
// Mode" and "Learn about Amazon EKS Auto Mode Managed instances").
const (
	// autoModeLifetime is the longest an Auto Mode node lives: a NodePool's
	// expireAfter plus its terminationGracePeriod may not exceed 21 days.
	autoModeLifetime = 21 * 24 * time.Hour
	// autoModeTerminationGrace is the terminationGracePeriod Auto Mode
	// defaults a NodePool to; pools set karpenter.terminationGracePeriod,
	// and this when it is Never or leaves less than half the lifetime.
	autoModeTerminationGrace = 24 * time.Hour
)

// autoModeLifespan is the expireAfter and terminationGracePeriod of an
// Auto Mode NodePool: the settings, with the grace period at most half
// autoModeLifetime (autoModeTerminationGrace otherwise) and expireAfter
// shortened so both fit autoModeLifetime (Never always is).
func autoModeLifespan(expireAfter, grace string) (expire, terminationGrace string) {
	g, err := time.ParseDuration(grace)
	if err != nil || g <= 0 || g > autoModeLifetime/2 {
		g = autoModeTerminationGrace
	}
	longest := autoModeLifetime - g
	d, err := time.ParseDuration(expireAfter)
	if expireAfter == "" || err != nil || d > longest {
		return durationString(longest), durationString(g)
	}
	return expireAfter, durationString(g)
}

// durationString writes d as Karpenter's durations are written (480h).
func durationString(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}
