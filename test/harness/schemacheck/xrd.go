package schemacheck

import (
	"encoding/json"

	"github.com/pkg/errors"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// xrdGroup is the API group of Crossplane's CompositeResourceDefinition.
const xrdGroup = "apiextensions.crossplane.io"

// xrd is the part of a Crossplane CompositeResourceDefinition (v1 or v2)
// that defines the composite resource's kind and schema.
type xrd struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		// Scope is Namespaced, Cluster or LegacyCluster (v2), empty for v1.
		Scope    string `json:"scope"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema *struct {
				OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// Fields Crossplane adds to every composite resource's schema besides what
// the XRD declares. Their content is Crossplane's to check, so they are
// accepted as they are; every field the XRD declares is checked strictly.
var (
	// legacySpecFields are the machinery fields in spec of v1 XRDs and
	// LegacyCluster XRs.
	legacySpecFields = map[string]string{
		"compositionRef": "object", "compositionSelector": "object",
		"compositionRevisionRef": "object", "compositionRevisionSelector": "object",
		"compositionUpdatePolicy": "string", "claimRef": "object",
		"environmentConfigRefs": "array", "resourceRefs": "array",
		"publishConnectionDetailsTo": "object", "writeConnectionSecretToRef": "object",
	}
	// statusFields are in status of every XR.
	statusFields = map[string]string{
		"conditions": "array", "connectionDetails": "object", "claimConditionTypes": "array",
		"crossplane": "object",
	}
)

// addXRD registers the composite resource kind an XRD defines (not its
// claim, whose CRD is generated elsewhere), with Crossplane's machinery
// fields added as XR CRDs have them.
func (r *Registry) addXRD(doc []byte, source string) error {
	var x xrd
	if err := yaml.Unmarshal(doc, &x); err != nil {
		return errors.Wrapf(err, "cannot decode CompositeResourceDefinition in %s", source)
	}
	for _, v := range x.Spec.Versions {
		if !v.Served || v.Schema == nil || len(v.Schema.OpenAPIV3Schema) == 0 {
			continue
		}
		s := &apiextensionsv1.JSONSchemaProps{}
		if err := json.Unmarshal(v.Schema.OpenAPIV3Schema, s); err != nil {
			return errors.Wrapf(err, "cannot decode the %s schema of %s in %s", v.Name, x.Spec.Names.Kind, source)
		}
		addMachinery(s, x.Spec.Scope)
		gvk := schema.GroupVersionKind{Group: x.Spec.Group, Version: v.Name, Kind: x.Spec.Names.Kind}
		k, err := compile(gvk, s)
		if err != nil {
			return errors.Wrapf(err, "cannot use the schema of %s from %s", gvk, source)
		}
		k.namespaced = x.Spec.Scope == "Namespaced"
		k.source = source
		if err := r.add(k); err != nil {
			return err
		}
	}
	return nil
}

// addMachinery adds Crossplane's fields to an XR schema s.
func addMachinery(s *apiextensionsv1.JSONSchemaProps, scope string) {
	if s.Properties == nil {
		s.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
	}
	spec := s.Properties["spec"]
	if scope == "" || scope == "LegacyCluster" {
		addLoose(&spec, legacySpecFields)
	} else {
		addLoose(&spec, map[string]string{"crossplane": "object"})
	}
	s.Properties["spec"] = spec
	status := s.Properties["status"]
	addLoose(&status, statusFields)
	s.Properties["status"] = status
}

// addLoose adds fields of the given types to object schema o, each
// accepting any content.
func addLoose(o *apiextensionsv1.JSONSchemaProps, fields map[string]string) {
	o.Type = "object"
	if o.Properties == nil {
		o.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
	}
	yes := true
	for name, typ := range fields {
		if _, declared := o.Properties[name]; declared {
			continue
		}
		p := apiextensionsv1.JSONSchemaProps{Type: typ}
		switch typ {
		case "object":
			p.XPreserveUnknownFields = &yes
		case "array":
			p.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &yes}}
			if name == "claimConditionTypes" {
				p.Items.Schema = &apiextensionsv1.JSONSchemaProps{Type: "string"}
			}
		}
		o.Properties[name] = p
	}
}
