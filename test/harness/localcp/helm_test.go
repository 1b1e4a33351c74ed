package localcp

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// TestRenderChartRBAC renders the RBAC of Crossplane's chart with its
// default values and checks the objects a Helm install creates for core's
// and the RBAC manager's identities.
func TestRenderChartRBAC(t *testing.T) {
	mod, err := gomod.Dir(t.Context(), CrossplaneModule, CrossplaneVersion)
	if err != nil {
		t.Fatal(err)
	}
	b, err := renderChartRBAC(mod, CrossplaneNS)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, doc := range bytes.Split(b, []byte("\n---")) {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatalf("a rendered document does not decode: %v\n%s", err, doc)
		}
		if o.Kind != "" {
			got = append(got, o.Kind+" "+o.Metadata.Namespace+"/"+o.Metadata.Name)
		}
	}
	for _, want := range []string{
		"ServiceAccount " + CrossplaneNS + "/" + CoreServiceAccount,
		"ServiceAccount " + CrossplaneNS + "/" + RBACManagerServiceAccount,
		"ClusterRole /crossplane",
		"ClusterRole /crossplane:system:aggregate-to-crossplane",
		"ClusterRoleBinding /crossplane",
		"ClusterRole /crossplane:allowed-provider-permissions",
		"ClusterRole /crossplane-rbac-manager",
		"ClusterRoleBinding /crossplane-rbac-manager",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("the rendered chart lacks %s; it has:\n%s", want, cmp.Diff(nil, got))
		}
	}
}
