package remote

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// Management policies of an Object: observe only while the name may be
// another's, everything once it is known to be free or the pool's own.
const (
	PolicyObserve = "Observe"
	PolicyAll     = "*"
)

// Ownership decides an Object's management policy from its observed state
// o (nil before it exists): everything when the pool already manages it,
// when the remote object carries the pool's mark, or when the provider
// found no remote object of that name; observe only while unknown. holder
// is set when the remote name belongs to someone else.
func Ownership(o *structpb.Struct, mark string) (policy, holder string) {
	if o == nil {
		return PolicyObserve, ""
	}
	for _, p := range observed.Field(o, "spec", "managementPolicies").GetListValue().GetValues() {
		if p.GetStringValue() == PolicyAll {
			return PolicyAll, ""
		}
	}
	if m := observed.Field(o, "status", "atProvider", "manifest").GetStructValue(); m != nil {
		owner := observed.String(m, "metadata", "annotations", AnnotationOwner)
		if owner == mark {
			return PolicyAll, ""
		}
		if owner == "" {
			return PolicyObserve, "an object burstpool did not compose"
		}
		return PolicyObserve, "pool " + owner
	}
	if c := observed.Condition(o, "Synced"); c.Status == "False" && strings.Contains(c.Message, msgExternalDoesNotExist) {
		return PolicyAll, ""
	}
	return PolicyObserve, ""
}

// WrapObject returns the Object name that composes u in the workload
// cluster pc reaches, with the pool's mark and the given management policy.
func WrapObject(u *unstructured.Unstructured, name, pc, mark, policy string, labels map[string]string) *unstructured.Unstructured {
	m := u.DeepCopy()
	ann := m.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationOwner] = mark
	m.SetAnnotations(ann)
	o := objects.New(ObjectAPIVersion, ObjectKind, name, "", labels)
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
	// observes the same cluster, else CapacityName.
	CapacityName string
	// Query is what the capacity provider summarizes for the function.
	Query *capv1alpha1.WorkloadClusterQuery
}

// held is a remote name held by someone else.
type held struct {
	name   string
	holder string
}

// Wrap turns Compute's output for the pool's remote objects into
// Objects: desired objects of remote kinds are wrapped (under
// objects.ComposedRemotePrefix names), preserved ones are kept as their observed Objects,
// and the PoolCapacity points at the workload cluster and asks for its
// summary. observed is the request's observed state, unwrapped names
// included. When a remote name belongs to someone else, no remote object
// is applied and the pool is Failed (NameTaken) naming the holder.
func Wrap(out decision.Output, obs map[resource.Name]*structpb.Struct, r Remote, previous map[string]string) decision.Output {
	labels := objects.Identity(r.Pool, r.Namespace)
	w := decision.Output{
		Desired: make(map[resource.Name]*unstructured.Unstructured, len(out.Desired)),
		Lazy:    make(map[resource.Name]decision.Lazy, len(out.Lazy)),
		Ready:   make(map[resource.Name]resource.Ready, len(out.Ready)),
		Status:  out.Status, CountsUnknown: out.CountsUnknown, Conditions: out.Conditions, Results: out.Results, RequeueAfter: out.RequeueAfter, Until: out.Until,
	}
	var heldNames []held
	// own decides the management policy of the Object named rn, noting
	// the remote name as held when it belongs to someone else (describe
	// names it; it is called only then).
	own := func(rn resource.Name, describe func() string) string {
		policy, holder := Ownership(obs[rn], r.Mark)
		if holder != "" {
			heldNames = append(heldNames, held{name: describe(), holder: holder})
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
	if len(heldNames) == 0 {
		return w
	}
	return refuseHeldNames(w, obs, heldNames, previous)
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
		"apiVersion":  ObjectAPIVersion,
		"kind":        ObjectKind,
		"resourceRef": map[string]any{"name": objectName(objects.New(apiVersion, kind, name, "", nil))},
	}, "spec", "by")
	return c
}

// refuseHeldNames keeps every remote object as observed, disarms the
// PoolCapacity (it counts, and evicts nothing) and fails the pool, naming
// who holds which names.
func refuseHeldNames(w decision.Output, observed map[resource.Name]*structpb.Struct, names []held, previous map[string]string) decision.Output {
	for n := range w.Desired {
		if IsObject(n) {
			delete(w.Desired, n)
			delete(w.Ready, n)
		}
	}
	for n := range w.Lazy {
		if IsObject(n) {
			delete(w.Lazy, n)
			delete(w.Ready, n)
		}
	}
	w.Preserve = slices.DeleteFunc(w.Preserve, IsObject)
	if u := w.Desired[objects.ComposedRemoteCapacity]; u != nil {
		w.Desired[objects.ComposedRemoteCapacity] = objects.Disarmed(u)
	}
	if l, ok := w.Lazy[objects.ComposedRemoteCapacity]; ok {
		w.Lazy[objects.ComposedRemoteCapacity] = decision.Lazy{Key: remoteKey(l.Key, "disarmed"), Build: func() *unstructured.Unstructured { return objects.Disarmed(l.Build()) }}
	}
	for _, n := range slices.Sorted(maps.Keys(observed)) {
		if IsObject(n) {
			w.Preserve = append(w.Preserve, n)
		}
	}
	msgs := make([]string, 0, len(names))
	for _, t := range names {
		msgs = append(msgs, fmt.Sprintf("%s is held by %s", t.name, t.holder))
	}
	msg := "the workload cluster already has objects of the pool's names, which burstpool does not overwrite: " + strings.Join(msgs, "; ") +
		": rename the pool, or delete or rename those objects; meanwhile the pool's PoolCapacity only counts and evicts nothing"
	w.Status.Phase, w.Status.Message = poolv1alpha1.PhaseFailed, msg
	w.Conditions = slices.DeleteFunc(slices.Clone(w.Conditions), func(c decision.Condition) bool { return c.Type == decision.CondProvisioned })
	w.Conditions = append(w.Conditions, decision.Condition{Type: decision.CondProvisioned, Status: metav1.ConditionFalse, Reason: ReasonNameTaken, Message: msg})
	if previous[decision.CondProvisioned] != ReasonNameTaken {
		w.Results = append(w.Results, decision.Result{Warning: true, Reason: ReasonNameTaken, Message: msg})
	}
	return w
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
