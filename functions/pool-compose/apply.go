package main

import (
	"time"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// The status is encoded straight into protobuf Structs, and decoded straight
// from them (decodeStatus, fn.go), for the few fields the function uses: a
// pool may have a thousand QueryServices, and going through JSON for each
// costs more than everything else the function does.

// apply writes Compute's Output into the response.
func apply(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, in decision.Input, out decision.Output, cache *renderCache) error {
	preserve := map[resource.Name]bool{}
	for _, n := range out.Preserve {
		preserve[n] = true
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	put := func(n resource.Name, st *structpb.Struct, ready resource.Ready) {
		rsp.Desired.Resources[string(n)] = &fnv1.Resource{Resource: st, Ready: readyProto(ready)}
	}
	for n, u := range out.Desired {
		st, err := resource.AsStruct(u)
		if err != nil {
			return errors.Wrapf(err, "cannot encode %s", n)
		}
		put(n, st, out.Ready[n])
	}
	for n, l := range out.Lazy {
		st, err := cache.render(l)
		if err != nil {
			return errors.Wrapf(err, "cannot encode %s", n)
		}
		put(n, st, out.Ready[n])
	}
	for n := range preserve {
		_, d := out.Desired[n]
		_, l := out.Lazy[n]
		if o := in.Observed[n]; o != nil && !d && !l {
			if err := keepOne(rsp, n, o); err != nil {
				return err
			}
		}
	}
	if in.Deleting {
		for n, o := range in.Observed {
			if _, ok := rsp.Desired.Resources[string(n)]; !ok {
				if err := keepOne(rsp, n, o); err != nil {
					return err
				}
			}
		}
	}

	// Only the status is set on the desired XPool, straight into the
	// Struct: decoding the whole XPool to set one field costs more than
	// composing the pool.
	dxr := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for k, v := range req.GetDesired().GetComposite().GetResource().GetFields() {
		dxr.Fields[k] = v
	}
	dxr.Fields["status"] = statusValue(out.Status, out.CountsUnknown, newPreviousReports(in.Previous.AttachedQueryServices, observed.Field(req.GetObserved().GetComposite().GetResource(), "status").GetStructValue()))
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	rsp.Desired.Composite = &fnv1.Resource{Resource: dxr, ConnectionDetails: req.GetDesired().GetComposite().GetConnectionDetails(), Ready: req.GetDesired().GetComposite().GetReady()}

	for _, c := range out.Conditions {
		var co *response.ConditionOption
		switch c.Status {
		case "True":
			co = response.ConditionTrue(rsp, c.Type, c.Reason)
		case "False":
			co = response.ConditionFalse(rsp, c.Type, c.Reason)
		default:
			co = response.ConditionUnknown(rsp, c.Type, c.Reason)
		}
		if c.Message != "" {
			co = co.WithMessage(c.Message)
		}
		co.TargetCompositeAndClaim()
	}
	for _, r := range out.Results {
		if r.Warning {
			response.Warning(rsp, errors.New(r.Message)).WithReason(r.Reason).TargetCompositeAndClaim()
			continue
		}
		response.Normal(rsp, r.Message).WithReason(r.Reason).TargetCompositeAndClaim()
	}
	if out.RequeueAfter > 0 && out.RequeueAfter < response.DefaultTTL {
		rsp.Meta.Ttl = durationpb.New(max(out.RequeueAfter, decision.MinRequeueAfter))
	}
	return nil
}

// keepObserved copies every observed object into desired state unchanged,
// unless an earlier pipeline step desires it.
func keepObserved(rsp *fnv1.RunFunctionResponse, observed map[resource.Name]*structpb.Struct) error {
	for n, o := range observed {
		if _, ok := rsp.GetDesired().GetResources()[string(n)]; ok {
			continue
		}
		if err := keepOne(rsp, n, o); err != nil {
			return err
		}
	}
	return nil
}

// keepOne puts the observed object o into desired state as n.
func keepOne(rsp *fnv1.RunFunctionResponse, n resource.Name, o *structpb.Struct) error {
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	rsp.Desired.Resources[string(n)] = &fnv1.Resource{Resource: observed.Keep(o)}
	return nil
}

// readyProto converts a readiness.
func readyProto(r resource.Ready) fnv1.Ready {
	switch r {
	case resource.ReadyTrue:
		return fnv1.Ready_READY_TRUE
	case resource.ReadyFalse:
		return fnv1.Ready_READY_FALSE
	}
	return fnv1.Ready_READY_UNSPECIFIED
}

// statusValue encodes the pool's status as a Struct value, in the shapes of
// e6data's Pool reference (sections 5.1, 5.3-5.5). Counters and
// compatible are always written, zero and false included, so that
// `kubectl get pool` prints 0 and jsonpath filters on compatible==false
// match, except that countsUnknown leaves the executor and node counts out
// (the PoolCapacity's figures are stale: `kubectl get pool` prints <none>,
// not numbers that may be wrong); burstpool's extensions sit beside the
// reference's fields. The reports of QueryServices that prev holds
// unchanged are prev's.
func statusValue(st poolv1alpha1.PoolStatus, countsUnknown bool, prev *previousReports) *structpb.Value {
	m := fields{}
	m.text("phase", string(st.Phase))
	m.text("message", st.Message)
	m.text("cloud", st.Cloud)
	m.text("provisioningMethod", st.ProvisioningMethod)
	m.text("derivedInstanceType", st.DerivedInstanceType)
	m.text("derivedFrom", st.DerivedFrom)
	if !countsUnknown {
		m.counter("totalExecutors", st.TotalExecutors)
		m.counter("availableExecutors", st.AvailableExecutors)
		m.counter("occupiedExecutors", st.OccupiedExecutors)
		m.counter("pendingExecutors", st.PendingExecutors)
		m.counter("currentNodes", st.CurrentNodes)
	}
	m.text("nodePoolName", st.NodePoolName)
	m.text("nodeClassName", st.NodeClassName)
	setList(m, "allocations", st.Allocations, allocationValue)
	setList(m, "cachedImages", st.CachedImages, cachedImageValue)
	setList(m, "attachedQueryServices", st.AttachedQueryServices, func(a poolv1alpha1.AttachedQueryService) *structpb.Value {
		if v := prev.reuse(a); v != nil {
			return v
		}
		return attachedValue(a)
	})
	if es := st.ExecutorScheduling; es != nil {
		m.set("executorScheduling", schedulingValue(es))
	}
	if sz := st.Sizing; sz != nil {
		m.set("sizing", sizingValue(sz))
	}
	setList(m, "executorFailures", st.ExecutorFailures, failureCountValue)
	setList(m, "unauthorizedExecutors", st.UnauthorizedExecutors, unauthorizedValue)
	if c := st.Cost; c != nil {
		m.set("cost", costValue(c))
	}
	if w := st.WarmCapacity; w != nil {
		m.set("warmCapacity", warmCapacityValue(w))
	}
	if w := st.WarmPolicy; w != nil {
		m.set("warmPolicy", warmPolicyValue(w))
	}
	return m.value()
}

func allocationValue(a poolv1alpha1.Allocation) *structpb.Value {
	o := fields{}
	o.set("queryService", queryServiceValue(a.QueryService))
	o.counter("poolExecutors", a.PoolExecutors)
	o.counter("regularExecutors", a.RegularExecutors)
	o.time("allocatedAt", a.AllocatedAt)
	return o.value()
}

func cachedImageValue(c poolv1alpha1.CachedImage) *structpb.Value {
	o := fields{}
	o.set("image", structpb.NewStringValue(c.Image))
	o.text("hash", c.Hash)
	o.text("source", c.Source)
	o.text("warmupStatus", string(c.WarmupStatus))
	o.text("daemonSetName", c.DaemonSetName)
	o.counter("nodesReady", c.NodesReady)
	o.counter("nodesTotal", c.NodesTotal)
	o.time("unusedSince", c.UnusedSince)
	o.text("message", c.Message)
	return o.value()
}

func attachedValue(a poolv1alpha1.AttachedQueryService) *structpb.Value {
	o := fields{}
	o.set("queryService", queryServiceValue(a.QueryService))
	o.set("compatible", structpb.NewBoolValue(a.Compatible))
	o.text("instanceType", a.InstanceType)
	o.text("requiredCpu", a.RequiredCPU)
	o.text("requiredMemory", a.RequiredMemory)
	o.text("message", a.Message)
	o.time("lastChecked", a.LastChecked)
	o.set("attached", structpb.NewBoolValue(a.Attached))
	if a.MaxPoolExecutors > 0 {
		o.counter("maxPoolExecutors", a.MaxPoolExecutors)
	}
	return o.value()
}

func schedulingValue(es *poolv1alpha1.ExecutorScheduling) *structpb.Value {
	o := fields{}
	o.set("labels", stringsValue(es.Labels))
	o.set("nodeSelector", stringsValue(es.NodeSelector))
	o.set("tolerations", listValue(es.Tolerations, tolerationValue))
	if len(es.Annotations) > 0 {
		o.set("annotations", stringsValue(es.Annotations))
	}
	return o.value()
}

func tolerationValue(t poolv1alpha1.Toleration) *structpb.Value {
	o := fields{}
	o.text("key", t.Key)
	o.text("operator", t.Operator)
	o.text("value", t.Value)
	o.text("effect", t.Effect)
	if t.TolerationSeconds != nil {
		o.set("tolerationSeconds", structpb.NewNumberValue(float64(*t.TolerationSeconds)))
	}
	return o.value()
}

func sizingValue(sz *poolv1alpha1.SizingStatus) *structpb.Value {
	o := fields{}
	o.flag("executorsHaveRun", sz.ExecutorsHaveRun)
	o.text("kept", sz.Kept)
	o.text("architecture", sz.Architecture)
	o.text("architectureFrom", sz.ArchitectureFrom)
	o.nonZero("executorsPerNode", sz.ExecutorsPerNode)
	setList(o, "instanceTypes", sz.InstanceTypes, func(t poolv1alpha1.OfferedInstanceType) *structpb.Value {
		to := fields{}
		to.set("name", structpb.NewStringValue(t.Name))
		to.nonZero("executorsPerNode", t.ExecutorsPerNode)
		to.text("reason", t.Reason)
		return to.value()
	})
	return o.value()
}

func failureCountValue(f poolv1alpha1.ExecutorFailureCount) *structpb.Value {
	o := fields{}
	o.set("reason", structpb.NewStringValue(f.Reason))
	o.counter("count", f.Count)
	return o.value()
}

func unauthorizedValue(u poolv1alpha1.UnauthorizedExecutor) *structpb.Value {
	o := fields{}
	o.set("pod", structpb.NewStringValue(u.Pod))
	o.set("namespace", structpb.NewStringValue(u.Namespace))
	o.text("queryService", u.QueryService)
	return o.value()
}

func warmCapacityValue(w *poolv1alpha1.WarmCapacityStatus) *structpb.Value {
	o := fields{}
	o.text("method", w.Method)
	o.counter("slots", w.Slots)
	o.text("capacityBuffer", w.CapacityBuffer)
	o.time("awaitingSince", w.AwaitingSince)
	return o.value()
}

func warmPolicyValue(w *poolv1alpha1.WarmPolicyStatus) *structpb.Value {
	o := fields{}
	o.set("type", structpb.NewStringValue(w.Type))
	o.counter("executors", w.Executors)
	o.set("source", structpb.NewStringValue(w.Source))
	o.text("reason", w.Reason)
	o.time("until", w.Until)
	o.text("dollarsPerHour", w.DollarsPerHour)
	return o.value()
}

// setList writes items, each encoded by encode, as a list, leaving out an
// empty one as omitempty does.
func setList[T any](o fields, k string, items []T, encode func(T) *structpb.Value) {
	if len(items) > 0 {
		o[k] = listValue(items, encode)
	}
}

// listValue encodes each of items as a list.
func listValue[T any](items []T, encode func(T) *structpb.Value) *structpb.Value {
	l := make([]*structpb.Value, 0, len(items))
	for _, it := range items {
		l = append(l, encode(it))
	}
	return structpb.NewListValue(&structpb.ListValue{Values: l})
}

// stringsValue encodes a string map.
func stringsValue(m map[string]string) *structpb.Value {
	o := fields{}
	for k, v := range m {
		o.set(k, structpb.NewStringValue(v))
	}
	return o.value()
}

// queryServiceValue encodes a QueryService reference as {name, namespace}.
func queryServiceValue(r poolv1alpha1.QueryServiceReference) *structpb.Value {
	o := fields{}
	o.set("name", structpb.NewStringValue(r.Name))
	o.text("namespace", r.Namespace)
	return o.value()
}

// fields builds a Struct, leaving out empty fields as omitempty does.
type fields map[string]*structpb.Value

func (o fields) set(k string, v *structpb.Value) { o[k] = v }

func (o fields) text(k, v string) {
	if v != "" {
		o[k] = structpb.NewStringValue(v)
	}
}

// nonZero writes a number of an extension, leaving out zero as omitempty does.
func (o fields) nonZero(k string, v int32) {
	if v != 0 {
		o[k] = structpb.NewNumberValue(float64(v))
	}
}

// flag writes a flag of an extension, leaving out false as omitempty does.
func (o fields) flag(k string, v bool) {
	if v {
		o[k] = structpb.NewBoolValue(true)
	}
}

// counter writes a counter, zero included.
func (o fields) counter(k string, v int32) { o[k] = structpb.NewNumberValue(float64(v)) }

func (o fields) time(k string, t *metav1.Time) {
	if t != nil {
		o[k] = structpb.NewStringValue(t.UTC().Format("2006-01-02T15:04:05Z"))
	}
}

func (o fields) value() *structpb.Value {
	return structpb.NewStructValue(&structpb.Struct{Fields: o})
}

// costValue encodes status.cost as statusValue writes the status.
func costValue(c *poolv1alpha1.PoolCost) *structpb.Value {
	o := fields{}
	o.set("dollarsPerHour", structpb.NewStringValue(c.DollarsPerHour))
	o.set("warmDollarsPerHour", structpb.NewStringValue(c.WarmDollarsPerHour))
	o.set("wasteDollarsPerHour", structpb.NewStringValue(c.WasteDollarsPerHour))
	o.set("dollars", structpb.NewStringValue(c.Dollars))
	o.set("warmDollars", structpb.NewStringValue(c.WarmDollars))
	o.set("wasteDollars", structpb.NewStringValue(c.WasteDollars))
	o.set("since", structpb.NewStringValue(c.Since.UTC().Format(time.RFC3339)))
	setList(o, "queryServices", c.QueryServices, func(q poolv1alpha1.QueryServiceCost) *structpb.Value {
		qo := fields{}
		qo.set("queryService", queryServiceValue(q.QueryService))
		qo.set("dollarsPerHour", structpb.NewStringValue(q.DollarsPerHour))
		qo.set("dollars", structpb.NewStringValue(q.Dollars))
		return qo.value()
	})
	setList(o, "executorStarts", c.ExecutorStarts, func(e poolv1alpha1.ExecutorStartSummary) *structpb.Value {
		eo := fields{}
		eo.set("placement", structpb.NewStringValue(e.Placement))
		eo.set("executors", structpb.NewNumberValue(float64(e.Executors)))
		eo.set("p50Seconds", structpb.NewStringValue(e.P50Seconds))
		return eo.value()
	})
	return o.value()
}
