package decision

import (
	"google.golang.org/protobuf/types/known/structpb"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// QueryService is what the function reads of a QueryService: its name,
// namespace, labels and executor. Everything else a QueryService carries
// (managedFields, annotations, status, the rest of its spec) is left in the
// request, undecoded.
type QueryService struct {
	Name, Namespace string
	// Labels are read in place, from the request.
	Labels Labels
	Spec   qsv1alpha1.QueryServiceSpec
}

// Labels are an object's labels as the request carries them; they
// match label selectors without being copied into a map.
type Labels map[string]*structpb.Value

// Has tells whether the label is set.
func (l Labels) Has(k string) bool {
	_, ok := l[k]
	return ok
}

// Get returns the label's value, or "".
func (l Labels) Get(k string) string { return l[k].GetStringValue() }

// Lookup returns the label's value and whether it is set.
func (l Labels) Lookup(k string) (string, bool) {
	v, ok := l[k]
	return v.GetStringValue(), ok
}

// DecodeQueryService reads the fields of a QueryService the function uses.
func DecodeQueryService(s *structpb.Struct) QueryService {
	var q QueryService
	md := s.GetFields()["metadata"].GetStructValue().GetFields()
	q.Name, q.Namespace = md["name"].GetStringValue(), md["namespace"].GetStringValue()
	q.Labels = md["labels"].GetStructValue().GetFields()
	ex := observed.Field(s, "spec", "executor").GetStructValue()
	if ex == nil {
		return q
	}
	e := &q.Spec.Executor
	e.Image, e.InstanceType = observed.String(ex, "image"), observed.String(ex, "instanceType")
	if v := observed.Field(ex, "replicas"); v != nil {
		if _, ok := v.GetKind().(*structpb.Value_NumberValue); ok {
			n := int32(v.GetNumberValue())
			e.Replicas = &n
		}
	}
	e.Resources.CPU = observed.Quantity(observed.Field(ex, "resources", "cpu"))
	e.Resources.Memory = observed.Quantity(observed.Field(ex, "resources", "memory"))
	if ns := observed.Field(ex, "nodeSelector").GetStructValue().GetFields(); len(ns) > 0 {
		e.NodeSelector = make(map[string]string, len(ns))
		for k, v := range ns {
			e.NodeSelector[k] = v.GetStringValue()
		}
	}
	if r := observed.Field(ex, "poolRef").GetStructValue(); r != nil {
		e.PoolRef = &qsv1alpha1.PoolReference{Name: observed.String(r, "name"), Namespace: observed.String(r, "namespace")}
	}
	return q
}
