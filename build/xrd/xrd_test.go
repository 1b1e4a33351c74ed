package xrd

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/golden"
)

func TestCommittedDefinitionIsCurrent(t *testing.T) {
	golden.Current(t, "apis/crds/e6data.io_pools.yaml", "apis/definition.yaml", func(crd []byte) ([]byte, error) {
		return FromCRD(crd, PoolNames)
	})
}

func TestDefinitionShape(t *testing.T) {
	crd, err := os.ReadFile("../../apis/crds/e6data.io_pools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := FromCRD(crd, PoolNames)
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Group      string            `json:"group"`
			Scope      string            `json:"scope"`
			Names      map[string]any    `json:"names"`
			ClaimNames map[string]any    `json:"claimNames"`
			Default    map[string]string `json:"defaultCompositionRef"`
			Enforced   map[string]string `json:"enforcedCompositionRef"`
			Versions   []struct {
				Name          string `json:"name"`
				Referenceable bool   `json:"referenceable"`
				Schema        struct {
					OpenAPIV3Schema struct {
						Properties map[string]any `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	type shape struct {
		APIVersion, Kind, Group, Scope, Claim, Composite, Default, Enforced, Version string
		Referenceable                                                                bool
		Props                                                                        []string
	}
	got := shape{x.APIVersion, x.Kind, x.Spec.Group, x.Spec.Scope, x.Spec.ClaimNames["kind"].(string), x.Spec.Names["kind"].(string), x.Spec.Default["name"], x.Spec.Enforced["name"], x.Spec.Versions[0].Name, x.Spec.Versions[0].Referenceable, nil}
	for k := range x.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties {
		got.Props = append(got.Props, k)
	}
	want := shape{"apiextensions.crossplane.io/v1", "CompositeResourceDefinition", "e6data.io", "LegacyCluster", "Pool", "XPool", "pool-compose", "pool-compose", "v1alpha1", true, []string{"spec", "status"}}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("XRD shape (-want +got):\n%s", diff)
	}
}

func TestFromCRDErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		crd    string
		want   string
	}{
		"ClusterScoped": {
			reason: "A claim must be namespaced.",
			crd:    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: pools.e6data.io}\nspec: {group: e6data.io, scope: Cluster, names: {kind: Pool, plural: pools}, versions: []}\n",
			want:   "must be namespaced",
		},
		"CrossplaneField": {
			reason: "Crossplane owns spec.compositionRef.",
			crd: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: pools.e6data.io}\nspec: {group: e6data.io, scope: Namespaced, names: {kind: Pool, plural: pools}, versions: [{name: v1, served: true, storage: true, " +
				"schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {compositionRef: {type: object}}}}}}}]}\n",
			want: "declares spec.compositionRef, which Crossplane owns",
		},
		"NoVersions": {
			reason: "A claim CRD must serve a version.",
			crd:    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: pools.e6data.io}\nspec: {group: e6data.io, scope: Namespaced, names: {kind: Pool, plural: pools}, versions: []}\n",
			want:   "serves no version",
		},
		"NotYAML": {
			reason: "Garbage is reported, not rendered.",
			crd:    "{",
			want:   "cannot parse claim CRD",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := FromCRD([]byte(tc.crd), PoolNames)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nFromCRD() error = %v, want it to contain %q", tc.reason, err, tc.want)
			}
		})
	}
}
