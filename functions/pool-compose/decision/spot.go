package decision

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CondSpotDiversified reports whether a pool's spot nodes may come from
// more than one spot market (instance type): on-demand pools and spot
// pools of several types have it True; a spot pool of one type False,
// OneSpotMarket, naming the setting that lets it take more.
const CondSpotDiversified = "SpotDiversified"

// spotCondition is the CondSpotDiversified of a Karpenter pool or a node
// group that launches types (the first the sized one) on spot when spot
// is set.
func spotCondition(in Input, spot bool, types []string) Condition {
	c := Condition{Type: CondSpotDiversified, Status: metav1.ConditionTrue}
	switch {
	case !spot:
		c.Reason, c.Message = "OnDemand", "the pool launches on-demand nodes only"
		return c
	case len(types) > 1:
		c.Reason, c.Message = "SeveralTypes", fmt.Sprintf("the pool's spot nodes may be any of %d types: %s", len(types), strings.Join(types, ", "))
		return c
	}
	c.Status, c.Reason = metav1.ConditionFalse, "OneSpotMarket"
	t := types[0]
	risk := fmt.Sprintf("the pool launches spot nodes of %s only, one spot market: when it has no spot capacity the pool cannot burst, and when it reclaims capacity every spot node of the pool may go at once", t)
	ic := in.Spec.InstanceConfig
	pinned := (ic != nil && ic.InstanceType != "") || in.Spec.InheritNodeConfigFrom != nil
	k := in.Config.Karpenter
	switch {
	case pinned && (k == nil || !k.PinnedTypeStandIns):
		c.Message = fmt.Sprintf("%s; the type is pinned, and %s is off: turn it on to let types of %s's CPU and memory stand in on spot, pin no type, or turn spot off", risk, in.Settings.where("karpenter.pinnedTypeStandIns"), t)
	case pinned:
		c.Message = fmt.Sprintf("%s; the type is pinned and the catalog has no other type of its CPU and memory (%s is on): pin another type or turn spot off", risk, in.Settings.where("karpenter.pinnedTypeStandIns"))
	default:
		c.Message = fmt.Sprintf("%s; no other type of the catalog holds the same executors: set spec.instanceConfig.spotNeighbourGenerations (or %s), name no instanceFamily, or turn spot off", risk, in.Settings.where("karpenter.spotNeighbourGenerations"))
	}
	return c
}
