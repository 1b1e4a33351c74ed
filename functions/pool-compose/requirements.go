package main

import (
	"maps"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// Required-resource names. Each QueryService named by allowedQueryServices
// or inheritNodeConfigFrom is one requirement, "queryservice:{ns}/{name}".
const (
	reqQSPrefix  = "queryservice:"
	reqSelected  = "queryservices:selected"
	reqPointing  = "queryservices:pointing"
	reqCRDPrefix = "crd:"
	// reqOwnerPrefix names the requirement of one of decision.OwnedNames.
	reqOwnerPrefix = "owner:"
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

// Requirements are the resources the function asks Crossplane for when
// composing the pool called pool in namespace ns: only the QueryServices the
// pool can attach or must report, never every QueryService in the cluster.
//
//   - each QueryService in allowedQueryServices and inheritNodeConfigFrom,
//     by name in its namespace;
//   - the QueryServices queryServiceSelector selects, across namespaces, by
//     its equality labels (decision.SelectorLabels); its other expressions are
//     evaluated here on what Crossplane returns;
//   - the QueryServices labelled e6data.io/pool={pool}, across namespaces:
//     those that point at the pool are reported even when it does not allow
//     them;
//   - each CRD that reveals how the cluster provisions nodes, by name;
//   - by name, the cluster-scoped objects the pool would compose whose names
//     another namespace's pool may hold (decision.OwnedNames).
//
// They depend on the spec alone, so they are the same on every call of a
// reconcile, as Crossplane requires.
func Requirements(pool, ns string, spec poolv1alpha1.PoolSpec) *fnv1.Requirements {
	qsSel := func(m *fnv1.ResourceSelector) *fnv1.ResourceSelector {
		m.ApiVersion, m.Kind = qsAPIVersion, qsv1alpha1.GroupVersionKind.Kind
		return m
	}
	r := &fnv1.Requirements{Resources: make(map[string]*fnv1.ResourceSelector, len(spec.AllowedQueryServices)+len(decision.DetectionCRDs)+len(decision.OwnedNames)+3)}
	byName := func(name, namespace string) {
		namespace = decision.RefNamespace(namespace, ns)
		r.Resources[reqQSPrefix+namespace+"/"+name] = qsSel(&fnv1.ResourceSelector{
			Match: &fnv1.ResourceSelector_MatchName{MatchName: name}, Namespace: &namespace,
		})
	}
	for _, a := range spec.AllowedQueryServices {
		byName(a.Name, a.Namespace)
	}
	if i := spec.InheritNodeConfigFrom; i != nil {
		byName(i.Name, i.Namespace)
	}
	pointing := map[string]string{qsv1alpha1.LabelPool: pool}
	if len(validation.IsValidLabelValue(pool)) > 0 {
		// No QueryService can carry the label.
		pointing = nil
	}
	if l := decision.SelectorLabels(spec.QueryServiceSelector); len(l) > 0 {
		r.Resources[reqSelected] = qsSel(&fnv1.ResourceSelector{Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: l}}})
		if maps.Equal(l, pointing) {
			// The selector asks for exactly these already.
			pointing = nil
		}
	}
	if pointing != nil {
		r.Resources[reqPointing] = qsSel(&fnv1.ResourceSelector{Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: pointing}}})
	}
	for _, crd := range decision.DetectionCRDs {
		r.Resources[reqCRDPrefix+crd] = &fnv1.ResourceSelector{
			ApiVersion: "apiextensions.k8s.io/v1",
			Kind:       "CustomResourceDefinition",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: crd},
		}
	}
	for _, o := range decision.OwnedNames {
		r.Resources[reqOwnerPrefix+string(o.Resource)] = &fnv1.ResourceSelector{
			ApiVersion: o.APIVersion,
			Kind:       o.Kind,
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: pool + o.Suffix},
		}
	}
	return r
}

// qsAPIVersion is the QueryService's apiVersion.
var qsAPIVersion = qsv1alpha1.GroupVersionKind.GroupVersion().String()

// isQSRequirement tells the QueryService requirements from the others (the
// CRDs, the owned names and the EnvironmentConfigs).
func isQSRequirement(name string) bool {
	return strings.HasPrefix(name, reqQSPrefix) || name == reqSelected || name == reqPointing
}

// required reads the required resources of reqs. ok is false until
// Crossplane has supplied every one of them. The QueryServices are those of
// every QueryService requirement (one may come twice; Attach takes each
// once).
func required(req *fnv1.RunFunctionRequest, reqs *fnv1.Requirements) ([]decision.QueryService, map[string]bool, bool) {
	rr := req.GetRequiredResources()
	n := 0
	for name := range reqs.GetResources() {
		items, ok := rr[name]
		if !ok {
			return nil, nil, false
		}
		if isQSRequirement(name) {
			n += len(items.GetItems())
		}
	}
	crds := make(map[string]bool, len(decision.DetectionCRDs))
	for _, crd := range decision.DetectionCRDs {
		crds[crd] = len(rr[reqCRDPrefix+crd].GetItems()) > 0
	}
	if items := rr[reqCRDPrefix+decision.CRDCapacityBuffer].GetItems(); len(items) > 0 {
		// A CapacityBuffer CRD of another version than the one composed
		// is not served for this purpose.
		crds[decision.CRDCapacityBuffer] = decision.ServesVersion(items[0].GetResource(), objects.BufferVersion)
	}
	qss := make([]decision.QueryService, 0, n)
	// In a fixed order, so that duplicates resolve the same way each call.
	for _, name := range slices.Sorted(maps.Keys(reqs.GetResources())) {
		if !isQSRequirement(name) {
			continue
		}
		for _, it := range rr[name].GetItems() {
			qss = append(qss, decision.DecodeQueryService(it.GetResource()))
		}
	}
	return qss, crds, true
}

// owners reads the cluster-scoped objects named after the pool that
// exist (decision.OwnedNames), by composed-resource name. Call it once required has
// found every requirement supplied.
func owners(req *fnv1.RunFunctionRequest) map[resource.Name]*structpb.Struct {
	rr := req.GetRequiredResources()
	out := map[resource.Name]*structpb.Struct{}
	for _, o := range decision.OwnedNames {
		if items := rr[reqOwnerPrefix+string(o.Resource)].GetItems(); len(items) > 0 && items[0].GetResource() != nil {
			out[o.Resource] = items[0].GetResource()
		}
	}
	return out
}
