package remote

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// Target is the provider-kubernetes ProviderConfig that reaches the
// pool's workload cluster: the Pool's spec.workloadCluster, else the
// setting; empty when the pool runs in the management cluster.
func Target(cfg *v1beta1.Input, spec poolv1alpha1.PoolSpec) string {
	if w := spec.WorkloadCluster; w != nil && w.ProviderConfigName != "" {
		return w.ProviderConfigName
	}
	if w := cfg.WorkloadCluster; w != nil {
		return w.ProviderConfigName
	}
	return ""
}

// Compose composes the pool in the workload cluster that the
// provider-kubernetes ProviderConfig pc reaches: from the unwrapped
// observed state and the capacity provider's summary, which query asks
// for, wrapping the remote objects. apply writes the Output against the
// request's observed state, in.Observed.
func Compose(in decision.Input, pc string, query *capv1alpha1.WorkloadClusterQuery) decision.Output {
	r := Remote{ProviderConfig: pc, Mark: OwnerMark(in.Config.ClusterName, in.Namespace, in.Pool), Pool: in.Pool, Namespace: in.Namespace, Query: query}
	if r.CapacityName = keptObjectName(in.Observed, objects.ComposedRemoteCapacity, pc); r.CapacityName == "" {
		r.CapacityName = CapacityName(pc, in.Namespace, in.Pool)
	}
	rin := in
	rin.Observed = View(in.Observed)
	// The management cluster's PriorityClass says nothing about the
	// workload cluster's: the Objects' ownership check covers it.
	rin.Existing = maps.Clone(in.Existing)
	delete(rin.Existing, objects.ComposedPlaceholderPriorityClass)
	delete(rin.Existing, objects.ComposedCapacity)
	qss, crds, truncated, ok := Summary(in.Observed[objects.ComposedRemoteCapacity])
	var kept []string
	if truncated {
		qss, kept = KeepAttached(qss, in.Previous.AttachedQueryServices, in.Observed[objects.ComposedRemoteCapacity], in.Spec.QueryServiceSelector, in.Pool, in.Namespace)
	}
	rin.QueryServices, rin.CRDs = qss, crds
	waiting := !ok && !in.Deleting
	var out decision.Output
	if waiting {
		out = decision.AwaitWorkload(rin, pc, r.CapacityName)
	} else {
		out = decision.Compute(rin)
	}
	out = Wrap(out, in.Observed, r, in.PreviousConditions)
	if waiting {
		// Until the workload cluster is known nothing the pool has is
		// removed, the objects of a pool that ran locally before included.
		for _, n := range slices.Sorted(maps.Keys(in.Observed)) {
			if _, d := out.Desired[n]; !d {
				out.Preserve = append(out.Preserve, n)
			}
		}
	}
	if ok {
		sc := summaryCondition(truncated, kept)
		out.Conditions = append(out.Conditions, sc)
		if truncated && in.PreviousConditions[CondSummaryComplete] != sc.Reason {
			out.Results = append(out.Results, decision.Result{Warning: true, Reason: sc.Reason, Message: sc.Message})
		}
	}
	reach := Reachability(in.Observed, pc)
	out.Conditions = append(out.Conditions, reach)
	if reach.Status == metav1.ConditionFalse && in.PreviousConditions[CondWorkloadReachable] != reach.Reason {
		out.Results = append(out.Results, decision.Result{Warning: true, Reason: reach.Reason, Message: reach.Message})
	}
	return out
}
