// Package apidocs builds the field references in docs/: it writes a Markdown
// field reference from a CRD's OpenAPI schema, so the documentation of every
// field comes from the Go doc comments of the API types and cannot drift from
// them.
package apidocs

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Markdown renders the reference of the first served version of crdYAML,
// headed by title.
func Markdown(crdYAML []byte, title string) ([]byte, error) {
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(crdYAML, crd); err != nil {
		return nil, fmt.Errorf("cannot parse CRD: %w", err)
	}
	var v *extv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Served {
			v = &crd.Spec.Versions[i]
			break
		}
	}
	if v == nil || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CRD %q serves no version with a schema", crd.Name)
	}
	b := &bytes.Buffer{}
	fmt.Fprintf(b, "# %s\n\n", title)
	fmt.Fprintf(b, "`%s/%s` `%s`, short names %s. Generated from the Go types by `make generate`; do not edit.\n\n",
		crd.Spec.Group, v.Name, crd.Spec.Names.Kind, codeList(crd.Spec.Names.ShortNames))
	root := v.Schema.OpenAPIV3Schema
	for _, top := range []string{"spec", "status"} {
		p, ok := root.Properties[top]
		if !ok {
			continue
		}
		fmt.Fprintf(b, "## %s\n\n", top)
		if len(p.XValidations) > 0 {
			b.WriteString("Admission rules:\n\n")
			for _, r := range p.XValidations {
				fmt.Fprintf(b, "- %s\n", r.Message)
			}
			b.WriteString("\n")
		}
		b.WriteString("| field | type | default | description |\n| --- | --- | --- | --- |\n")
		walk(b, top, p, required(p))
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

func walk(b *bytes.Buffer, path string, p extv1.JSONSchemaProps, req map[string]bool) {
	for _, n := range slices.Sorted(maps.Keys(p.Properties)) {
		c := p.Properties[n]
		fp := path + "." + n
		t := typeOf(c)
		if req[n] {
			t += " (required)"
		}
		desc := oneLine(c.Description)
		for _, r := range c.XValidations {
			desc += " Rule: " + r.Message + "."
		}
		if len(c.Enum) > 0 {
			var vals []string
			for _, e := range c.Enum {
				vals = append(vals, strings.Trim(string(e.Raw), `"`))
			}
			desc += " One of: " + strings.Join(vals, ", ") + "."
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", fp, t, def(c), desc)
		switch {
		case c.Type == "object" && len(c.Properties) > 0:
			walk(b, fp, c, required(c))
		case c.Type == "array" && c.Items != nil && c.Items.Schema != nil && len(c.Items.Schema.Properties) > 0:
			for _, r := range c.Items.Schema.XValidations {
				fmt.Fprintf(b, "| `%s[]` | | | Rule: %s. |\n", fp, r.Message)
			}
			walk(b, fp+"[]", *c.Items.Schema, required(*c.Items.Schema))
		}
	}
}

func required(p extv1.JSONSchemaProps) map[string]bool {
	m := map[string]bool{}
	for _, r := range p.Required {
		m[r] = true
	}
	return m
}

func typeOf(p extv1.JSONSchemaProps) string {
	switch {
	case p.XIntOrString:
		return "quantity"
	case p.Type == "array" && p.Items != nil && p.Items.Schema != nil:
		return "[]" + typeOf(*p.Items.Schema)
	case p.Type == "object" && p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil:
		return "map[string]" + typeOf(*p.AdditionalProperties.Schema)
	case p.Format != "":
		return p.Type + " (" + p.Format + ")"
	}
	return p.Type
}

func def(p extv1.JSONSchemaProps) string {
	if p.Default == nil {
		return ""
	}
	return "`" + string(p.Default.Raw) + "`"
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

func codeList(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return "`" + strings.Join(ss, "`, `") + "`"
}

// SettingsMarkdown renders the reference of the cluster settings of the
// pool-compose function from its input CRD: every top-level field but
// skip, as the data of an EnvironmentConfig. intro follows the title.
func SettingsMarkdown(crdYAML []byte, title, intro string, skip ...string) ([]byte, error) {
	crd := &extv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(crdYAML, crd); err != nil {
		return nil, fmt.Errorf("cannot parse CRD: %w", err)
	}
	if len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CRD %q has no version with a schema", crd.Name)
	}
	root := *crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	props := make(map[string]extv1.JSONSchemaProps, len(root.Properties))
	for n, p := range root.Properties {
		if n == "apiVersion" || n == "kind" || n == "metadata" || slices.Contains(skip, n) {
			continue
		}
		props[n] = p
	}
	root.Properties = props
	b := &bytes.Buffer{}
	fmt.Fprintf(b, "# %s\n\n%s\n\n", title, strings.TrimSpace(intro))
	fmt.Fprintf(b, "Generated from the Go types of `%s/%s` `%s` by `make generate`; do not edit.\n\n", crd.Spec.Group, crd.Spec.Versions[0].Name, crd.Spec.Names.Kind)
	b.WriteString("| field | type | default | description |\n| --- | --- | --- | --- |\n")
	walk(b, "data", root, required(root))
	return b.Bytes(), nil
}
