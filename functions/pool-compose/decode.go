package main

import (
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// Decoding and encoding straight between protobuf Structs and the few
// fields the function uses. A pool may have a thousand QueryServices;
// going through JSON for each costs more than everything else the function
// does.

// field returns the value at path in s, or nil.
func field(s *structpb.Struct, path ...string) *structpb.Value {
	for i, p := range path {
		v, ok := s.GetFields()[p]
		if !ok {
			return nil
		}
		if i == len(path)-1 {
			return v
		}
		s = v.GetStructValue()
		if s == nil {
			return nil
		}
	}
	return nil
}

// str returns the string at path, or "".
func str(s *structpb.Struct, path ...string) string {
	return field(s, path...).GetStringValue()
}

// quantity reads a quantity stored as a string or a number; nil when
// absent or invalid.
func quantity(v *structpb.Value) *resource.Quantity {
	var (
		q   resource.Quantity
		err error
	)
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		q, err = resource.ParseQuantity(k.StringValue)
	case *structpb.Value_NumberValue:
		q = *resource.NewMilliQuantity(int64(k.NumberValue*1000), resource.DecimalSI)
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	return &q
}

// QueryService is what the function reads of a QueryService: its name,
// namespace, labels and executor. Everything else a QueryService carries
// (managedFields, annotations, status, the rest of its spec) is left in the
// request, undecoded.
type QueryService struct {
	Name, Namespace string
	// Labels are read in place, from the request.
	Labels structLabels
	Spec   qsv1alpha1.QueryServiceSpec
}

// structLabels are an object's labels as the request carries them; they
// match label selectors without being copied into a map.
type structLabels map[string]*structpb.Value

// Has tells whether the label is set.
func (l structLabels) Has(k string) bool {
	_, ok := l[k]
	return ok
}

// Get returns the label's value, or "".
func (l structLabels) Get(k string) string { return l[k].GetStringValue() }

// Lookup returns the label's value and whether it is set.
func (l structLabels) Lookup(k string) (string, bool) {
	v, ok := l[k]
	return v.GetStringValue(), ok
}

// decodeQueryService reads the fields of a QueryService the function uses.
func decodeQueryService(s *structpb.Struct) QueryService {
	var q QueryService
	md := s.GetFields()["metadata"].GetStructValue().GetFields()
	q.Name, q.Namespace = md["name"].GetStringValue(), md["namespace"].GetStringValue()
	q.Labels = md["labels"].GetStructValue().GetFields()
	ex := field(s, "spec", "executor").GetStructValue()
	if ex == nil {
		return q
	}
	e := &q.Spec.Executor
	e.Image, e.InstanceType = str(ex, "image"), str(ex, "instanceType")
	if v := field(ex, "replicas"); v != nil {
		if _, ok := v.GetKind().(*structpb.Value_NumberValue); ok {
			n := int32(v.GetNumberValue())
			e.Replicas = &n
		}
	}
	e.Resources.CPU = quantity(field(ex, "resources", "cpu"))
	e.Resources.Memory = quantity(field(ex, "resources", "memory"))
	if ns := field(ex, "nodeSelector").GetStructValue().GetFields(); len(ns) > 0 {
		e.NodeSelector = make(map[string]string, len(ns))
		for k, v := range ns {
			e.NodeSelector[k] = v.GetStringValue()
		}
	}
	if r := field(ex, "poolRef").GetStructValue(); r != nil {
		e.PoolRef = &qsv1alpha1.PoolReference{Name: str(r, "name"), Namespace: str(r, "namespace")}
	}
	return q
}

// decodeStatus reads the fields of a previous status that the function
// compares with: the phase, the instance type and the QueryService reports.
func decodeStatus(s *structpb.Struct) poolv1alpha1.PoolStatus {
	var st poolv1alpha1.PoolStatus
	if s == nil {
		return st
	}
	st.Phase = poolv1alpha1.PoolPhase(str(s, "phase"))
	st.DerivedInstanceType, st.DerivedFrom = str(s, "derivedInstanceType"), str(s, "derivedFrom")
	if sz := field(s, "sizing").GetStructValue(); sz != nil {
		st.Sizing = &poolv1alpha1.SizingStatus{
			ExecutorsHaveRun: field(sz, "executorsHaveRun").GetBoolValue(),
			Architecture:     str(sz, "architecture"), ArchitectureFrom: str(sz, "architectureFrom"),
		}
	}
	if w := field(s, "warmCapacity").GetStructValue(); w != nil {
		st.WarmCapacity = &poolv1alpha1.WarmCapacityStatus{
			Method: str(w, "method"), Slots: int32(number(field(w, "slots"))), CapacityBuffer: str(w, "capacityBuffer"),
		}
		if t, err := time.Parse(time.RFC3339, str(w, "awaitingSince")); err == nil {
			st.WarmCapacity.AwaitingSince = &metav1.Time{Time: t}
		}
	}
	reports := field(s, "attachedQueryServices").GetListValue().GetValues()
	if len(reports) > 0 {
		st.AttachedQueryServices = make([]poolv1alpha1.AttachedQueryService, 0, len(reports))
	}
	for _, v := range reports {
		a := v.GetStructValue()
		if a == nil {
			continue
		}
		q := poolv1alpha1.AttachedQueryService{
			QueryService: poolv1alpha1.QueryServiceReference{Name: str(a, "queryService", "name"), Namespace: str(a, "queryService", "namespace")},
			Attached:     field(a, "attached").GetBoolValue(), Compatible: field(a, "compatible").GetBoolValue(),
			InstanceType: str(a, "instanceType"), RequiredCPU: str(a, "requiredCpu"), RequiredMemory: str(a, "requiredMemory"),
			Message: str(a, "message"), MaxPoolExecutors: int32(number(field(a, "maxPoolExecutors"))),
		}
		if t, err := time.Parse(time.RFC3339, str(a, "lastChecked")); err == nil {
			q.LastChecked = &metav1.Time{Time: t}
		}
		st.AttachedQueryServices = append(st.AttachedQueryServices, q)
	}
	return st
}

// decodeConditions reads the reasons of the XPool's conditions by type.
func decodeConditions(s *structpb.Struct) map[string]string {
	out := map[string]string{}
	for _, v := range field(s, "conditions").GetListValue().GetValues() {
		c := v.GetStructValue()
		out[str(c, "type")] = str(c, "reason")
	}
	return out
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
	m := obj{}
	m.str("phase", string(st.Phase))
	m.str("message", st.Message)
	m.str("cloud", st.Cloud)
	m.str("provisioningMethod", st.ProvisioningMethod)
	m.str("derivedInstanceType", st.DerivedInstanceType)
	m.str("derivedFrom", st.DerivedFrom)
	if !countsUnknown {
		m.count("totalExecutors", st.TotalExecutors)
		m.count("availableExecutors", st.AvailableExecutors)
		m.count("occupiedExecutors", st.OccupiedExecutors)
		m.count("pendingExecutors", st.PendingExecutors)
		m.count("currentNodes", st.CurrentNodes)
	}
	m.str("nodePoolName", st.NodePoolName)
	m.str("nodeClassName", st.NodeClassName)
	setList(m, "allocations", st.Allocations, func(a poolv1alpha1.Allocation) *structpb.Value {
		o := obj{}
		o.set("queryService", queryServiceValue(a.QueryService))
		o.count("poolExecutors", a.PoolExecutors)
		o.count("regularExecutors", a.RegularExecutors)
		o.time("allocatedAt", a.AllocatedAt)
		return o.value()
	})
	setList(m, "cachedImages", st.CachedImages, func(c poolv1alpha1.CachedImage) *structpb.Value {
		o := obj{}
		o.set("image", structpb.NewStringValue(c.Image))
		o.str("hash", c.Hash)
		o.str("source", c.Source)
		o.str("warmupStatus", string(c.WarmupStatus))
		o.str("daemonSetName", c.DaemonSetName)
		o.count("nodesReady", c.NodesReady)
		o.count("nodesTotal", c.NodesTotal)
		o.time("unusedSince", c.UnusedSince)
		o.str("message", c.Message)
		return o.value()
	})
	setList(m, "attachedQueryServices", st.AttachedQueryServices, func(a poolv1alpha1.AttachedQueryService) *structpb.Value {
		if v := prev.reuse(a); v != nil {
			return v
		}
		o := obj{}
		o.set("queryService", queryServiceValue(a.QueryService))
		o.set("compatible", structpb.NewBoolValue(a.Compatible))
		o.str("instanceType", a.InstanceType)
		o.str("requiredCpu", a.RequiredCPU)
		o.str("requiredMemory", a.RequiredMemory)
		o.str("message", a.Message)
		o.time("lastChecked", a.LastChecked)
		o.set("attached", structpb.NewBoolValue(a.Attached))
		if a.MaxPoolExecutors > 0 {
			o.count("maxPoolExecutors", a.MaxPoolExecutors)
		}
		return o.value()
	})
	if es := st.ExecutorScheduling; es != nil {
		o := obj{}
		o.set("labels", stringsValue(es.Labels))
		o.set("nodeSelector", stringsValue(es.NodeSelector))
		o.set("tolerations", listValue(es.Tolerations, func(t poolv1alpha1.Toleration) *structpb.Value {
			to := obj{}
			to.str("key", t.Key)
			to.str("operator", t.Operator)
			to.str("value", t.Value)
			to.str("effect", t.Effect)
			if t.TolerationSeconds != nil {
				to.set("tolerationSeconds", structpb.NewNumberValue(float64(*t.TolerationSeconds)))
			}
			return to.value()
		}))
		if len(es.Annotations) > 0 {
			o.set("annotations", stringsValue(es.Annotations))
		}
		m.set("executorScheduling", o.value())
	}
	if sz := st.Sizing; sz != nil {
		o := obj{}
		o.flag("executorsHaveRun", sz.ExecutorsHaveRun)
		o.str("kept", sz.Kept)
		o.str("architecture", sz.Architecture)
		o.str("architectureFrom", sz.ArchitectureFrom)
		o.num("executorsPerNode", sz.ExecutorsPerNode)
		setList(o, "instanceTypes", sz.InstanceTypes, func(t poolv1alpha1.OfferedInstanceType) *structpb.Value {
			to := obj{}
			to.set("name", structpb.NewStringValue(t.Name))
			to.num("executorsPerNode", t.ExecutorsPerNode)
			to.str("reason", t.Reason)
			return to.value()
		})
		m.set("sizing", o.value())
	}
	setList(m, "executorFailures", st.ExecutorFailures, func(f poolv1alpha1.ExecutorFailureCount) *structpb.Value {
		o := obj{}
		o.set("reason", structpb.NewStringValue(f.Reason))
		o.count("count", f.Count)
		return o.value()
	})
	setList(m, "unauthorizedExecutors", st.UnauthorizedExecutors, func(u poolv1alpha1.UnauthorizedExecutor) *structpb.Value {
		o := obj{}
		o.set("pod", structpb.NewStringValue(u.Pod))
		o.set("namespace", structpb.NewStringValue(u.Namespace))
		o.str("queryService", u.QueryService)
		return o.value()
	})
	if c := st.Cost; c != nil {
		m.set("cost", costValue(c))
	}
	if w := st.WarmCapacity; w != nil {
		o := obj{}
		o.str("method", w.Method)
		o.count("slots", w.Slots)
		o.str("capacityBuffer", w.CapacityBuffer)
		o.time("awaitingSince", w.AwaitingSince)
		m.set("warmCapacity", o.value())
	}
	return m.value()
}

// setList writes items, each encoded by encode, as a list, leaving out an
// empty one as omitempty does.
func setList[T any](o obj, k string, items []T, encode func(T) *structpb.Value) {
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
	o := obj{}
	for k, v := range m {
		o.set(k, structpb.NewStringValue(v))
	}
	return o.value()
}

// queryServiceValue encodes a QueryService reference as {name, namespace}.
func queryServiceValue(r poolv1alpha1.QueryServiceReference) *structpb.Value {
	o := obj{}
	o.set("name", structpb.NewStringValue(r.Name))
	o.str("namespace", r.Namespace)
	return o.value()
}

// obj builds a Struct, leaving out empty fields as omitempty does.
type obj map[string]*structpb.Value

func (o obj) set(k string, v *structpb.Value) { o[k] = v }

func (o obj) str(k, v string) {
	if v != "" {
		o[k] = structpb.NewStringValue(v)
	}
}

// num writes a number of an extension, leaving out zero as omitempty does.
func (o obj) num(k string, v int32) {
	if v != 0 {
		o[k] = structpb.NewNumberValue(float64(v))
	}
}

// flag writes a flag of an extension, leaving out false as omitempty does.
func (o obj) flag(k string, v bool) {
	if v {
		o[k] = structpb.NewBoolValue(true)
	}
}

// count writes a counter, zero included.
func (o obj) count(k string, v int32) { o[k] = structpb.NewNumberValue(float64(v)) }

func (o obj) time(k string, t *metav1.Time) {
	if t != nil {
		o[k] = structpb.NewStringValue(t.UTC().Format("2006-01-02T15:04:05Z"))
	}
}

func (o obj) value() *structpb.Value {
	return structpb.NewStructValue(&structpb.Struct{Fields: o})
}
