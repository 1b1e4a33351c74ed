package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// A pool whose workload cluster is remote composes what runs there as
// provider-kubernetes Objects, which apply their manifest to the cluster
// that a provider-kubernetes ProviderConfig reaches. The PoolCapacity and
// the cloud node pools of LKE and DOKS (managed resources of cloud APIs)
// stay in the management cluster. What the function reads from the workload
// cluster (detection CRDs, QueryServices) comes from the PoolCapacity's
// status.atProvider.workloadCluster, which the capacity provider, connected
// to that cluster anyway, keeps current.

// provider-kubernetes' Object.
const (
	objectAPIVersion = "kubernetes.crossplane.io/v1alpha2"
	objectKind       = "Object"
)

// annotationOwner marks every object a pool composes in a workload cluster
// with "{management}/{namespace}/{pool}". It is an annotation: the value
// holds slashes, which no label value may.
const annotationOwner = "burstpool.e6data.io/owner"

// Management policies of an Object: observe only while the name may be
// another's, everything once it is known to be free or the pool's own.
const (
	policyObserve = "Observe"
	policyAll     = "*"
)

// Condition type and reasons of a remote pool's connection.
const (
	CondWorkloadReachable      = "WorkloadClusterReachable"
	reasonReachable            = "WorkloadClusterReachable"
	reasonUnreachable          = "WorkloadClusterUnreachable"
	reasonNotApplied           = "WorkloadObjectsNotApplied"
	reasonNameTaken            = "NameTaken"
	msgExternalDoesNotExist    = "external resource does not exist"
	reasonCapacityUnreachable  = "ClusterUnreachable"
	defaultManagementClusterID = "management"
)

// WorkloadTarget is the provider-kubernetes ProviderConfig that reaches the
// pool's workload cluster: the Pool's spec.workloadCluster, else the
// setting; empty when the pool runs in the management cluster.
func WorkloadTarget(cfg *v1beta1.Input, spec poolv1alpha1.PoolSpec) string {
	if w := spec.WorkloadCluster; w != nil && w.ProviderConfigName != "" {
		return w.ProviderConfigName
	}
	if w := cfg.WorkloadCluster; w != nil {
		return w.ProviderConfigName
	}
	return ""
}

// OwnerMark is the value of annotationOwner of a pool's remote objects.
// management is the management cluster's name (the clusterName setting).
func OwnerMark(management, ns, pool string) string {
	if management == "" {
		management = defaultManagementClusterID
	}
	return management + "/" + ns + "/" + pool
}

// ObjectName is the name of a new Object that wraps the remote object u of
// the pool in namespace ns whose workload cluster pc reaches:
// "{pc}-{ns}-{kind}-[{namespace}-]{name}-{hash}" (uniqueName), the hash
// of pc, ns and u's group, kind, namespace and name. Objects are
// cluster-scoped: the pool's namespace is part of the name because pools
// of one name in two namespaces compose objects of one name, the kind
// because an admission policy and its binding share a name, and the hash
// because dashes join parts that hold dashes ("team-a" and "burst",
// "team" and "a-burst").
func ObjectName(pc, ns string, u *unstructured.Unstructured) string {
	parts := []string{pc, ns, strings.ToLower(u.GetKind())}
	if n := u.GetNamespace(); n != "" {
		parts = append(parts, n)
	}
	group := ""
	if g, _, ok := strings.Cut(u.GetAPIVersion(), "/"); ok {
		group = g
	}
	return objects.UniqueName(strings.Join(append(parts, u.GetName()), "-"), objects.MaxObjectName, pc, ns, group, u.GetKind(), u.GetNamespace(), u.GetName())
}

// keptObjectName is the name of the observed Object n when it reaches the
// workload cluster pc; "" when there is none. An Object keeps the name it
// was created with: renaming it makes Crossplane delete it, and
// provider-kubernetes then deletes the workload cluster's object (its
// NodePool, with its nodes).
func keptObjectName(obs map[resource.Name]*structpb.Struct, n resource.Name, pc string) string {
	if o := obs[n]; o != nil && observed.String(o, "spec", "providerConfigRef", "name") == pc {
		return observed.String(o, "metadata", "name")
	}
	return ""
}

// objectNameOf is the name of the Object that wraps the remote object
// target of r's pool: the observed Object's that wraps it, else
// ObjectName's.
func objectNameOf(obs map[resource.Name]*structpb.Struct, r Remote, target *unstructured.Unstructured) string {
	for _, n := range slices.Sorted(maps.Keys(obs)) {
		m := observed.Field(obs[n], "spec", "forProvider", "manifest").GetStructValue()
		if !isRemoteObject(n) || observed.String(m, "kind") != target.GetKind() || observed.String(m, "metadata", "name") != target.GetName() || observed.String(m, "metadata", "namespace") != target.GetNamespace() {
			continue
		}
		if k := keptObjectName(obs, n, r.ProviderConfig); k != "" {
			return k
		}
	}
	return ObjectName(r.ProviderConfig, r.Namespace, target)
}

// isLocalKind tells whether an object the pool composes stays in the
// management cluster: Crossplane managed resources of cloud APIs (LKE and
// DOKS node pools). The PoolCapacity stays too, under objects.ComposedRemoteCapacity.
func isLocalKind(apiVersion string) bool {
	group, _, _ := strings.Cut(apiVersion, "/")
	return strings.HasSuffix(group, ".upbound.io") || strings.HasSuffix(group, ".crossplane.io")
}

// RemoteView is what the rest of the function reads as observed for a
// remote pool: the local objects as they are, and each Object's remote
// object from status.atProvider.manifest under the name it wraps. Objects
// of kinds that now live remotely but were composed locally before are left
// out, so a pool moved to a remote cluster decides from that cluster alone.
func RemoteView(obs map[resource.Name]*structpb.Struct) map[resource.Name]*structpb.Struct {
	out := make(map[resource.Name]*structpb.Struct, len(obs))
	for n, o := range obs {
		if n == objects.ComposedRemoteCapacity {
			out[objects.ComposedCapacity] = o
			continue
		}
		if inner, ok := strings.CutPrefix(string(n), objects.ComposedRemotePrefix); ok && observed.String(o, "kind") == objectKind {
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

// Ownership decides an Object's management policy from its observed state
// o (nil before it exists): everything when the pool already manages it,
// when the remote object carries the pool's mark, or when the provider
// found no remote object of that name; observe only while unknown. holder
// is set when the remote name belongs to someone else.
func Ownership(o *structpb.Struct, mark string) (policy, holder string) {
	if o == nil {
		return policyObserve, ""
	}
	for _, p := range observed.Field(o, "spec", "managementPolicies").GetListValue().GetValues() {
		if p.GetStringValue() == policyAll {
			return policyAll, ""
		}
	}
	if m := observed.Field(o, "status", "atProvider", "manifest").GetStructValue(); m != nil {
		owner := observed.String(m, "metadata", "annotations", annotationOwner)
		if owner == mark {
			return policyAll, ""
		}
		if owner == "" {
			return policyObserve, "an object burstpool did not compose"
		}
		return policyObserve, "pool " + owner
	}
	if c := observed.Condition(o, "Synced"); c.Status == "False" && strings.Contains(c.Message, msgExternalDoesNotExist) {
		return policyAll, ""
	}
	return policyObserve, ""
}

// WrapObject returns the Object name that composes u in the workload
// cluster pc reaches, with the pool's mark and the given management policy.
func WrapObject(u *unstructured.Unstructured, name, pc, mark, policy string, labels map[string]string) *unstructured.Unstructured {
	m := u.DeepCopy()
	ann := m.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotationOwner] = mark
	m.SetAnnotations(ann)
	o := objects.New(objectAPIVersion, objectKind, name, "", labels)
	o.Object["spec"] = map[string]any{
		"managementPolicies": []any{policy},
		"providerConfigRef":  map[string]any{"name": pc},
		"readiness":          map[string]any{"policy": "DeriveFromObject"},
		"forProvider":        map[string]any{"manifest": m.Object},
	}
	return o
}

// Remote is a pool's remote target, as the wrapping needs it.
type Remote struct {
	ProviderConfig string
	Mark           string
	Pool           string
	Namespace      string
	// CapacityName is the PoolCapacity's: the observed one's when it
	// observes the same cluster, else RemoteCapacityName.
	CapacityName string
	// Query is what the capacity provider summarizes for the function.
	Query *capv1alpha1.WorkloadClusterQuery
}

// taken is a remote name held by someone else.
type taken struct {
	name   string
	holder string
}

// WrapOutput turns Compute's output for the pool's remote objects into
// Objects: desired objects of remote kinds are wrapped (under
// objects.ComposedRemotePrefix names), preserved ones are kept as their observed Objects,
// and the PoolCapacity points at the workload cluster and asks for its
// summary. observed is the request's observed state, unwrapped names
// included. When a remote name belongs to someone else, no remote object
// is applied and the pool is Failed (NameTaken) naming the holder.
func WrapOutput(out decision.Output, obs map[resource.Name]*structpb.Struct, r Remote, previous map[string]string) decision.Output {
	labels := objects.Identity(r.Pool, r.Namespace)
	w := decision.Output{
		Desired: make(map[resource.Name]*unstructured.Unstructured, len(out.Desired)),
		Lazy:    make(map[resource.Name]decision.Lazy, len(out.Lazy)),
		Ready:   make(map[resource.Name]resource.Ready, len(out.Ready)),
		Status:  out.Status, CountsUnknown: out.CountsUnknown, Conditions: out.Conditions, Results: out.Results, RequeueAfter: out.RequeueAfter,
	}
	var held []taken
	// own decides the management policy of the Object named rn, noting
	// the remote name as held when it belongs to someone else (describe
	// names it; it is called only then).
	own := func(rn resource.Name, describe func() string) string {
		policy, holder := Ownership(obs[rn], r.Mark)
		if holder != "" {
			held = append(held, taken{name: describe(), holder: holder})
		}
		return policy
	}
	wrap := func(n resource.Name, u *unstructured.Unstructured) (resource.Name, *unstructured.Unstructured) {
		rn := resource.Name(objects.ComposedRemotePrefix + string(n))
		policy := own(rn, func() string { return u.GetKind() + " " + objects.Qualified(u.GetNamespace(), u.GetName()) })
		return rn, WrapObject(u, objectNameOf(obs, r, u), r.ProviderConfig, r.Mark, policy, labels)
	}
	for _, n := range slices.Sorted(maps.Keys(out.Desired)) {
		u := out.Desired[n]
		if n == objects.ComposedCapacity {
			w.Desired[objects.ComposedRemoteCapacity] = pointCapacity(u, r)
			w.Ready[objects.ComposedRemoteCapacity] = out.Ready[n]
			continue
		}
		if isLocalKind(u.GetAPIVersion()) {
			w.Desired[n], w.Ready[n] = usedByObject(u, func(target *unstructured.Unstructured) string { return objectNameOf(obs, r, target) }), out.Ready[n]
			continue
		}
		rn, o := wrap(n, u)
		w.Desired[rn], w.Ready[rn] = o, out.Ready[n]
	}
	for _, n := range slices.Sorted(maps.Keys(out.Lazy)) {
		l := out.Lazy[n]
		if n == objects.ComposedCapacity {
			w.Lazy[objects.ComposedRemoteCapacity] = decision.Lazy{Key: remoteKey(l.Key, "capacity", r.ProviderConfig, r.Namespace, r.CapacityName, r.queryKey()), Build: func() *unstructured.Unstructured { return pointCapacity(l.Build(), r) }}
			w.Ready[objects.ComposedRemoteCapacity] = out.Ready[n]
			continue
		}
		// Every other lazy object is of a remote kind. It is built only
		// when the render cache lacks it, or to name a held remote name.
		rn := resource.Name(objects.ComposedRemotePrefix + string(n))
		policy := own(rn, func() string {
			u := l.Build()
			return u.GetKind() + " " + objects.Qualified(u.GetNamespace(), u.GetName())
		})
		kept := keptObjectName(obs, rn, r.ProviderConfig)
		w.Lazy[rn] = decision.Lazy{Key: remoteKey(l.Key, r.ProviderConfig, r.Namespace, r.Mark, policy, kept), Build: func() *unstructured.Unstructured {
			u := l.Build()
			name := kept
			if name == "" {
				name = ObjectName(r.ProviderConfig, r.Namespace, u)
			}
			return WrapObject(u, name, r.ProviderConfig, r.Mark, policy, labels)
		}}
		w.Ready[rn] = out.Ready[n]
	}
	for _, n := range out.Preserve {
		if rn := resource.Name(objects.ComposedRemotePrefix + string(n)); obs[rn] != nil {
			w.Preserve = append(w.Preserve, rn)
		} else if o := obs[n]; o != nil && isLocalKind(observed.String(o, "apiVersion")) {
			w.Preserve = append(w.Preserve, n)
		}
	}
	if len(held) == 0 {
		return w
	}
	return nameTaken(w, obs, held, previous)
}

// usedByObject points a usage whose user is a remote object (the node IAM
// usages, by the NodePool) at the Object that composes it in the management
// cluster, named by objectName: deleting that Object waits for the remote
// NodePool, and the NodePool itself is not in the management cluster.
// Other objects are returned as they are.
func usedByObject(u *unstructured.Unstructured, objectName func(*unstructured.Unstructured) string) *unstructured.Unstructured {
	if u.GetKind() != objects.KindUsage {
		return u
	}
	apiVersion, _, _ := unstructured.NestedString(u.Object, "spec", "by", "apiVersion")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "by", "kind")
	name, _, _ := unstructured.NestedString(u.Object, "spec", "by", "resourceRef", "name")
	if apiVersion == "" || isLocalKind(apiVersion) {
		return u
	}
	c := u.DeepCopy()
	_ = unstructured.SetNestedMap(c.Object, map[string]any{
		"apiVersion":  objectAPIVersion,
		"kind":        objectKind,
		"resourceRef": map[string]any{"name": objectName(objects.New(apiVersion, kind, name, "", nil))},
	}, "spec", "by")
	return c
}

// nameTaken keeps every remote object as observed, disarms the
// PoolCapacity (it counts, and evicts nothing) and fails the pool, naming
// who holds which names.
func nameTaken(w decision.Output, observed map[resource.Name]*structpb.Struct, held []taken, previous map[string]string) decision.Output {
	for n := range w.Desired {
		if isRemoteObject(n) {
			delete(w.Desired, n)
			delete(w.Ready, n)
		}
	}
	for n := range w.Lazy {
		if isRemoteObject(n) {
			delete(w.Lazy, n)
			delete(w.Ready, n)
		}
	}
	w.Preserve = slices.DeleteFunc(w.Preserve, isRemoteObject)
	if u := w.Desired[objects.ComposedRemoteCapacity]; u != nil {
		w.Desired[objects.ComposedRemoteCapacity] = objects.Disarmed(u)
	}
	if l, ok := w.Lazy[objects.ComposedRemoteCapacity]; ok {
		w.Lazy[objects.ComposedRemoteCapacity] = decision.Lazy{Key: remoteKey(l.Key, "disarmed"), Build: func() *unstructured.Unstructured { return objects.Disarmed(l.Build()) }}
	}
	for _, n := range slices.Sorted(maps.Keys(observed)) {
		if isRemoteObject(n) {
			w.Preserve = append(w.Preserve, n)
		}
	}
	msgs := make([]string, 0, len(held))
	for _, t := range held {
		msgs = append(msgs, fmt.Sprintf("%s is held by %s", t.name, t.holder))
	}
	msg := "the workload cluster already has objects of the pool's names, which burstpool does not overwrite: " + strings.Join(msgs, "; ") +
		": rename the pool, or delete or rename those objects; meanwhile the pool's PoolCapacity only counts and evicts nothing"
	w.Status.Phase, w.Status.Message = poolv1alpha1.PhaseFailed, msg
	w.Conditions = slices.DeleteFunc(slices.Clone(w.Conditions), func(c decision.Condition) bool { return c.Type == decision.CondProvisioned })
	w.Conditions = append(w.Conditions, decision.Condition{Type: decision.CondProvisioned, Status: metav1.ConditionFalse, Reason: reasonNameTaken, Message: msg})
	if previous[decision.CondProvisioned] != reasonNameTaken {
		w.Results = append(w.Results, decision.Result{Warning: true, Reason: reasonNameTaken, Message: msg})
	}
	return w
}

// isRemoteObject tells the composed-resource names of Objects from the
// others.
func isRemoteObject(n resource.Name) bool {
	return n != objects.ComposedRemoteCapacity && strings.HasPrefix(string(n), objects.ComposedRemotePrefix)
}

// remoteKey is the render-cache key of a wrapped lazy object; empty when
// the object is not cached.
func remoteKey(key string, parts ...string) string {
	if key == "" {
		return ""
	}
	return "remote|" + strings.Join(parts, "|") + "|" + key
}

// queryKey encodes the query for the render cache.
func (r Remote) queryKey() string {
	b, err := json.Marshal(r.Query)
	if err != nil {
		return ""
	}
	return string(b)
}

// RemoteCapacityName is the PoolCapacity name of a new remote pool:
// "{providerConfig}-{namespace}-{pool}-capacity-{hash}" (uniqueName, the
// hash of the three). A local pool's "{pool}-capacity" is unique because
// the pool's other cluster-wide names live in the same cluster; pools of
// one name in two workload clusters share nothing else, so their
// PoolCapacities must not share a name either, whatever dashes their
// parts hold.
func RemoteCapacityName(pc, ns, pool string) string {
	return objects.UniqueName(pc+"-"+ns+"-"+pool+objects.SuffixCapacity, objects.MaxObjectName, pc, ns, pool)
}

// pointCapacity makes the PoolCapacity observe the workload cluster
// through the ProviderConfig of the same name, and ask for its summary.
func pointCapacity(u *unstructured.Unstructured, r Remote) *unstructured.Unstructured {
	c := u.DeepCopy()
	c.SetName(r.CapacityName)
	_ = unstructured.SetNestedField(c.Object, r.ProviderConfig, "spec", "providerConfigRef", "name")
	if r.Query != nil {
		q := map[string]any{}
		b, err := json.Marshal(r.Query)
		if err == nil && json.Unmarshal(b, &q) == nil {
			_ = unstructured.SetNestedField(c.Object, q, "spec", "forProvider", "workloadCluster")
		}
	}
	return c
}

// WorkloadQuery is what the capacity provider reads from the workload
// cluster for the pool: the QueryServices and CRDs of its requirements.
func WorkloadQuery(reqs *fnv1.Requirements) *capv1alpha1.WorkloadClusterQuery {
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

// Condition type and reason that say a workload cluster summary was cut
// short.
const (
	CondSummaryComplete    = "WorkloadSummaryComplete"
	reasonSummaryTruncated = "WorkloadSummaryTruncated"
	reasonSummaryComplete  = "WorkloadSummaryComplete"
)

// KeepAttached returns qss with the QueryServices the pool attached before
// (previous, its status.attachedQueryServices) that a truncated summary
// leaves out, rebuilt from what that status says of them (instance type,
// requests) with the labels sel pins and a poolRef naming the pool, so that
// they attach as before; kept names them. A QueryService missing from a
// truncated summary may still exist: the summary lists at most 1,000, and
// anyone may label a QueryService of their own to fill them.
func KeepAttached(qss []decision.QueryService, previous []poolv1alpha1.AttachedQueryService, sel *metav1.LabelSelector, pool, ns string) (out []decision.QueryService, kept []string) {
	have := make(map[string]bool, len(qss))
	for _, q := range qss {
		have[q.Namespace+"/"+q.Name] = true
	}
	out = qss
	for _, a := range previous {
		r := a.QueryService
		k := r.Namespace + "/" + r.Name
		if !a.Attached || have[k] {
			continue
		}
		have[k] = true
		q := decision.QueryService{Name: r.Name, Namespace: r.Namespace, Labels: decision.Labels{}}
		for k, v := range decision.SelectorLabels(sel) {
			q.Labels[k] = structpb.NewStringValue(v)
		}
		e := &q.Spec.Executor
		e.InstanceType, e.PoolRef = a.InstanceType, &qsv1alpha1.PoolReference{Name: pool, Namespace: ns}
		e.Resources.CPU = observed.Quantity(structpb.NewStringValue(a.RequiredCPU))
		e.Resources.Memory = observed.Quantity(structpb.NewStringValue(a.RequiredMemory))
		out = append(out, q)
		kept = append(kept, k)
	}
	return out, kept
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

// Reachability is the WorkloadClusterReachable condition of a remote pool
// from its observed Objects and PoolCapacity: False, quoting their errors,
// while the provider cannot reach the cluster (WorkloadClusterUnreachable)
// or an Object cannot be applied (WorkloadObjectsNotApplied).
func Reachability(obs map[resource.Name]*structpb.Struct, pc string) decision.Condition {
	where := fmt.Sprintf("workload cluster %s (provider-kubernetes ProviderConfig %s)", pc, pc)
	var capErr string
	if c := observed.Condition(obs[objects.ComposedRemoteCapacity], "Ready"); c.Status == "False" && c.Reason == reasonCapacityUnreachable {
		capErr = c.Message
	} else if c := observed.Condition(obs[objects.ComposedRemoteCapacity], "Synced"); c.Status == "False" {
		// The summary of the workload cluster could not be read.
		capErr = c.Message
	}
	var objErrs []string
	for _, n := range slices.Sorted(maps.Keys(obs)) {
		o := obs[n]
		if !isRemoteObject(n) || observed.String(o, "kind") != objectKind {
			continue
		}
		c := observed.Condition(o, "Synced")
		if c.Status != "False" || strings.Contains(c.Message, msgExternalDoesNotExist) {
			continue
		}
		objErrs = append(objErrs, fmt.Sprintf("Object %s: %s", observed.String(o, "metadata", "name"), c.Message))
	}
	if capErr == "" && len(objErrs) == 0 {
		return decision.Condition{Type: CondWorkloadReachable, Status: metav1.ConditionTrue, Reason: reasonReachable}
	}
	const maxQuoted = 3
	quoted := objErrs
	if len(quoted) > maxQuoted {
		quoted = append(slices.Clone(quoted[:maxQuoted]), fmt.Sprintf("and %d more Objects", len(objErrs)-maxQuoted))
	}
	if capErr != "" {
		quoted = append([]string{"PoolCapacity: " + capErr}, quoted...)
	}
	reason, what := reasonNotApplied, "cannot apply the pool's objects to the "+where
	if capErr != "" || unreachable(objErrs) {
		reason, what = reasonUnreachable, "cannot reach the "+where
	}
	return decision.Condition{Type: CondWorkloadReachable, Status: metav1.ConditionFalse, Reason: reason,
		Message: what + "; nothing composed is removed meanwhile: " + strings.Join(quoted, "; ")}
}

// unreachable tells whether Object errors are connection errors rather
// than refusals of the remote API server.
func unreachable(errs []string) bool {
	for _, e := range errs {
		for _, s := range []string{"connection refused", "no such host", "i/o timeout", "dial tcp", "connect:", "cannot get credentials", "cannot create new REST config", "EOF", "context deadline exceeded", "Client.Timeout"} {
			if strings.Contains(e, s) {
				return true
			}
		}
	}
	return false
}

// ComposeTarget composes the pool in the workload cluster that the
// provider-kubernetes ProviderConfig pc reaches: from the unwrapped
// observed state and the capacity provider's summary, which query asks
// for, wrapping the remote objects. apply writes the Output against the
// request's observed state, in.Observed.
func ComposeTarget(in decision.Input, pc string, query *capv1alpha1.WorkloadClusterQuery) decision.Output {
	r := Remote{ProviderConfig: pc, Mark: OwnerMark(in.Config.ClusterName, in.Namespace, in.Pool), Pool: in.Pool, Namespace: in.Namespace, Query: query}
	if r.CapacityName = keptObjectName(in.Observed, objects.ComposedRemoteCapacity, pc); r.CapacityName == "" {
		r.CapacityName = RemoteCapacityName(pc, in.Namespace, in.Pool)
	}
	rin := in
	rin.Observed = RemoteView(in.Observed)
	// The management cluster's PriorityClass says nothing about the
	// workload cluster's: the Objects' ownership check covers it.
	rin.Existing = maps.Clone(in.Existing)
	delete(rin.Existing, objects.ComposedPlaceholderPriorityClass)
	delete(rin.Existing, objects.ComposedCapacity)
	qss, crds, truncated, ok := Summary(in.Observed[objects.ComposedRemoteCapacity])
	var kept []string
	if truncated {
		qss, kept = KeepAttached(qss, in.Previous.AttachedQueryServices, in.Spec.QueryServiceSelector, in.Pool, in.Namespace)
	}
	rin.QueryServices, rin.CRDs = qss, crds
	waiting := !ok && !in.Deleting
	var out decision.Output
	if waiting {
		out = decision.AwaitWorkload(rin, pc, r.CapacityName)
	} else {
		out = decision.Compute(rin)
	}
	out = WrapOutput(out, in.Observed, r, in.PreviousConditions)
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
