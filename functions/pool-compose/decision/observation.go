package decision

import (
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// CapacityObservation is the status.atProvider of a PoolCapacity, in the
// capacity provider's own type so the two cannot drift apart.
type CapacityObservation struct {
	capv1alpha1.PoolCapacityObservation `json:",inline"`
}

// WarmupFailure is an image that failed to warm on some pool nodes.
type WarmupFailure = capv1alpha1.WarmupFailure

// observeCapacity reads an observed PoolCapacity's status.atProvider; a
// missing or unreadable one observes nothing.
func observeCapacity(u *structpb.Struct) *CapacityObservation {
	ap := observed.Field(u, "status", "atProvider").GetStructValue()
	if ap == nil {
		return nil
	}
	m := ap.AsMap()
	o := &CapacityObservation{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, o); err != nil {
		return nil
	}
	return o
}

// Staleness is why an observed PoolCapacity's figures are not current:
// its Stale condition is True (its watch of the pool's cluster fell
// behind) or its Ready condition is False (it cannot reach the cluster).
type Staleness struct {
	// Since is when the figures were last known current: the
	// PoolCapacity's status.atProvider.lastObservedTime, else when the
	// condition turned.
	Since string
	// Condition is the PoolCapacity's condition that says so.
	Condition metav1.Condition
}

// capacityStaleness reads whether an observed PoolCapacity's figures are
// current; nil when they are, or when it has none.
func capacityStaleness(u *structpb.Struct) *Staleness {
	if u == nil {
		return nil
	}
	c := observed.Condition(u, "Stale")
	if c.Status != "True" {
		if c = observed.Condition(u, "Ready"); c.Status != "False" {
			return nil
		}
	}
	since := observed.String(u, "status", "atProvider", "lastObservedTime")
	if since == "" {
		since = conditionTime(u, c.Type)
	}
	return &Staleness{Since: since, Condition: c}
}

// conditionTime is the lastTransitionTime of an observed object's
// condition of type t.
func conditionTime(o *structpb.Struct, t string) string {
	for _, c := range observed.Field(o, "status", "conditions").GetListValue().GetValues() {
		if cs := c.GetStructValue(); observed.String(cs, "type") == t {
			return observed.String(cs, "lastTransitionTime")
		}
	}
	return ""
}

// executorFailures counts the observed failures by reason, in the order of
// capv1alpha1.FailureReasons.
func (o *CapacityObservation) executorFailures() []poolv1alpha1.ExecutorFailureCount {
	if o == nil || len(o.Failures) == 0 {
		return nil
	}
	n := map[capv1alpha1.FailureReason]int32{}
	for _, f := range o.Failures {
		n[f.Reason]++
	}
	var out []poolv1alpha1.ExecutorFailureCount
	for _, r := range capv1alpha1.FailureReasons {
		if n[r] > 0 {
			out = append(out, poolv1alpha1.ExecutorFailureCount{Reason: string(r), Count: n[r]})
		}
	}
	return out
}

// unauthorizedExecutors turns the observed unauthorized executors into
// status.
func (o *CapacityObservation) unauthorizedExecutors() []poolv1alpha1.UnauthorizedExecutor {
	if o == nil {
		return nil
	}
	return convertAll(o.UnauthorizedExecutors, func(u capv1alpha1.UnauthorizedExecutor) poolv1alpha1.UnauthorizedExecutor {
		return poolv1alpha1.UnauthorizedExecutor{Pod: u.Pod, Namespace: u.Namespace, QueryService: u.QueryService}
	})
}

// allocations turns the observed allocations into status.
func (o *CapacityObservation) allocations() []poolv1alpha1.Allocation {
	if o == nil {
		return nil
	}
	return convertAll(o.Allocations, func(a capv1alpha1.Allocation) poolv1alpha1.Allocation {
		return poolv1alpha1.Allocation{
			QueryService:  poolv1alpha1.QueryServiceReference{Name: a.QueryService, Namespace: a.Namespace},
			PoolExecutors: a.PoolExecutors, RegularExecutors: a.RegularExecutors, AllocatedAt: a.AllocatedAt,
		}
	})
}

// convertAll turns each observed item into its status form; none is nil, so
// an empty observation leaves the status field out.
func convertAll[T, U any](in []T, convert func(T) U) []U {
	if len(in) == 0 {
		return nil
	}
	out := make([]U, 0, len(in))
	for _, v := range in {
		out = append(out, convert(v))
	}
	return out
}

// nodes is the number of pool nodes the observation counts.
func (o *CapacityObservation) nodes() int32 {
	if o == nil {
		return 0
	}
	return o.Nodes.Ready + o.Nodes.NotReady
}

// occupied is the number of running pool executors.
func (o *CapacityObservation) occupied() int32 {
	if o == nil {
		return 0
	}
	return o.OccupiedExecutors
}
