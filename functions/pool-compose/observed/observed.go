package observed

import (
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Field returns the value at path in s, or nil.
func Field(s *structpb.Struct, path ...string) *structpb.Value {
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

// String returns the string at path, or "".
func String(s *structpb.Struct, path ...string) string {
	return Field(s, path...).GetStringValue()
}

// Number reads a count stored as a JSON number or a quantity string; 0
// when absent or invalid.
func Number(v *structpb.Value) int64 {
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

// Quantity reads a quantity stored as a string or a number; nil when
// absent or invalid.
func Quantity(v *structpb.Value) *resource.Quantity {
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

// Ready tells whether an observed object reports the condition Ready=True.
// An object that is not observed yet is not ready; one whose kind has no
// conditions (noConditions) is ready once it exists.
func Ready(o *structpb.Struct, noConditions bool) bool {
	if o == nil {
		return false
	}
	if noConditions {
		return true
	}
	return Condition(o, "Ready").Status == metav1.ConditionTrue
}

// Condition returns the condition of type t that o reports in
// status.conditions; only its Type is set when o reports none.
func Condition(o *structpb.Struct, t string) metav1.Condition {
	for _, c := range Field(o, "status", "conditions").GetListValue().GetValues() {
		if cs := c.GetStructValue(); String(cs, "type") == t {
			return metav1.Condition{Type: t, Status: metav1.ConditionStatus(String(cs, "status")), Reason: String(cs, "reason"), Message: String(cs, "message")}
		}
	}
	return metav1.Condition{Type: t}
}

// Keep turns an observed object into desired state: its content without
// the status and the metadata the API server owns.
func Keep(o *structpb.Struct) *structpb.Struct {
	out := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(o.GetFields()))}
	for k, v := range o.GetFields() {
		if k != "status" && k != "metadata" {
			out.Fields[k] = v
		}
	}
	md := Field(o, "metadata").GetStructValue()
	keepMD := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for _, k := range []string{"name", "namespace", "labels", "annotations"} {
		if v, ok := md.GetFields()[k]; ok {
			keepMD.Fields[k] = v
		}
	}
	out.Fields["metadata"] = structpb.NewStructValue(keepMD)
	return out
}
