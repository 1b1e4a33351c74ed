// Package xrd builds apis/definition.yaml: it turns the
// CustomResourceDefinition that controller-gen writes for the Pool claim into
// the Crossplane CompositeResourceDefinition that defines XPool and its Pool
// claim, so the schema, its defaults, its admission rules and its printer
// columns are kept in one place: the Go types in apis/pool/v1alpha1.
package xrd

import (
	"fmt"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Names of the composite resource and its claim.
type Names struct {
	// CompositeKind and CompositePlural name the cluster-scoped composite.
	CompositeKind, CompositePlural string
	// DefaultComposition is the Composition a new XR uses.
	DefaultComposition string
	// Enforce makes DefaultComposition the only Composition: the XRD's
	// enforcedCompositionRef, so a claim's compositionRef or
	// compositionSelector picks nothing else.
	Enforce bool
}

// PoolNames name burstpool's composite XPool, always composed by the
// pool-compose Composition: what a platform may change lives in its
// settings (an EnvironmentConfig), which a tenant's claim cannot pick.
var PoolNames = Names{CompositeKind: "XPool", CompositePlural: "xpools", DefaultComposition: "pool-compose", Enforce: true}

// crossplaneOwned are schema properties that Crossplane adds to every XR and
// claim itself; a definition must not declare them.
var crossplaneOwned = map[string][]string{
	"spec":   {"compositionRef", "compositionSelector", "compositionRevisionRef", "compositionRevisionSelector", "compositionUpdatePolicy", "compositeDeletePolicy", "claimRef", "resourceRefs", "writeConnectionSecretToRef", "publishConnectionDetailsTo", "environmentConfigRefs", "crossplane"},
	"status": {"conditions", "connectionDetails", "claimConditionTypes"},
}

// FromCRD returns the XRD (as YAML) for the claim CRD crdYAML. The claim
// keeps the CRD's kind, plural, short names and categories; the composite
// takes names from n. Every served version of the CRD becomes a version of
// the XRD with the same schema and printer columns.
func FromCRD(crdYAML []byte, n Names) ([]byte, error) {
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(crdYAML, crd); err != nil {
		return nil, fmt.Errorf("cannot parse claim CRD: %w", err)
	}
	if crd.Spec.Scope != extv1.NamespaceScoped {
		return nil, fmt.Errorf("claim CRD %q must be namespaced, is %s", crd.Name, crd.Spec.Scope)
	}

	versions := make([]map[string]any, 0, len(crd.Spec.Versions))
	for i, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("version %s of %q has no schema", v.Name, crd.Name)
		}
		s := v.Schema.OpenAPIV3Schema
		for field, owned := range crossplaneOwned {
			p, ok := s.Properties[field]
			if !ok {
				continue
			}
			for _, name := range owned {
				if _, clash := p.Properties[name]; clash {
					return nil, fmt.Errorf("version %s of %q declares %s.%s, which Crossplane owns", v.Name, crd.Name, field, name)
				}
			}
		}
		// Crossplane builds metadata itself; keep only spec and status.
		props := map[string]extv1.JSONSchemaProps{}
		for _, k := range []string{"spec", "status"} {
			if p, ok := s.Properties[k]; ok {
				props[k] = p
			}
		}
		schema := extv1.JSONSchemaProps{
			Description: s.Description,
			Type:        "object",
			Required:    onlyKnown(s.Required, props),
			Properties:  props,
		}
		ver := map[string]any{
			"name":          v.Name,
			"served":        true,
			"referenceable": i == storageIndex(crd),
			"schema":        map[string]any{"openAPIV3Schema": schema},
		}
		if len(v.AdditionalPrinterColumns) > 0 {
			ver["additionalPrinterColumns"] = v.AdditionalPrinterColumns
		}
		versions = append(versions, ver)
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("claim CRD %q serves no version", crd.Name)
	}

	claim := map[string]any{
		"kind":   crd.Spec.Names.Kind,
		"plural": crd.Spec.Names.Plural,
	}
	if len(crd.Spec.Names.ShortNames) > 0 {
		claim["shortNames"] = crd.Spec.Names.ShortNames
	}
	if len(crd.Spec.Names.Categories) > 0 {
		claim["categories"] = crd.Spec.Names.Categories
	}
	composite := map[string]any{
		"kind":   n.CompositeKind,
		"plural": n.CompositePlural,
	}
	if len(crd.Spec.Names.Categories) > 0 {
		composite["categories"] = crd.Spec.Names.Categories
	}

	spec := map[string]any{
		"group":      crd.Spec.Group,
		"scope":      "LegacyCluster",
		"names":      composite,
		"claimNames": claim,
		"versions":   versions,
		// A deleted claim deletes its composite, and the composite its
		// composed objects, in the foreground: the NodePool goes only once
		// Karpenter has removed its nodes, and the node IAM objects its
		// usages protect outlive them.
		"defaultCompositeDeletePolicy": "Foreground",
	}
	if n.DefaultComposition != "" {
		spec["defaultCompositionRef"] = map[string]any{"name": n.DefaultComposition}
	}
	if n.Enforce && n.DefaultComposition != "" {
		// Crossplane sets every XR's compositionRef to it, whatever the
		// claim asked for (apiextensions.crossplane.io/v1
		// CompositeResourceDefinition spec.enforcedCompositionRef).
		spec["enforcedCompositionRef"] = map[string]any{"name": n.DefaultComposition}
	}
	xrd := map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1",
		"kind":       "CompositeResourceDefinition",
		"metadata":   map[string]any{"name": n.CompositePlural + "." + crd.Spec.Group},
		"spec":       spec,
	}
	out, err := yaml.Marshal(xrd)
	if err != nil {
		return nil, fmt.Errorf("cannot write XRD: %w", err)
	}
	return append([]byte("# Generated from apis/pool/v1alpha1 by build/cmd/generate. DO NOT EDIT.\n---\n"), out...), nil
}

func storageIndex(crd *extv1.CustomResourceDefinition) int {
	for i, v := range crd.Spec.Versions {
		if v.Storage {
			return i
		}
	}
	return 0
}

func onlyKnown(required []string, props map[string]extv1.JSONSchemaProps) []string {
	var out []string
	for _, r := range required {
		if _, ok := props[r]; ok {
			out = append(out, r)
		}
	}
	return out
}
