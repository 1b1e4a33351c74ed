package decision

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// decideCapacity decides the PoolCapacity, which counts the pool's nodes
// and executors (maxExecutors among them) and applies its policies; buffer
// names the CapacityBuffer whose replicas it keeps, if any.
func decideCapacity(in Input, f Facts, images []string, buffer *capv1alpha1.WarmBuffer, learned *capv1alpha1.WarmPolicy) Outcome {
	var o Outcome
	if len(f.Scheduling.NodeSelector) == 0 {
		// Nothing picks the pool's nodes yet (Pending): keep what exists.
		o.preserve(objects.ComposedCapacity)
		return o
	}
	a := capacityArgs(in, f, images)
	a.WarmBuffer = buffer
	a.WarmPolicy = learned
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
		unauthorized = string(capv1alpha1.UnauthorizedReport)
	}
	return objects.CapacityArgs{
		Pool: in.Pool, Namespace: in.Namespace, NodeSelector: f.Scheduling.NodeSelector,
		ExecutorsPerNode: f.PerNode, MaxExecutors: in.Spec.MaxExecutors, QueryServices: capacityQueryServices(in, f.Attached),
		Suspend: in.Spec.Suspend, DeleteFailed: policy.DeleteFailedExecutors, Unauthorized: unauthorized,
		ProviderConfigName: policy.ProviderConfigName,
		Tolerations:        f.Scheduling.Tolerations,
		EnforceShares:      in.Spec.QueryServiceLimits != nil && in.Spec.QueryServiceLimits.Enforce,
		Pricing:            policy.Pricing,
		Startup:            startupOf(in, f, images), WarmSlots: f.WarmLevel,
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
	if wp := a.WarmPolicy; wp != nil && wp.Learned != nil {
		l := wp.Learned
		w("learned", strconv.Itoa(int(l.TargetWarmPercent)), l.Lead.String(), strconv.Itoa(int(l.MaxSlots)), l.MaxDollarsPerHour)
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
