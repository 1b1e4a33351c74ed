package apidocs

import (
	"strings"
	"testing"

	"github.com/burstpool/burstpool/test/harness/golden"
)

func TestCommittedReferenceIsCurrent(t *testing.T) {
	golden.Current(t, "apis/crds/e6data.io_pools.yaml", "docs/pool-reference.md", func(crd []byte) ([]byte, error) {
		return Markdown(crd, "Pool reference")
	})
}

func TestCommittedSettingsReferenceIsCurrent(t *testing.T) {
	got := golden.Current(t, "package/function/input/pool.fn.burstpool.io_inputs.yaml", "docs/settings-reference.md", func(crd []byte) ([]byte, error) {
		return SettingsMarkdown(crd, "Cluster settings reference", SettingsIntro, "environmentConfig")
	})
	for _, setting := range []string{"`data.clusterName`", "`data.aws.role`", "`data.warmup.helperImage`", "`data.gcp.imageFamily`"} {
		if !strings.Contains(string(got), setting) {
			t.Errorf("docs/settings-reference.md does not document %s", setting)
		}
	}
	if strings.Contains(string(got), "data.environmentConfig") {
		t.Error("docs/settings-reference.md documents environmentConfig, which only the Composition's input sets")
	}
}

func TestMarkdown(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.org}
spec:
  group: example.org
  scope: Namespaced
  names: {kind: Thing, plural: things, shortNames: [th]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations: [{rule: "self.size > 0", message: "size must be positive"}]
            properties:
              size: {type: integer, format: int32, description: "Size of the | thing."}
              mode: {type: string, default: fast, enum: [fast, slow]}
`
	got, err := Markdown([]byte(crd), "Thing reference")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Thing reference",
		"`example.org/v1` `Thing`, short names `th`",
		"- size must be positive",
		"| `spec.mode` | string | `\"fast\"` |  One of: fast, slow. |",
		"| `spec.size` | integer (int32) (required) |  | Size of the \\| thing. |",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("Markdown() lacks %q in:\n%s", want, got)
		}
	}
}
