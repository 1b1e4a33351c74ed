package schemacheck

import (
	"encoding/json"
	"regexp"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
)

// Kinds built into Kubernetes (Deployments, DaemonSets, PriorityClasses, ...)
// have no CRD. Their server-side validation lives in k8s.io/kubernetes, so
// schemacheck checks only what decoding into their Go types tells: unknown
// or duplicate fields, wrong types, and metadata syntax. Scope (namespaced or
// not) is not checked for them.

// strict decodes with the built-in types and reports unknown fields.
var strict = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kjson.SerializerOptions{Strict: true})

// unknownFieldRE matches the strict decoder's message for an unknown field.
var unknownFieldRE = regexp.MustCompile(`^unknown field "([^"]+)"$`)

// isBuiltin reports whether gvk is a kind built into Kubernetes.
func isBuiltin(gvk schema.GroupVersionKind) bool {
	return scheme.Scheme.Recognizes(gvk)
}

// validateBuiltin checks obj, a built-in kind, by decoding it strictly.
func validateBuiltin(obj *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateObjectMetaAccessor(obj, obj.GetNamespace() != "", apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return append(errs, field.InternalError(nil, err))
	}
	gvk := obj.GroupVersionKind()
	_, _, err = strict.Decode(data, &gvk, nil)
	if err == nil {
		return errs
	}
	if !runtime.IsStrictDecodingError(err) {
		return append(errs, field.Invalid(nil, nil, err.Error()))
	}
	se, _ := runtime.AsStrictDecodingError(err)
	for _, e := range se.Errors() {
		if m := unknownFieldRE.FindStringSubmatch(e.Error()); m != nil {
			errs = append(errs, field.Forbidden(pathOf(m[1]), unknownField))
			continue
		}
		errs = append(errs, field.Invalid(nil, nil, e.Error()))
	}
	return errs
}
