package objects

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// PoolCapacity's API version and kind (the burstpool provider's managed
// resource that counts executors and nodes of a pool).
const (
	CapacityAPIVersion = "capacity.e6data.io/v1alpha1"
	CapacityKind       = "PoolCapacity"
)

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
	// its warm images are on them (startup.go).
	Startup *capv1alpha1.Startup
	// WarmSlots are the warm slots the provider releases placeholders for
	// (startup.go).
	WarmSlots int32
	// WarmBuffer, when set, names the pool's CapacityBuffer, whose
	// replicas the provider keeps at the warm slots the pool still wants.
	WarmBuffer *capv1alpha1.WarmBuffer
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

// CountOnly is a copy of a that only counts: it deletes no failed
// executor, evicts no unauthorized one, enforces no share, prices nothing,
// opens no node and releases no warm slot.
func (a CapacityArgs) CountOnly() CapacityArgs {
	a.DeleteFailed, a.Unauthorized, a.EnforceShares = false, PolicyReport, false
	a.Pricing, a.Startup, a.WarmSlots, a.WarmBuffer, a.ExecutorGate = nil, nil, 0, nil, ""
	return a
}

// PoolCapacity returns the pool's PoolCapacity managed resource.
func PoolCapacity(a CapacityArgs) *unstructured.Unstructured {
	qss := make([]any, 0, len(a.QueryServices))
	for _, q := range a.QueryServices {
		var regular int64
		if q.Replicas != nil {
			regular = int64(*q.Replicas)
		}
		e := map[string]any{"name": q.Name, "namespace": q.Namespace, "regularExecutors": regular}
		if q.MaxPoolExecutors > 0 {
			e["maxPoolExecutors"] = int64(q.MaxPoolExecutors)
		}
		qss = append(qss, e)
	}
	fp := map[string]any{
		"pool":             map[string]any{"name": a.Pool, "namespace": a.Namespace},
		"nodeSelector":     StringMap(a.NodeSelector),
		"executorSelector": StringMap(WithIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelExecutorType, qsv1alpha1.ExecutorTypePool)),
		"warmupSelector":   StringMap(WithIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelComponent, qsv1alpha1.ComponentWarmup)),
		"executorsPerNode": int64(a.ExecutorsPerNode),
		"tolerations":      TolerationList(a.Tolerations),
		"maxExecutors":     int64(a.MaxExecutors),
		"queryServices":    qss,
		"suspend":          a.Suspend,
		"policies": map[string]any{
			"deleteFailedExecutors": a.DeleteFailed,
			"unauthorizedExecutors": a.Unauthorized,
			"enforceShares":         a.EnforceShares,
		},
	}
	if a.Pricing != nil {
		if p, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a.Pricing); err == nil {
			fp["pricing"] = p
		}
	}
	if a.ExecutorGate != "" {
		fp["executorGate"] = a.ExecutorGate
	}
	if a.Startup != nil {
		fp["startup"] = startupMap(a.Startup)
	}
	ws := map[string]any{
		"selector": StringMap(WithIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelComponent, qsv1alpha1.ComponentPlaceholder)),
		"gate":     qsv1alpha1.GateWarmSlot,
		"slots":    int64(a.WarmSlots),
	}
	if b := a.WarmBuffer; b != nil {
		ws["capacityBuffer"] = map[string]any{"name": b.Name, "holds": b.Holds}
	}
	fp["warmSlots"] = ws
	u := New(CapacityAPIVersion, CapacityKind, a.Pool+SuffixCapacity, "", Identity(a.Pool, a.Namespace))
	u.Object["spec"] = map[string]any{
		"forProvider":       fp,
		"providerConfigRef": map[string]any{"name": a.ProviderConfigName},
	}
	return u
}

// Disarmed is a copy of the PoolCapacity u that only counts: it deletes
// no failed executor, evicts no unauthorized one and enforces no share. A
// pool refused its names composes nothing that evicts, since the pods its
// selectors find may be another pool's.
func Disarmed(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	_ = unstructured.SetNestedMap(c.Object, map[string]any{
		"deleteFailedExecutors": false,
		"unauthorizedExecutors": PolicyReport,
		"enforceShares":         false,
	}, "spec", "forProvider", "policies")
	return c
}

// startupMap is a Startup as the PoolCapacity's spec holds it.
func startupMap(s *capv1alpha1.Startup) map[string]any {
	imgs := make([]any, 0, len(s.Images))
	for _, i := range s.Images {
		imgs = append(imgs, i)
	}
	return map[string]any{
		"taint":     map[string]any{"key": s.Taint.Key, "value": s.Taint.Value, "effect": string(s.Taint.Effect)},
		"images":    imgs,
		"openAfter": s.OpenAfter.Duration.String(),
	}
}

// Unauthorized-executor policies (a Pool's spec.unauthorizedExecutors).
const (
	PolicyReport = "Report"
	PolicyEvict  = "Evict"
	PolicyDeny   = "Deny"
)
