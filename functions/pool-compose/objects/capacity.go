package objects

import (
	"reflect"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// CapacityAPIVersion is the PoolCapacity's API version, the capacity
// API's group and version.
const CapacityAPIVersion = capv1alpha1.Group + "/" + capv1alpha1.Version

// CapacityKind is the PoolCapacity's kind, the capacity API's
// PoolCapacityKind.
var CapacityKind = capv1alpha1.PoolCapacityKind

// CapacityArgs is what a PoolCapacity is made of.
type CapacityArgs struct {
	Pool, Namespace    string
	NodeSelector       map[string]string
	ExecutorsPerNode   int32
	MaxExecutors       int32
	QueryServices      []CapacityQueryService
	Suspend            bool
	DeleteFailed       bool
	Unauthorized       string
	ProviderConfigName string
	// EnforceShares evicts executors above a QueryService's
	// MaxPoolExecutors.
	EnforceShares bool
	// Tolerations are the pool executors' (status.executorScheduling):
	// nodes whose taints they tolerate offer slots.
	Tolerations []corev1.Toleration
	// Pricing is the settings' capacity.pricing, written only when set.
	Pricing *capv1alpha1.Pricing
	// Startup, when set, has the provider open the pool's new nodes once
	// its warm images are on them (internal/capacity/taints.go).
	Startup *capv1alpha1.Startup
	// WarmSlots are the warm slots the provider releases placeholders for
	// (internal/capacity/warm.go).
	WarmSlots int32
	// WarmBuffer, when set, names the pool's CapacityBuffer, whose
	// replicas the provider keeps at the warm slots the pool still wants.
	WarmBuffer *capv1alpha1.WarmBuffer
	// WarmPolicy, when set, asks the provider for a learned warm level
	// (status.atProvider.warmRecommendation).
	WarmPolicy *capv1alpha1.WarmPolicy
	// ExecutorGate, when set, is the scheduling gate the pool's new
	// executors are admitted with, for the provider to hold some back.
	ExecutorGate string
}

// CapacityQueryService is one attached QueryService as the PoolCapacity
// lists it.
type CapacityQueryService struct {
	Name, Namespace string
	// Replicas are its regular executors; nil when unknown.
	Replicas *int32
	// MaxPoolExecutors is its share of the pool; 0 when it has none.
	MaxPoolExecutors int32
}

// countingPolicies are the policies of a PoolCapacity that only counts.
var countingPolicies = capv1alpha1.Policies{UnauthorizedExecutors: capv1alpha1.UnauthorizedReport}

// CountOnly is a copy of a that only counts: it deletes no failed
// executor, evicts no unauthorized one, enforces no share, prices nothing,
// opens no node, releases no warm slot and asks for no learned level.
func (a CapacityArgs) CountOnly() CapacityArgs {
	p := countingPolicies
	a.DeleteFailed, a.Unauthorized, a.EnforceShares = p.DeleteFailedExecutors, string(p.UnauthorizedExecutors), p.EnforceShares
	a.Pricing, a.Startup, a.WarmSlots, a.WarmBuffer, a.WarmPolicy, a.ExecutorGate = nil, nil, 0, nil, nil, ""
	return a
}

// PoolCapacity returns the pool's PoolCapacity managed resource: the
// capacity API's PoolCapacity, converted once, with the optional fields
// zeroWritten lists written even when they are zero.
func PoolCapacity(a CapacityArgs) *unstructured.Unstructured {
	pc := &capv1alpha1.PoolCapacity{
		TypeMeta:   metav1.TypeMeta{APIVersion: capv1alpha1.SchemeGroupVersion.String(), Kind: capv1alpha1.PoolCapacityKind},
		ObjectMeta: metav1.ObjectMeta{Name: a.Pool + SuffixCapacity, Labels: Identity(a.Pool, a.Namespace)},
		Spec: capv1alpha1.PoolCapacitySpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: a.ProviderConfigName}},
			ForProvider:                capacityParameters(a),
		},
	}
	u := ToUnstructured(pc)
	p := &pc.Spec.ForProvider
	fill(u.Object, zeroFields(pc, zeroWritten(p)...))
	var q capv1alpha1.AttachedQueryService
	perQS := zeroFields(&q, &q.RegularExecutors)
	qss, _, _ := unstructured.NestedFieldNoCopy(u.Object, jsonPath(pc, &p.QueryServices)...)
	l, _ := qss.([]any)
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			fill(m, perQS)
		}
	}
	return u
}

// Parameters is the PoolCapacity's spec.forProvider that a makes, as the
// provider reads it (to price a slot as it does, say).
func (a CapacityArgs) Parameters() capv1alpha1.PoolCapacityParameters {
	return capacityParameters(a)
}

// capacityParameters is the PoolCapacity's spec.forProvider: the pool's
// nodes, executors, warmup and placeholder pods by their labels, its
// attached QueryServices and what the provider may do about them.
func capacityParameters(a CapacityArgs) capv1alpha1.PoolCapacityParameters {
	qss := make([]capv1alpha1.AttachedQueryService, 0, len(a.QueryServices))
	for _, q := range a.QueryServices {
		qss = append(qss, capv1alpha1.AttachedQueryService{
			Name: q.Name, Namespace: q.Namespace,
			RegularExecutors: ptr.Deref(q.Replicas, 0), MaxPoolExecutors: q.MaxPoolExecutors,
		})
	}
	return capv1alpha1.PoolCapacityParameters{
		Pool:             capv1alpha1.PoolRef{Name: a.Pool, Namespace: a.Namespace},
		NodeSelector:     a.NodeSelector,
		ExecutorSelector: WithIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelExecutorType, qsv1alpha1.ExecutorTypePool),
		WarmupSelector:   WithIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelComponent, qsv1alpha1.ComponentWarmup),
		Tolerations:      a.Tolerations,
		ExecutorsPerNode: a.ExecutorsPerNode,
		MaxExecutors:     a.MaxExecutors,
		QueryServices:    qss,
		Suspend:          a.Suspend,
		Policies: capv1alpha1.Policies{
			DeleteFailedExecutors: a.DeleteFailed,
			UnauthorizedExecutors: capv1alpha1.UnauthorizedExecutorPolicy(a.Unauthorized),
			EnforceShares:         a.EnforceShares,
		},
		ExecutorGate: a.ExecutorGate,
		Pricing:      a.Pricing,
		Startup:      a.Startup,
		WarmSlots: &capv1alpha1.WarmSlots{
			Selector:       WithIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelComponent, qsv1alpha1.ComponentPlaceholder),
			Gate:           qsv1alpha1.GateWarmSlot,
			Slots:          a.WarmSlots,
			CapacityBuffer: a.WarmBuffer,
		},
		WarmPolicy: a.WarmPolicy,
	}
}

// zeroWritten lists the fields of p that a PoolCapacity carries even when
// they are zero, though their JSON tags leave them out (or write null)
// then: the pool's namespace, the node selector, the tolerations and the
// QueryServices, suspend, every policy, and, when set, the startup's
// images and taint value and the CapacityBuffer's holds. A QueryService's
// regularExecutors is one more, per QueryService. Every other optional
// field is left out when zero, as its tag says.
func zeroWritten(p *capv1alpha1.PoolCapacityParameters) []any {
	fs := append([]any{&p.Pool.Namespace, &p.NodeSelector, &p.Tolerations, &p.QueryServices, &p.Suspend}, policyFields(&p.Policies)...)
	if s := p.Startup; s != nil {
		fs = append(fs, &s.Images, &s.Taint.Value)
	}
	if p.WarmSlots != nil && p.WarmSlots.CapacityBuffer != nil {
		fs = append(fs, &p.WarmSlots.CapacityBuffer.Holds)
	}
	return fs
}

// policyFields lists every field of p.
func policyFields(p *capv1alpha1.Policies) []any {
	return []any{&p.DeleteFailedExecutors, &p.UnauthorizedExecutors, &p.EnforceShares}
}

// Disarmed is a copy of the PoolCapacity u that only counts: it deletes
// no failed executor, evicts no unauthorized one and enforces no share. A
// pool refused its names composes nothing that evicts, since the pods its
// selectors find may be another pool's.
func Disarmed(u *unstructured.Unstructured) *unstructured.Unstructured {
	pc := &capv1alpha1.PoolCapacity{}
	p := &pc.Spec.ForProvider.Policies
	*p = countingPolicies
	d := ToUnstructured(pc)
	fill(d.Object, zeroFields(pc, policyFields(p)...))
	path := jsonPath(pc, p)
	policies, _, _ := unstructured.NestedFieldNoCopy(d.Object, path...)
	c := u.DeepCopy()
	_ = unstructured.SetNestedField(c.Object, policies, path...)
	return c
}

// A zeroField is the path of a field in an unstructured object and the
// field's type.
type zeroField struct {
	path []string
	typ  reflect.Type
}

// zeroFields are fields (pointers to fields of the struct *v, as
// jsonPath takes them) as paths in the unstructured form of *v.
func zeroFields(v any, fields ...any) []zeroField {
	zfs := make([]zeroField, 0, len(fields))
	for _, f := range fields {
		if path := jsonPath(v, f); len(path) > 0 {
			zfs = append(zfs, zeroField{path: path, typ: reflect.TypeOf(f).Elem()})
		}
	}
	return zfs
}

// fill writes into u each of zfs that the conversion left out or wrote
// as null, as its zero value.
func fill(u map[string]any, zfs []zeroField) {
	for _, zf := range zfs {
		parent, _, _ := unstructured.NestedFieldNoCopy(u, zf.path[:len(zf.path)-1]...)
		if m, ok := parent.(map[string]any); ok && m[zf.path[len(zf.path)-1]] == nil {
			m[zf.path[len(zf.path)-1]] = zeroOf(zf.typ)
		}
	}
}

// zeroOf is the unstructured zero value of a field of type t: false, "",
// 0, an empty list or an empty map, by its kind.
func zeroOf(t reflect.Type) any {
	switch t.Kind() {
	case reflect.Bool:
		return false
	case reflect.String:
		return ""
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int64(0)
	case reflect.Slice:
		return []any{}
	case reflect.Map:
		return map[string]any{}
	}
	return nil
}

// jsonPath is the path of the field f points to in the unstructured form
// of the struct *v: the JSON names of the fields from *v down to it,
// through embedded structs, structs and pointers to structs (not lists or
// maps). It is nil when f is not a field of *v.
func jsonPath(v, f any) []string {
	fv := reflect.ValueOf(f)
	path, _ := findField(reflect.ValueOf(v).Elem(), fv.Pointer(), fv.Type().Elem(), nil)
	return path
}

// findField looks for the field at addr of type t in the struct v, whose
// path is path.
func findField(v reflect.Value, addr uintptr, t reflect.Type, path []string) ([]string, bool) {
	for i := range v.NumField() {
		sf, f := v.Type().Field(i), v.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case !sf.IsExported() || name == "-":
			continue
		case name == "" && !sf.Anonymous:
			name = sf.Name
		}
		p := path
		if name != "" {
			p = append(path[:len(path):len(path)], name)
		}
		if f.Addr().Pointer() == addr && f.Type() == t {
			return p, true
		}
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			f = f.Elem()
		}
		if f.Kind() == reflect.Struct {
			if found, ok := findField(f, addr, t, p); ok {
				return found, true
			}
		}
	}
	return nil, false
}

// PolicyDeny is the value of a Pool's spec.unauthorizedExecutors that
// keeps unauthorized executors off the pool at admission (admission.go).
// Its other values, Report and Evict, are the PoolCapacity's own
// (capv1alpha1.UnauthorizedExecutorPolicy); the PoolCapacity has no Deny:
// a denying pool's PoolCapacity reports the executors that ran before.
const PolicyDeny = "Deny"
