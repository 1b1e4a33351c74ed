package decision

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
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

// decideCapacity decides the PoolCapacity, which counts the pool's nodes
// and executors (maxExecutors among them) and applies its policies; buffer
// names the CapacityBuffer whose replicas it keeps, if any.
func decideCapacity(in Input, f Facts, images []string, buffer *capv1alpha1.WarmBuffer) Outcome {
	var o Outcome
	if len(f.Scheduling.NodeSelector) == 0 {
		// Nothing picks the pool's nodes yet (Pending): keep what exists.
		o.preserve(objects.ComposedCapacity)
		return o
	}
	a := capacityArgs(in, f, images)
	a.WarmBuffer = buffer
	if (buffer != nil && buffer.Holds) || a.EnforceShares {
		// New executors are admitted gated, for the provider to hold
		// back those that would launch a node for a warm slot or take a
		// slot freed for another QueryService's waiter.
		a.ExecutorGate = qsv1alpha1.GateExecutor
	}
	// It lists every attached QueryService: the largest object of a large
	// pool, and the same from call to call until one attaches or leaves.
	o.desireLazy(objects.ComposedCapacity, objects.CapacityKind, a.Pool+objects.SuffixCapacity, Lazy{Key: capacityKey(a), Build: func() *unstructured.Unstructured { return objects.PoolCapacity(a) }},
		observed.Ready(in.Observed[objects.ComposedCapacity], false), true)
	return o
}

// capacityArgs is what the pool's PoolCapacity counts and enforces: the
// pool's nodes (f.Scheduling), at most maxExecutors executors at f.PerNode
// a node, the attached QueryServices with their shares, the settings'
// policies, and the startup and warm slots of its images.
func capacityArgs(in Input, f Facts, images []string) objects.CapacityArgs {
	policy := in.Config.Capacity
	unauthorized := unauthorizedPolicy(in)
	if unauthorized == objects.PolicyDeny {
		// Admission keeps them out; any that ran before are listed.
		unauthorized = objects.PolicyReport
	}
	return objects.CapacityArgs{
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
func capacityQueryServices(in Input, attached []Attachment) []objects.CapacityQueryService {
	sh := shares(in, attached)
	out := make([]objects.CapacityQueryService, 0, len(attached))
	for _, q := range attached {
		c := objects.CapacityQueryService{Name: q.Name, Namespace: q.Namespace, MaxPoolExecutors: sh[q.Key()]}
		if q.QS != nil {
			c.Replicas = q.QS.Spec.Executor.Replicas
		}
		out = append(out, c)
	}
	return out
}

// capacityKey encodes everything a PoolCapacity is made of, without the
// cost of JSON for a thousand QueryServices.
func capacityKey(a objects.CapacityArgs) string {
	var b strings.Builder
	b.Grow(64 + 48*len(a.QueryServices))
	w := func(ss ...string) {
		for _, s := range ss {
			b.WriteString(s)
			b.WriteByte(0)
		}
	}
	w(objects.CapacityKind, a.Pool, a.Namespace, strconv.Itoa(int(a.ExecutorsPerNode)), strconv.Itoa(int(a.MaxExecutors)),
		strconv.FormatBool(a.Suspend), strconv.FormatBool(a.DeleteFailed), a.Unauthorized, a.ProviderConfigName,
		strconv.FormatBool(a.EnforceShares), a.ExecutorGate)
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
	if wb := a.WarmBuffer; wb != nil {
		w(wb.Name, strconv.FormatBool(wb.Holds))
	}
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
		override[RefNamespace(o.Namespace, in.Namespace)+"/"+o.Name] = o.MaxPoolExecutors
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
