package fnrun

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/apiserver"
	"github.com/burstpool/burstpool/test/harness/gomod"
)

// TestComposeFetchesFromTheAPIServer composes a pool that attaches a
// QueryService by name: the function sees the QueryService only through
// what Compose fetched from the API server, so the pool's status lists it
// as attached, and the pool composes its NodePool.
func TestComposeFetchesFromTheAPIServer(t *testing.T) {
	root := gomod.RootForTest(t)
	env := apiserver.Start(t, CRDPaths(root)...)
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	settings := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{}}}
	settings.SetAPIVersion("apiextensions.crossplane.io/v1beta1")
	settings.SetKind("EnvironmentConfig")
	settings.SetName("burstpool")
	fixture.Create(t, c, fixture.Namespace("pools"), settings,
		fixture.Unstructured(t, fixture.QueryService(fixture.QueryServiceOptions{Namespace: "pools", Name: "analytics", Pool: fixture.Pool{Name: "burst"}})))
	xr, err := XPool("burst", "pools", "maxExecutors: 4\nallowedQueryServices: [{name: analytics}]\nprovisioning: {cloud: aws, method: karpenter}")
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := Start(t).Compose(ctx, c, Request{XR: xr, Input: map[string]any{
		"apiVersion": "pool.fn.burstpool.io/v1beta1", "kind": "Input",
		"aws":      map[string]any{"role": "KarpenterNodeRole", "subnetSelectorTerms": []any{map[string]any{"id": "subnet-1"}}, "securityGroupSelectorTerms": []any{map[string]any{"id": "sg-1"}}},
		"capacity": map[string]any{"unauthorizedExecutors": "Deny"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	attached, _ := Status(rsp)["attachedQueryServices"].([]any)
	if len(attached) != 1 || attached[0].(map[string]any)["attached"] != true || attached[0].(map[string]any)["compatible"] != true {
		t.Errorf("status.attachedQueryServices = %v, want pools/analytics attached and compatible\nresults: %v", attached, rsp.GetResults())
	}
	var kinds []string
	for _, u := range Desired(rsp) {
		kinds = append(kinds, u.GetKind())
	}
	found := false
	for _, k := range kinds {
		found = found || k == "NodePool"
	}
	if !found {
		t.Errorf("desired kinds %v have no NodePool\nstatus: %v", kinds, Status(rsp))
	}
}
