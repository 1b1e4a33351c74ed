package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/test/harness/golden"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
	"github.com/burstpool/burstpool/test/reference"
)

// environment is a cluster the golden pools are rendered for: the CRDs it
// has installed and the data of its EnvironmentConfig, merged over the
// input of the Composition burstpool ships.
type environment struct {
	crds     []string
	settings string
	// kwokCatalog is the function's --kwok-catalog.
	kwokCatalog sizing.Cloud
}

// clusterSettings are the data of a cluster's EnvironmentConfig.
const clusterSettings = clusterIdentity + `  provisioning:
    clusterId: "123456"
    region: us-east
`

// managedSettings also make the function emit cloud node pools.
const managedSettings = clusterIdentity + `  provisioning:
    clusterId: "123456"
    region: us-east
    manageNodePool: true
`

// clusterIdentity are the cluster's name, node roles and helper image.
const clusterIdentity = `  clusterName: test-cluster
  aws:
    role: KarpenterNodeRole-test-cluster
  eksAutoMode:
    role: AmazonEKSAutoNodeRole
  warmup:
    helperImage: ghcr.io/burstpool/warm:v0.1.0
`

// referenceTenancy lets the example pools, in e6-pools, attach the
// example QueryServices of workspace-* namespaces.
const referenceTenancy = `  tenancy:
    namespaces:
    - names: [e6-pools]
      attachFrom: ["workspace-*"]
`

var environments = map[string]environment{
	"aws":       {crds: awsCRDs},
	"aws-iam":   {crds: awsCRDs, settings: nodeIAMSettings}, // node IAM (iam_test.go)
	"eks-auto":  {crds: []string{decision.CRDNodePool, decision.CRDEKSNodeClass}},
	"gcp":       {crds: []string{decision.CRDNodePool, decision.CRDGCENodeClass}},
	"azure":     {crds: []string{decision.CRDNodePool, decision.CRDAKSNodeClass}},
	"kwok":      {crds: kwokCRDs},
	"kwok-aws":  {crds: kwokCRDs, kwokCatalog: sizing.CloudAWS},
	"linode":    {crds: linodeCRDs},
	"lke":       {crds: linodeCRDs, settings: managedSettings},
	"doks":      {crds: []string{decision.CRDDOKS}, settings: managedSettings},
	"coreweave": {crds: []string{decision.CRDCoreWeave}, settings: managedSettings},
	"static":    {},
	// node groups under the Cluster Autoscaler (nodegroup_test.go)
	"eks-nodegroup": {crds: []string{decision.CRDEKSNodeGroup}, settings: clusterIdentity + nodeGroupSettingsYAML},
	"gke-nodegroup": {crds: []string{decision.CRDGKENodePool}, settings: clusterIdentity + nodeGroupSettingsYAML},
	"aks-nodegroup": {crds: []string{decision.CRDAKSNodePool}, settings: clusterIdentity + nodeGroupSettingsYAML},
}

// shippedInput is the function input of apis/composition.yaml.
func shippedInput(t *testing.T) string {
	t.Helper()
	var c struct {
		Spec struct {
			Pipeline []struct {
				Input map[string]any `json:"input"`
			} `json:"pipeline"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, "../../apis/composition.yaml")), &c); err != nil || len(c.Spec.Pipeline) == 0 {
		t.Fatalf("cannot read the function input of apis/composition.yaml: %v", err)
	}
	b, err := yaml.Marshal(c.Spec.Pipeline[0].Input)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// examplePools are the example pools of examples/pools and the
// reference's manifests in examples/pools/reference, by their golden
// folder.
func examplePools(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob("../../examples/pools/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example pools: %v", err)
	}
	out := map[string]map[string]any{}
	add := func(f, key string) {
		var p map[string]any
		if err := yaml.Unmarshal([]byte(readFile(t, f)), &p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[key] = p
	}
	for _, f := range files {
		add(f, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	for _, m := range reference.Manifests {
		add(m.Path("../.."), filepath.Join("reference", strings.TrimSuffix(m.File, ".yaml")))
	}
	return out
}

// claimToXR turns a Pool claim into its XPool.
func claimToXR(t *testing.T, claim map[string]any) (xr string, name, ns string) {
	t.Helper()
	md := claim["metadata"].(map[string]any)
	name, ns = md["name"].(string), md["namespace"].(string)
	spec, err := yaml.Marshal(map[string]any{"spec": claim["spec"]})
	if err != nil {
		t.Fatal(err)
	}
	return xpool(name, ns, "") + strings.TrimPrefix(string(spec), "spec:\n"), name, ns
}

// exampleQueryServices are examples/queryservices.yaml's QueryServices,
// pointed at the pool name/ns (poolRef and the e6data.io/pool label).
func exampleQueryServices(t *testing.T, name, ns string) []string {
	t.Helper()
	var out []string
	for _, doc := range strings.Split(readFile(t, "../../examples/queryservices.yaml"), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		if o["kind"] != "QueryService" {
			continue
		}
		ex := o["spec"].(map[string]any)["executor"].(map[string]any)
		ex["poolRef"] = map[string]any{"name": name, "namespace": ns}
		o["metadata"].(map[string]any)["labels"].(map[string]any)[qsv1alpha1.LabelPool] = name
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// TestGolden renders every example pool in every environment with the real
// sizing catalog, compares the response with testdata/<pool>/<env>.yaml
// (go test -update rewrites them), and validates every emitted object
// against its kind's real schema where burstpool has it.
func TestGolden(t *testing.T) {
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatalf("cannot load the upstream schemas (see test/harness/schemacheck): %v", err)
	}
	kinds := reg.Kinds()
	for pool, claim := range examplePools(t) {
		xr, name, ns := claimToXR(t, claim)
		for env, e := range environments {
			t.Run(pool+"/"+env, func(t *testing.T) {
				settings := e.settings
				if settings == "" {
					settings = clusterSettings
				}
				s := scenario{Input: shippedInput(t), Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, settings+referenceTenancy)},
					XR: xr, QueryServices: exampleQueryServices(t, name, ns), CRDs: e.crds, Catalog: true, KWOKCatalog: e.kwokCatalog}
				rsp := s.run(t)
				got := toYAML(t, rsp)
				path := filepath.Join("testdata", pool, env+".yaml")
				golden.File(t, path, got)
				for _, n := range desiredNames(rsp) {
					u := desired(rsp, n)
					if !slices.Contains(kinds, u.GroupVersionKind()) {
						continue
					}
					if err := reg.Validate(u); err != nil {
						t.Errorf("%s: emitted object %s is invalid: %v", path, n, err)
					}
				}
				if bytes.Contains(got, []byte("FATAL")) {
					t.Errorf("%s: Fatal result", path)
				}
			})
		}
	}
}
