package main

import (
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// conditionReady tells whether an observed object reports the condition
// Ready=True. An object that is not observed yet is not ready; one whose
// kind has no conditions (noConditions) is ready once it exists.
func conditionReady(o *structpb.Struct, noConditions bool) bool {
	if o == nil {
		return false
	}
	if noConditions {
		return true
	}
	for _, c := range field(o, "status", "conditions").GetListValue().GetValues() {
		if cs := c.GetStructValue(); str(cs, "type") == "Ready" {
			return str(cs, "status") == "True"
		}
	}
	return false
}

// daemonSetReady tells whether an observed DaemonSet runs a ready pod on
// every node it should.
func daemonSetReady(o *structpb.Struct) bool {
	ds := observedDaemonSet(o)
	if ds == nil {
		return false
	}
	st := ds.Status
	return st.ObservedGeneration >= ds.Generation && st.NumberReady >= st.DesiredNumberScheduled
}

// nodePoolNodes is the number of nodes an observed Karpenter NodePool
// reports.
func nodePoolNodes(o *structpb.Struct) int64 {
	if n := number(field(o, "status", "nodes")); n > 0 {
		return n
	}
	return number(field(o, "status", "resources", "nodes"))
}

// number reads a count stored as a JSON number or a quantity string.
func number(v *structpb.Value) int64 {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		return int64(k.NumberValue)
	case *structpb.Value_StringValue:
		q, err := resource.ParseQuantity(k.StringValue)
		if err != nil {
			return 0
		}
		return q.Value()
	}
	return 0
}

// count reads a number at path of an unstructured object.
func count(obj map[string]any, path ...string) int64 {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case string:
		q, err := resource.ParseQuantity(n)
		if err != nil {
			return 0
		}
		return q.Value()
	}
	return 0
}
