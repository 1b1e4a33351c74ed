package main

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// PoolCapacity's API version and kind (the burstpool provider's managed
// resource that counts executors and nodes of a pool).
const (
	capacityAPIVersion = "capacity.e6data.io/v1alpha1"
	capacityKind       = "PoolCapacity"
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
	a.DeleteFailed, a.Unauthorized, a.EnforceShares = false, policyReport, false
	a.Pricing, a.Startup, a.WarmSlots = nil, nil, 0
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
		"nodeSelector":     stringMap(a.NodeSelector),
		"executorSelector": stringMap(withIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelExecutorType, qsv1alpha1.ExecutorTypePool)),
		"warmupSelector":   stringMap(withIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelComponent, qsv1alpha1.ComponentWarmup)),
		"executorsPerNode": int64(a.ExecutorsPerNode),
		"tolerations":      tolerationList(a.Tolerations),
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
	if a.Startup != nil {
		fp["startup"] = startupMap(a.Startup)
	}
	fp["warmSlots"] = map[string]any{
		"selector": stringMap(withIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelComponent, qsv1alpha1.ComponentPlaceholder)),
		"gate":     qsv1alpha1.GateWarmSlot,
		"slots":    int64(a.WarmSlots),
	}
	u := object(capacityAPIVersion, capacityKind, a.Pool+sfxCapacity, "", nodeIdentity(a.Pool, a.Namespace))
	u.Object["spec"] = map[string]any{
		"forProvider":       fp,
		"providerConfigRef": map[string]any{"name": a.ProviderConfigName},
	}
	return u
}

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

// decideCapacity decides the PoolCapacity, which counts the pool's nodes
// and executors (maxExecutors among them) and applies its policies.
func decideCapacity(in Input, f Facts, images []string) Outcome {
	var o Outcome
	if len(f.Scheduling.NodeSelector) == 0 {
		// Nothing picks the pool's nodes yet (Pending): keep what exists.
		o.preserve(rnCapacity)
		return o
	}
	a := capacityArgs(in, f, images)
	// It lists every attached QueryService: the largest object of a large
	// pool, and the same from call to call until one attaches or leaves.
	o.desireLazy(rnCapacity, capacityKind, a.Pool+sfxCapacity, Lazy{Key: capacityKey(a), Build: func() *unstructured.Unstructured { return PoolCapacity(a) }},
		observed.Ready(in.Observed[rnCapacity], false), true)
	return o
}

// capacityArgs is what the pool's PoolCapacity counts and enforces: the
// pool's nodes (f.Scheduling), at most maxExecutors executors at f.PerNode
// a node, the attached QueryServices with their shares, the settings'
// policies, and the startup and warm slots of its images.
func capacityArgs(in Input, f Facts, images []string) CapacityArgs {
	policy := in.Config.Capacity
	unauthorized := unauthorizedPolicy(in)
	if unauthorized == policyDeny {
		// Admission keeps them out; any that ran before are listed.
		unauthorized = policyReport
	}
	return CapacityArgs{
		Pool: in.Pool, Namespace: in.Namespace, NodeSelector: f.Scheduling.NodeSelector,
		ExecutorsPerNode: f.PerNode, MaxExecutors: in.Spec.MaxExecutors, QueryServices: capacityQueryServices(in, f.Attached),
		Suspend: in.Spec.Suspend, DeleteFailed: policy.DeleteFailedExecutors, Unauthorized: unauthorized,
		ProviderConfigName: policy.ProviderConfigName,
		Tolerations:        f.Scheduling.Tolerations,
		EnforceShares:      in.Spec.QueryServiceLimits != nil && in.Spec.QueryServiceLimits.Enforce,
		Pricing:            policy.Pricing,
		Startup:            startupOf(in, f, images), WarmSlots: min(in.Spec.MinExecutors, in.Spec.MaxExecutors),
	}
}

// capacityQueryServices lists the attached QueryServices with their
// regular executors and shares.
func capacityQueryServices(in Input, attached []Attachment) []CapacityQueryService {
	sh := shares(in, attached)
	out := make([]CapacityQueryService, 0, len(attached))
	for _, q := range attached {
		c := CapacityQueryService{Name: q.Name, Namespace: q.Namespace, MaxPoolExecutors: sh[q.Key()]}
		if q.QS != nil {
			c.Replicas = q.QS.Spec.Executor.Replicas
		}
		out = append(out, c)
	}
	return out
}

// disarmed is a copy of the PoolCapacity u that only counts: it deletes
// no failed executor, evicts no unauthorized one and enforces no share. A
// pool refused its names composes nothing that evicts, since the pods its
// selectors find may be another pool's.
func disarmed(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	_ = unstructured.SetNestedMap(c.Object, map[string]any{
		"deleteFailedExecutors": false,
		"unauthorizedExecutors": policyReport,
		"enforceShares":         false,
	}, "spec", "forProvider", "policies")
	return c
}

// capacityKey encodes everything a PoolCapacity is made of, without the
// cost of JSON for a thousand QueryServices.
func capacityKey(a CapacityArgs) string {
	var b strings.Builder
	b.Grow(64 + 48*len(a.QueryServices))
	w := func(ss ...string) {
		for _, s := range ss {
			b.WriteString(s)
			b.WriteByte(0)
		}
	}
	w(capacityKind, a.Pool, a.Namespace, strconv.Itoa(int(a.ExecutorsPerNode)), strconv.Itoa(int(a.MaxExecutors)),
		strconv.FormatBool(a.Suspend), strconv.FormatBool(a.DeleteFailed), a.Unauthorized, a.ProviderConfigName,
		strconv.FormatBool(a.EnforceShares))
	for _, k := range slices.Sorted(maps.Keys(a.NodeSelector)) {
		w(k, a.NodeSelector[k])
	}
	b.WriteByte(1)
	for _, t := range a.Tolerations {
		seconds := "-"
		if t.TolerationSeconds != nil {
			seconds = strconv.FormatInt(*t.TolerationSeconds, 10)
		}
		w(t.Key, string(t.Operator), t.Value, string(t.Effect), seconds)
	}
	b.WriteByte(1)
	for _, q := range a.QueryServices {
		regular := int32(-1)
		if q.Replicas != nil {
			regular = *q.Replicas
		}
		w(q.Namespace, q.Name, strconv.Itoa(int(regular)), strconv.Itoa(int(q.MaxPoolExecutors)))
	}
	b.WriteByte(1)
	w(strconv.Itoa(int(a.WarmSlots)))
	if st := a.Startup; st != nil {
		w(st.Taint.Key, st.Taint.Value, string(st.Taint.Effect), st.OpenAfter.String())
		w(st.Images...)
	}
	if p := a.Pricing; p != nil {
		b.WriteByte(1)
		w(p.Catalog)
		for _, d := range p.Discounts {
			w(d.CapacityType, d.Discount)
		}
		b.WriteByte(1)
		for _, ip := range p.Prices {
			w(ip.InstanceType, ip.CapacityType, ip.PerHour)
		}
	}
	return b.String()
}

// withIdentity is the pool's identity labels and one more label k=v: the
// selector of one kind of the pool's pods.
func withIdentity(pool, ns, k, v string) map[string]string {
	l := nodeIdentity(pool, ns)
	l[k] = v
	return l
}

// shares are the attached QueryServices' maxPoolExecutors by
// "namespace/name": spec.queryServiceLimits' override, else its default;
// nil when the pool bounds none.
func shares(in Input, attached []Attachment) map[string]int32 {
	l := in.Spec.QueryServiceLimits
	if l == nil {
		return nil
	}
	override := make(map[string]int32, len(l.Overrides))
	for _, o := range l.Overrides {
		override[refNamespace(o.Namespace, in.Namespace)+"/"+o.Name] = o.MaxPoolExecutors
	}
	out := map[string]int32{}
	for _, a := range attached {
		out[a.Key()] = l.MaxPoolExecutors
		if n, ok := override[a.Key()]; ok {
			out[a.Key()] = n
		}
	}
	return out
}

// tolerationList renders tolerations as unstructured objects.
func tolerationList(ts []corev1.Toleration) []any {
	out := make([]any, 0, len(ts))
	for _, t := range ts {
		m := map[string]any{}
		for k, v := range map[string]string{"key": t.Key, "operator": string(t.Operator), "value": t.Value, "effect": string(t.Effect)} {
			if v != "" {
				m[k] = v
			}
		}
		if t.TolerationSeconds != nil {
			m["tolerationSeconds"] = *t.TolerationSeconds
		}
		out = append(out, m)
	}
	return out
}

// startupOf is what the provider opens a Karpenter pool's new nodes by:
// the startup taint its NodePool gives them (warmingTaint), the warm
// images and warmup.openAfter; nil when its nodes carry no startup taint.
// A cloud's own node pools (LKE, DOKS, CoreWeave) have no startup taints
// that their autoscalers ignore, and existing nodes are the platform's.
func startupOf(in Input, f Facts, images []string) *capv1alpha1.Startup {
	if f.Detection.Method != methodKarpenter && f.Detection.Method != methodEKSAutoMode {
		return nil
	}
	t := warmingTaint(in.Pool, len(images), in.Config.Warmup)
	if t == nil {
		return nil
	}
	d, _ := openAfter(in.Config.Warmup)
	return &capv1alpha1.Startup{Taint: *t, Images: images, OpenAfter: metav1.Duration{Duration: d}}
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
