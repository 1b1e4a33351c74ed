package decision

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// decideCoreWeave decides a CoreWeave pool. Without the cluster's
// autoscaler (provisioning.coreWeaveAutoscaling), targetNodes is what the
// pool needs now: nodes for the warm slots
// (the warm level, Facts.WarmLevel) or the running executors, whichever is more, plus the
// pending executors, executorsPerNode to a node; suspended, only the
// running executors' nodes. With it, the autoscaler owns targetNodes
// (coreWeaveAutoscaled). instanceType is immutable, so a new type gets a
// new NodePool, named after it, and the old one stays (as
// rnCloudPoolDraining) until the new one is ready, is then scaled to zero,
// and goes once its nodes are gone.
func decideCoreWeave(in Input, f Facts, cin cloudpool.Input) (string, Outcome) {
	var o Outcome
	var occupied, waiting int64
	if c := f.Capacity; c != nil {
		occupied, waiting = int64(c.OccupiedExecutors), int64(c.PendingExecutors)
	}
	demand := max(int64(f.WarmLevel), occupied) + waiting
	if in.Spec.Suspend {
		demand = occupied
	}
	cin.TargetNodes = int32(min(ceilDiv64(demand, int64(f.PerNode)), int64(cin.MaxNodes)))

	cur := in.Observed[objects.ComposedCloudPool]
	old := in.Observed[objects.ComposedCloudPoolDraining]
	if cur != nil && observed.String(cur, "spec", "instanceType") != cin.InstanceType {
		// The type changed: cur drains, and a new pool takes over.
		old, cur = cur, nil
	}
	if p := in.Config.Provisioning; p != nil && p.CoreWeaveAutoscaling && !in.Spec.Suspend {
		cin = coreWeaveAutoscaled(cin, cur) // disruption.go
	}
	switch {
	case cur != nil:
		cin.Name = observed.String(cur, "metadata", "name")
	case old != nil:
		cin.Name = cin.Pool + "-" + typeSlug(cin.InstanceType) + "-nodepool"
	}
	if old != nil && observed.String(old, "metadata", "name") == cin.Name {
		// Back to the draining pool's own type: it takes over again.
		cur, old = old, nil
	}
	cp, err := cloudpool.Build(cin)
	if err != nil {
		o.Problem = failed("CloudNodePoolIncomplete", err.Error())
		o.preserve(objects.ComposedCloudPool, objects.ComposedCloudPoolDraining)
		return "", o
	}
	ready := cur != nil && cloudpool.CoreWeaveReady(observedConditions(cur))
	o.desire(objects.ComposedCloudPool, cp, ready, true)
	msg := fmt.Sprintf("CoreWeave node pool %s runs %d %s node(s) for %d warm, %d running and %d pending executor(s)",
		cp.GetName(), cin.TargetNodes, cin.InstanceType, f.WarmLevel, occupied, waiting)
	if old != nil {
		u, drain := drain(old, ready)
		if u != nil {
			o.desire(objects.ComposedCloudPoolDraining, u, true, false)
		}
		msg += drain
	}
	o.condition(CondProvisioned, metav1.ConditionTrue, "CloudNodePool", msg)
	return cp.GetName(), o
}

// drain keeps a CoreWeave pool of the previous type until its replacement
// is ready, then asks for zero nodes, and drops it (nil) once it has none.
// The message says which.
func drain(old *structpb.Struct, replacementReady bool) (*unstructured.Unstructured, string) {
	name := observed.String(old, "metadata", "name")
	if replacementReady && observed.Number(observed.Field(old, "status", "currentNodes")) == 0 {
		return nil, fmt.Sprintf("; %s of the previous type has no nodes left and is deleted", name)
	}
	u := &unstructured.Unstructured{Object: observed.Keep(old).AsMap()}
	msg := fmt.Sprintf("; %s of the previous type %s stays until the new pool is ready", name, observed.String(old, "spec", "instanceType"))
	if replacementReady {
		_ = unstructured.SetNestedField(u.Object, int64(0), "spec", "targetNodes")
		// An autoscaled pool would be held at its minNodes: zero is
		// burstpool's to ask, with the autoscaler off.
		_ = unstructured.SetNestedField(u.Object, false, "spec", "autoscaling")
		unstructured.RemoveNestedField(u.Object, "spec", "minNodes")
		msg = fmt.Sprintf("; %s of the previous type %s drains to zero nodes", name, observed.String(old, "spec", "instanceType"))
	}
	return u, msg
}

// observedConditions are an observed object's conditions by type.
func observedConditions(o *structpb.Struct) map[string]cloudpool.Condition {
	out := map[string]cloudpool.Condition{}
	for _, v := range observed.Field(o, "status", "conditions").GetListValue().GetValues() {
		c := v.GetStructValue()
		out[observed.String(c, "type")] = cloudpool.Condition{Status: observed.String(c, "status"), Reason: observed.String(c, "reason")}
	}
	return out
}

// typeSlug turns an instance type into a name part (gd-8xa100.ib becomes
// gd-8xa100-ib).
func typeSlug(t string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, t), "-")
}
