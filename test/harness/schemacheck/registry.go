// Package schemacheck is test harness: it validates objects against the real
// schemas of their kinds, the way the Kubernetes API server validates a create:
// the CRD's structural schema with its defaults, types, enums, required fields,
// patterns, formats and bounds, list-type invariants, metadata, and CEL
// x-kubernetes-validations rules. Where a server would silently prune a field
// the schema does not know, schemacheck reports an error, so a misspelled field
// fails a test instead of vanishing in a cluster.
//
// What it does not do: CEL transition rules (those reading oldSelf) only run
// on updates, so they are not evaluated; status is validated with the rest of
// the object, where a server with a status subresource would drop it on
// create; admission webhooks are not called; kinds built into Kubernetes are
// only decoded strictly (unknown fields and types), not run through
// Kubernetes' own validation; kinds whose vendors publish no schema (EKS Auto
// Mode's NodeClass, CoreWeave's NodePool) cannot be validated.
package schemacheck

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pkg/errors"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// Registry holds the schemas of the kinds it can validate, by
// group/version/kind. It is safe for concurrent use once loaded.
type Registry struct {
	kinds map[schema.GroupVersionKind]*kindSchema
}

// kindSchema is one served version of one CRD, compiled for validation.
type kindSchema struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	source     string // file the CRD came from, for messages

	structural *structuralschema.Structural
	validator  validation.SchemaValidator
	cel        *cel.Validator // nil when the schema has no CEL rules
	rules      int            // number of CEL rules
}

// Load reads CustomResourceDefinitions from paths: YAML or JSON files (one
// or more documents each) or directories, whose *.yaml, *.yml and *.json
// files are read, not recursively. Crossplane CompositeResourceDefinitions
// count too: they define their composite resource's kind (see addXRD). In a
// directory, other documents are skipped; a file named directly must hold at
// least one definition. Every served version with a schema becomes a kind; a
// kind defined twice, by different files, is an error.
func Load(paths ...string) (*Registry, error) {
	r := &Registry{kinds: map[schema.GroupVersionKind]*kindSchema{}}
	for _, p := range paths {
		if err := r.loadPath(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Kinds returns the kinds r has schemas for, sorted.
func (r *Registry) Kinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(r.kinds))
	for gvk := range r.kinds {
		out = append(out, gvk)
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Rules returns the number of CEL rules in the schema of gvk (0 for a kind
// r does not know).
func (r *Registry) Rules(gvk schema.GroupVersionKind) int {
	if k, ok := r.kinds[gvk]; ok {
		return k.rules
	}
	return 0
}

// Merge returns a registry with the kinds of r and o; a kind both define
// from different files is an error.
func (r *Registry) Merge(o *Registry) (*Registry, error) {
	m := &Registry{kinds: make(map[schema.GroupVersionKind]*kindSchema, len(r.kinds)+len(o.kinds))}
	for _, reg := range []*Registry{r, o} {
		for _, k := range reg.kinds {
			if err := m.add(k); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (r *Registry) loadPath(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return errors.Wrap(err, "cannot read CRDs")
	}
	if !fi.IsDir() {
		n, err := r.loadFile(p, false)
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.Errorf("%s holds no CustomResourceDefinition", p)
		}
		return nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return errors.Wrapf(err, "cannot read CRD directory %s", p)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		switch filepath.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		if _, err := r.loadFile(filepath.Join(p, e.Name()), true); err != nil {
			return err
		}
	}
	return nil
}

// loadFile adds the CRDs of one file and returns how many it held. With
// skipOthers, documents of other kinds are skipped; without, they are errors.
func (r *Registry) loadFile(path string, skipOthers bool) (int, error) {
	f, err := os.Open(path) //nolint:gosec // G304: reading the CRD files the caller names is the point
	if err != nil {
		return 0, errors.Wrap(err, "cannot read CRDs")
	}
	defer f.Close() //nolint:errcheck // read-only file
	docs, err := Documents(f)
	if err != nil {
		return 0, errors.Wrapf(err, "cannot split %s into YAML documents", path)
	}
	n := 0
	for i, doc := range docs {
		var tm struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return n, errors.Wrapf(err, "cannot parse document %d of %s", i+1, path)
		}
		if tm.Kind == "CompositeResourceDefinition" && strings.HasPrefix(tm.APIVersion, xrdGroup+"/") {
			if err := r.addXRD(doc, path); err != nil {
				return n, err
			}
			n++
			continue
		}
		if tm.Kind != "CustomResourceDefinition" || tm.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			if skipOthers {
				continue
			}
			return n, errors.Errorf("document %d of %s is %s %s, not an apiextensions.k8s.io/v1 CustomResourceDefinition or a Crossplane CompositeResourceDefinition", i+1, path, tm.APIVersion, tm.Kind)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return n, errors.Wrapf(err, "cannot decode CustomResourceDefinition in document %d of %s", i+1, path)
		}
		if err := r.addCRD(crd, path); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Documents splits a multi-document YAML (or a JSON) stream into its
// non-empty documents.
func Documents(rd io.Reader) ([][]byte, error) {
	yr := utilyaml.NewYAMLReader(bufio.NewReader(rd))
	var out [][]byte
	for {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		out = append(out, doc)
	}
}

// stripComments drops whole-line YAML comments, so a document of only
// comments counts as empty.
func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] == '#' {
			continue
		}
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// addCRD compiles every served version of crd that has a schema.
func (r *Registry) addCRD(crd *apiextensionsv1.CustomResourceDefinition, source string) error {
	for _, v := range crd.Spec.Versions {
		if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		k, err := compile(gvk, v.Schema.OpenAPIV3Schema)
		if err != nil {
			return errors.Wrapf(err, "cannot use the schema of %s from %s", gvk, source)
		}
		k.namespaced = crd.Spec.Scope == apiextensionsv1.NamespaceScoped
		k.source = source
		if err := r.add(k); err != nil {
			return err
		}
	}
	return nil
}

func (r *Registry) add(k *kindSchema) error {
	if prev, ok := r.kinds[k.gvk]; ok && prev.source != k.source {
		return errors.Errorf("%s is defined twice, in %s and %s: load one of them", k.gvk, prev.source, k.source)
	}
	r.kinds[k.gvk] = k
	return nil
}

// compile turns a published v1 schema into what the API server validates
// with: the internal schema, its structural form and the CEL rules.
func compile(gvk schema.GroupVersionKind, v1 *apiextensionsv1.JSONSchemaProps) (*kindSchema, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		return nil, errors.Wrap(err, "cannot convert the schema")
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, errors.Wrap(err, "schema is not structural")
	}
	if errs := structuralschema.ValidateStructural(nil, s); len(errs) > 0 {
		return nil, errors.Wrap(errs.ToAggregate(), "schema is not structural")
	}
	rules, celErrs := compileRules(s)
	if len(celErrs) > 0 {
		return nil, errors.Errorf("CEL rules do not compile:\n  %s", strings.Join(celErrs, "\n  "))
	}
	sv, _, err := validation.NewSchemaValidator(internal)
	if err != nil {
		return nil, errors.Wrap(err, "cannot build the schema validator")
	}
	return &kindSchema{
		gvk:        gvk,
		structural: s,
		validator:  sv,
		cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
		rules:      rules,
	}, nil
}
