package schemacheck

import (
	"fmt"
	"maps"
	"slices"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// compileRules compiles every x-kubernetes-validations rule of s, as the API
// server does when a CRD is created, and returns how many there are and a
// message for each that does not compile. A rule that does not compile here
// would be reported on every object of the kind, so Load refuses the CRD
// instead. Rules under allOf, anyOf, oneOf and not are not visited.
func compileRules(s *structuralschema.Structural) (int, []string) {
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	var (
		n    int
		errs []string
	)
	var walk func(p *field.Path, s *structuralschema.Structural, root bool)
	walk = func(p *field.Path, s *structuralschema.Structural, root bool) {
		if s == nil {
			return
		}
		if len(s.XValidations) > 0 {
			n += len(s.XValidations)
			res, err := cel.Compile(s, model.SchemaDeclType(s, root || s.XEmbeddedResource), celconfig.PerCallLimit, env, cel.StoredExpressionsEnvLoader())
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", pathString(p), err))
			}
			for i, r := range res {
				if r.Error != nil {
					errs = append(errs, fmt.Sprintf("%s: rule %q: %v", pathString(p), s.XValidations[i].Rule, r.Error))
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			prop := s.Properties[k]
			walk(p.Child(k), &prop, false)
		}
		walk(p.Child("[*]"), s.Items, false)
		if s.AdditionalProperties != nil {
			walk(p.Child("{*}"), s.AdditionalProperties.Structural, false)
		}
	}
	walk(nil, s, true)
	return n, errs
}

func pathString(p *field.Path) string {
	if p == nil {
		return "<root>"
	}
	return p.String()
}
