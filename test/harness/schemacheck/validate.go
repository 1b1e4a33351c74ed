package schemacheck

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pkg/errors"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// unknownField is the detail of an error about a field the schema lacks.
const unknownField = "unknown field: the schema has no such field, so the API server would drop it"

// Error is every problem found in one object.
type Error struct {
	// GVK and Name (namespace/name, or generateName followed by *) say which
	// object.
	GVK  schema.GroupVersionKind
	Name string

	// Errs are the field errors, with paths from the object's root.
	Errs field.ErrorList

	// CELSkipped is set when the kind has CEL rules that were not run
	// because Errs hold a blocking error, as the API server does.
	CELSkipped bool
}

// Error lists every field error, one a line.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %q: %d field error(s):", e.GVK.GroupKind().String(), e.GVK.Version, e.Name, len(e.Errs))
	for _, fe := range e.Errs {
		b.WriteString("\n  ")
		b.WriteString(fe.Error())
	}
	if e.CELSkipped {
		b.WriteString("\n  (CEL rules not checked: fix the errors above, then check again)")
	}
	return b.String()
}

// Validate checks obj as the API server would on create, against the schema
// of obj's kind: it reports fields the schema does not know (a server would
// prune them silently) unless x-kubernetes-preserve-unknown-fields keeps
// them; applies the schema's defaults; then checks metadata, types, enums,
// required fields, patterns, formats, bounds, list-type invariants and CEL
// rules (skipped, as by the server, when a blocking error such as a wrong
// type or a missing required field was found). Kinds built into Kubernetes
// have no CRD: they are decoded strictly into their Go types (see
// builtin.go). It returns nil, or an *Error that lists every problem; a kind
// with neither is an error. obj is not changed.
func (r *Registry) Validate(obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	e := &Error{GVK: gvk, Name: displayName(obj)}
	if gvk.Kind == "" || gvk.Version == "" {
		e.Errs = append(e.Errs, field.Required(field.NewPath("apiVersion"), "apiVersion and kind are required"))
		return e
	}
	k, ok := r.kinds[gvk]
	switch {
	case ok:
		o, err := asDecoded(obj.Object)
		if err != nil {
			return errors.Wrapf(err, "cannot validate %s %q", gvk.Kind, e.Name)
		}
		e.Errs, e.CELSkipped = k.validate(o)
	case isBuiltin(gvk):
		e.Errs = validateBuiltin(obj)
	default:
		return fmt.Errorf("no schema for %s %s: load the CRD that defines it", gvk.GroupKind(), gvk.Version)
	}
	if len(e.Errs) == 0 {
		return nil
	}
	return e
}

// validate checks obj, which it may change, and reports whether CEL rules
// were skipped.
func (k *kindSchema) validate(obj map[string]any) (field.ErrorList, bool) {
	var errs field.ErrorList

	// Unknown fields: the server's decoder drops them inside metadata and
	// prunes them everywhere else; both are reported here.
	metaErr, unknownMeta := objectmeta.CoerceWithOptions(nil, obj, k.structural, true, objectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if metaErr != nil {
		return field.ErrorList{metaErr}, k.cel != nil
	}
	unknown := pruning.PruneWithOptions(obj, k.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range append(unknownMeta, unknown...) {
		errs = append(errs, field.Forbidden(pathOf(p), unknownField))
	}

	defaulting.Default(obj, k.structural)

	u := &unstructured.Unstructured{Object: obj}
	errs = append(errs, apivalidation.ValidateObjectMetaAccessor(u, k.namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, validation.ValidateCustomResource(nil, obj, k.validator)...)
	errs = append(errs, objectmeta.Validate(nil, obj, k.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, k.structural, obj)...)

	if k.cel == nil {
		return errs, false
	}
	if blocking(errs) {
		return errs, true
	}
	celErrs, _ := k.cel.Validate(context.Background(), nil, k.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...), false
}

// asDecoded returns a copy of obj as the API server's decoder would see it:
// JSON values, whole numbers as int64 and others as float64, whatever Go
// types (int32, a YAML decoder's float64) the caller's object holds.
func asDecoded(obj map[string]any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, utiljson.Unmarshal(b, &out)
}

// blocking reports whether errs hold an error after which the server does
// not run CEL rules (their inputs would not have the declared types).
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// pathOf turns a pruning path such as "spec.template[0].foo" into a field
// path.
func pathOf(p string) *field.Path {
	var fp *field.Path
	for _, part := range strings.Split(p, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if fp == nil {
			fp = field.NewPath(name)
		} else {
			fp = fp.Child(name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			if i, err := strconv.Atoi(idx); err == nil {
				fp = fp.Index(i)
			} else {
				fp = fp.Key(idx)
			}
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return fp
}

// displayName names obj for messages.
func displayName(obj *unstructured.Unstructured) string {
	n := obj.GetName()
	if n == "" && obj.GetGenerateName() != "" {
		n = obj.GetGenerateName() + "*"
	}
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + n
	}
	return n
}
