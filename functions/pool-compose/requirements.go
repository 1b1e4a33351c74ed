package main

import (
	"maps"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// The EnvironmentConfigs that hold the cluster's settings, as a required
// resource.
const (
	reqEnvironment = "environment"

	environmentAPIVersion = "apiextensions.crossplane.io/v1beta1"
	environmentKind       = "EnvironmentConfig"
)

// environmentSelector is the required resource that holds the cluster's
// settings: the EnvironmentConfig the input names (burstpool by default), or
// every one with the input's labels.
func environmentSelector(cfg *v1beta1.Input) *fnv1.ResourceSelector {
	sel := &fnv1.ResourceSelector{ApiVersion: environmentAPIVersion, Kind: environmentKind}
	if e := cfg.EnvironmentConfig; e != nil && len(e.MatchLabels) > 0 {
		sel.Match = &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: e.MatchLabels}}
		return sel
	}
	sel.Match = &fnv1.ResourceSelector_MatchName{MatchName: decision.EnvironmentName(cfg)}
	return sel
}

// environmentData reads the data of the EnvironmentConfigs Crossplane
// supplied, in name order. ok is false until it has supplied them.
func environmentData(req *fnv1.RunFunctionRequest) ([]decision.NamedData, bool) {
	items, ok := req.GetRequiredResources()[reqEnvironment]
	if !ok {
		return nil, false
	}
	out := make([]decision.NamedData, 0, len(items.GetItems()))
	for _, it := range items.GetItems() {
		r := it.GetResource()
		d := observed.Field(r, "data").GetStructValue()
		out = append(out, decision.NamedData{Name: observed.String(r, "metadata", "name"), Data: d.AsMap()})
	}
	slices.SortFunc(out, func(a, b decision.NamedData) int { return strings.Compare(a.Name, b.Name) })
	return out, true
}

// workloadQuery is what the capacity provider reads from the workload
// cluster for the pool: the QueryServices and CRDs of its requirements.
func workloadQuery(reqs *fnv1.Requirements) *capv1alpha1.WorkloadClusterQuery {
	q := &capv1alpha1.WorkloadClusterQuery{}
	for _, name := range slices.Sorted(maps.Keys(reqs.GetResources())) {
		sel := reqs.GetResources()[name]
		switch {
		case strings.HasPrefix(name, reqQSPrefix):
			q.QueryServices = append(q.QueryServices, capv1alpha1.PoolRef{Name: sel.GetMatchName(), Namespace: sel.GetNamespace()})
		case name == reqSelected || name == reqPointing:
			q.LabelSelectors = append(q.LabelSelectors, maps.Clone(sel.GetMatchLabels().GetLabels()))
		case strings.HasPrefix(name, reqCRDPrefix):
			q.CRDs = append(q.CRDs, sel.GetMatchName())
		}
	}
	return q
}
