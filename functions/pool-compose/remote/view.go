package remote

import (
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// Condition type and reason that say a workload cluster summary was cut
// short.
const (
	CondSummaryComplete    = "WorkloadSummaryComplete"
	reasonSummaryTruncated = "WorkloadSummaryTruncated"
	reasonSummaryComplete  = "WorkloadSummaryComplete"
)

// isLocalKind tells whether an object the pool composes stays in the
// management cluster: Crossplane managed resources of cloud APIs (LKE and
// DOKS node pools). The PoolCapacity stays too, under objects.ComposedRemoteCapacity.
func isLocalKind(apiVersion string) bool {
	group, _, _ := strings.Cut(apiVersion, "/")
	return strings.HasSuffix(group, ".upbound.io") || strings.HasSuffix(group, ".crossplane.io")
}

// View is what the rest of the function reads as observed for a
// remote pool: the local objects as they are, and each Object's remote
// object from status.atProvider.manifest under the name it wraps. Objects
// of kinds that now live remotely but were composed locally before are left
// out, so a pool moved to a remote cluster decides from that cluster alone.
func View(obs map[resource.Name]*structpb.Struct) map[resource.Name]*structpb.Struct {
	out := make(map[resource.Name]*structpb.Struct, len(obs))
	for n, o := range obs {
		if n == objects.ComposedRemoteCapacity {
			out[objects.ComposedCapacity] = o
			continue
		}
		if inner, ok := strings.CutPrefix(string(n), objects.ComposedRemotePrefix); ok && observed.String(o, "kind") == ObjectKind {
			if m := observed.Field(o, "status", "atProvider", "manifest").GetStructValue(); m != nil {
				out[resource.Name(inner)] = m
			}
			continue
		}
		if isLocalKind(observed.String(o, "apiVersion")) {
			out[n] = o
		}
	}
	return out
}

// Summary reads the workload cluster summary of an observed PoolCapacity:
// the QueryServices and which detection CRDs exist. truncated says that
// more QueryServices matched than the summary lists. ok is false until
// the provider has published one.
func Summary(capacity *structpb.Struct) (qss []decision.QueryService, crds map[string]bool, truncated, ok bool) {
	s := observed.Field(capacity, "status", "atProvider", "workloadCluster").GetStructValue()
	if s == nil {
		return nil, nil, false, false
	}
	crds = make(map[string]bool, len(decision.DetectionCRDs))
	for _, crd := range decision.DetectionCRDs {
		crds[crd] = false
	}
	for _, v := range observed.Field(s, "crds").GetListValue().GetValues() {
		crds[v.GetStringValue()] = true
	}
	items := observed.Field(s, "queryServices").GetListValue().GetValues()
	qss = make([]decision.QueryService, 0, len(items))
	for _, v := range items {
		qss = append(qss, summaryQueryService(v.GetStructValue()))
	}
	return qss, crds, observed.Field(s, "truncated").GetBoolValue(), true
}

// KeepAttached returns qss with the QueryServices the pool attached before
// that a truncated summary leaves out, so that they attach as before;
// kept names them. The pool attached a QueryService before when its
// previous status (previous, status.attachedQueryServices) says so, or
// when the observed PoolCapacity (capacity) lists it in
// spec.forProvider.queryServices: a status not written yet, or written
// without it, detaches nothing. Each is rebuilt from what that status says
// of it (instance type, requests), or else from what the PoolCapacity
// says (its regular executors), with labels sel selects and a poolRef
// naming the pool. A QueryService missing from a truncated summary may
// still exist: the summary lists at most 1,000, and anyone may label a
// QueryService of their own to fill them.
func KeepAttached(qss []decision.QueryService, previous []poolv1alpha1.AttachedQueryService, capacity *structpb.Struct, sel *metav1.LabelSelector, pool, ns string) (out []decision.QueryService, kept []string) {
	have := make(map[string]bool, len(qss))
	for _, q := range qss {
		have[q.Namespace+"/"+q.Name] = true
	}
	out = qss
	keep := func(name, namespace string) *decision.QueryService {
		k := namespace + "/" + name
		if have[k] {
			return nil
		}
		have[k] = true
		q := decision.QueryService{Name: name, Namespace: namespace, Labels: selected(sel)}
		q.Spec.Executor.PoolRef = &qsv1alpha1.PoolReference{Name: pool, Namespace: ns}
		out = append(out, q)
		kept = append(kept, k)
		return &out[len(out)-1]
	}
	for _, a := range previous {
		if !a.Attached {
			continue
		}
		if q := keep(a.QueryService.Name, a.QueryService.Namespace); q != nil {
			e := &q.Spec.Executor
			e.InstanceType = a.InstanceType
			e.Resources.CPU = observed.Quantity(structpb.NewStringValue(a.RequiredCPU))
			e.Resources.Memory = observed.Quantity(structpb.NewStringValue(a.RequiredMemory))
		}
	}
	for _, v := range observed.Field(capacity, "spec", "forProvider", "queryServices").GetListValue().GetValues() {
		c := v.GetStructValue()
		name, namespace := observed.String(c, "name"), observed.String(c, "namespace")
		if name == "" || namespace == "" {
			continue
		}
		if q := keep(name, namespace); q != nil {
			if r := observed.Field(c, "regularExecutors"); r != nil {
				n := int32(observed.Number(r))
				q.Spec.Executor.Replicas = &n
			}
		}
	}
	return out, kept
}

// selected returns labels that sel selects: its matchLabels, the first
// value of each In requirement and an empty value for each Exists
// requirement on a key not set already. NotIn and DoesNotExist hold of
// labels that lack their key.
func selected(sel *metav1.LabelSelector) decision.Labels {
	out := decision.Labels{}
	if sel == nil {
		return out
	}
	for k, v := range sel.MatchLabels {
		out[k] = structpb.NewStringValue(v)
	}
	for _, e := range sel.MatchExpressions {
		if _, set := out[e.Key]; set {
			continue
		}
		switch {
		case e.Operator == metav1.LabelSelectorOpIn && len(e.Values) > 0:
			out[e.Key] = structpb.NewStringValue(e.Values[0])
		case e.Operator == metav1.LabelSelectorOpExists:
			out[e.Key] = structpb.NewStringValue("")
		}
	}
	return out
}

// summaryCondition says whether the workload cluster summary is complete,
// and which attachments a truncated one kept.
func summaryCondition(truncated bool, kept []string) decision.Condition {
	if !truncated {
		return decision.Condition{Type: CondSummaryComplete, Status: metav1.ConditionTrue, Reason: reasonSummaryComplete}
	}
	msg := "the capacity provider's summary of the workload cluster lists only part of the QueryServices labelled for this pool (more than 1,000 point at it); no QueryService is detached while it is truncated"
	if len(kept) > 0 {
		msg += "; kept attached although missing from it: " + strings.Join(kept, ", ")
	}
	return decision.Condition{Type: CondSummaryComplete, Status: metav1.ConditionFalse, Reason: reasonSummaryTruncated, Message: msg}
}

// summaryQueryService reads one QueryService of a summary, which has the
// fields of a QueryService's metadata and spec side by side.
func summaryQueryService(s *structpb.Struct) decision.QueryService {
	f := s.GetFields()
	md := &structpb.Struct{Fields: map[string]*structpb.Value{"name": f["name"], "namespace": f["namespace"], "labels": f["labels"]}}
	spec := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	if ex, ok := f["executor"]; ok {
		spec.Fields["executor"] = ex
	}
	return decision.DecodeQueryService(&structpb.Struct{Fields: map[string]*structpb.Value{
		"metadata": structpb.NewStructValue(md), "spec": structpb.NewStructValue(spec),
	}})
}
