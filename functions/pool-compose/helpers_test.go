package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/test/harness/pbstruct"
)

// now is the clock of every test.
var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// scenario is a RunFunctionRequest described in YAML.
type scenario struct {
	// Input is the function input; empty uses testInput.
	Input string
	// XR is the observed XPool.
	XR string
	// Observed composed resources by name.
	Observed map[string]string
	// QueryServices in the cluster; nil with NoRequired.
	QueryServices []string
	// CRDs installed in the cluster (names).
	CRDs []string
	// Cluster holds more objects of the cluster, decoded already.
	Cluster []*structpb.Struct
	// NoRequired leaves out the required resources, as on Crossplane's
	// first call.
	NoRequired bool
	// Desired composed resources from earlier pipeline steps.
	Desired map[string]string
	// Unsupplied names required resources Crossplane has not supplied yet.
	Unsupplied []string
	// Catalog sizes with the real sizing catalog instead of fakeSize.
	Catalog bool
	// KWOKCatalog is the function's --kwok-catalog (with Catalog).
	KWOKCatalog sizing.Cloud
	// Existing are the cluster-scoped objects named after the pool that
	// exist, by composed-resource name (see decision.OwnedNames); Crossplane
	// supplies every other one as absent.
	Existing map[string]string
	// Environment are the EnvironmentConfigs Crossplane supplies.
	Environment []string
}

// fakeSize sizes every pool to one 16-CPU, 128Gi type (or the pinned type)
// so table tests do not depend on catalog figures; "no-such-type" fails.
func fakeSize(in decision.SizeRequest) (sizing.Result, error) {
	it := in.InstanceType
	switch {
	case it == "no-such-type":
		return sizing.Result{}, fmt.Errorf("instance type %q is not in the catalog", it)
	case it == "" && in.Inherited().InstanceType != "":
		it = in.Inherited().InstanceType
	case it == "":
		it = "m-16x-amd64-linux"
	}
	res := sizing.Result{
		InstanceType: it, DerivedFrom: "test", Arch: "amd64",
		Allocatable:    sizing.Resources{CPU: apiresource.MustParse("15"), Memory: apiresource.MustParse("120Gi")},
		LargestOffered: sizing.Resources{CPU: apiresource.MustParse("16"), Memory: apiresource.MustParse("128Gi")},
		Kubelet:        sizing.KubeletFor(in.Cloud),
	}
	if in.Spot {
		res.SpotTypes = []string{it, "m-32x-amd64-linux"}
	}
	for _, e := range in.Executors {
		fits := e.CPU.MilliValue()*int64(in.ExecutorsPerNode) <= 15000
		c := sizing.Compatibility{QueryService: e.QueryService, Compatible: fits, RequiredCPU: e.CPU.DeepCopy(), RequiredMemory: e.Memory.DeepCopy(), InstanceType: it}
		if !fits {
			c.Message = "needs more CPU than " + it + " offers"
		}
		res.Compatibility = append(res.Compatibility, c)
	}
	return res, nil
}

// testInput is the function input most tests use.
const testInput = `
apiVersion: pool.fn.burstpool.io/v1beta1
kind: Input
clusterName: test-cluster
aws:
  role: KarpenterNodeRole-test-cluster
eksAutoMode:
  role: AmazonEKSAutoNodeRole
provisioning:
  clusterId: "123456"
  region: us-east
warmup:
  helperImage: ghcr.io/burstpool/warm:v0.1.0
tenancy:
  namespaces:
  - names: ["*"]
    attachFrom: ["*"]
    workloadClusters: [west, east, workload]
    clusterIds: ["123", "123456", "654321"]
    methods: [karpenter, eks-auto-mode, lke, doks, coreweave, static]
    clouds: [aws, gcp, azure, linode, digitalocean, coreweave, kwok, onprem]
    manageNodePool: true
    composeNodeIAM: true
`

// attachAnywhere is a tenancy setting that lets pools of every namespace
// attach QueryServices of every namespace.
const attachAnywhere = "tenancy: {namespaces: [{names: [\"*\"], attachFrom: [\"*\"]}]}\n"

// mustStruct converts YAML to a protobuf Struct.
func mustStruct(t testing.TB, y string) *structpb.Struct { return pbstruct.FromYAML(t, y) }

// crd is a minimal CustomResourceDefinition named name; CapacityBuffer's
// serves v1beta1, as Karpenter v1.14.1's does.
func crd(name string) string {
	c := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\n"
	if name == decision.CRDCapacityBuffer {
		c += "spec:\n  versions:\n  - name: " + objects.BufferVersion + "\n    served: true\n"
	}
	return c
}

// request builds the RunFunctionRequest of s.
func (s scenario) request(t testing.TB) *fnv1.RunFunctionRequest {
	t.Helper()
	in := s.Input
	if in == "" {
		in = testInput
	}
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "test"},
		Input:    mustStruct(t, in),
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, s.XR)}, Resources: map[string]*fnv1.Resource{}},
		Desired:  &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, "apiVersion: e6data.io/v1alpha1\nkind: XPool\n")}, Resources: map[string]*fnv1.Resource{}},
	}
	for n, y := range s.Observed {
		req.Observed.Resources[n] = &fnv1.Resource{Resource: mustStruct(t, y)}
	}
	for n, y := range s.Desired {
		req.Desired.Resources[n] = &fnv1.Resource{Resource: mustStruct(t, y)}
	}
	if s.NoRequired {
		return req
	}
	cluster := make([]*structpb.Struct, 0, len(s.QueryServices)+len(s.CRDs)+len(s.Cluster))
	cluster = append(cluster, s.Cluster...)
	for _, q := range s.QueryServices {
		cluster = append(cluster, mustStruct(t, q))
	}
	for _, c := range s.CRDs {
		cluster = append(cluster, mustStruct(t, crd(c)))
	}
	supply(t, req, cluster)
	req.RequiredResources[reqEnvironment] = &fnv1.Resources{}
	for _, e := range s.Environment {
		req.RequiredResources[reqEnvironment].Items = append(req.RequiredResources[reqEnvironment].Items, &fnv1.Resource{Resource: mustStruct(t, e)})
	}
	for _, o := range decision.OwnedNames {
		r := &fnv1.Resources{}
		if y, ok := s.Existing[string(o.Resource)]; ok {
			r.Items = []*fnv1.Resource{{Resource: mustStruct(t, y)}}
		}
		req.RequiredResources[reqOwnerPrefix+string(o.Resource)] = r
	}
	for _, n := range s.Unsupplied {
		if _, ok := req.RequiredResources[n]; !ok {
			t.Fatalf("Unsupplied names %q, which the function does not require", n)
		}
		delete(req.RequiredResources, n)
	}
	return req
}

// supply does what Crossplane does before calling the function with req:
// it calls the function once without required resources, and fetches what
// the returned Requirements select from the objects of the cluster into
// req.RequiredResources.
func supply(t testing.TB, req *fnv1.RunFunctionRequest, cluster []*structpb.Struct) {
	t.Helper()
	first := proto.Clone(req).(*fnv1.RunFunctionRequest)
	first.RequiredResources = nil
	rsp, err := (&Function{now: func() time.Time { return now }, size: fakeSize}).RunFunction(t.Context(), first)
	if err != nil {
		t.Fatalf("RunFunction: %v", err)
	}
	req.RequiredResources = map[string]*fnv1.Resources{}
	for n, sel := range rsp.GetRequirements().GetResources() {
		req.RequiredResources[n] = fetch(sel, cluster)
	}
}

// fetch selects from cluster what Crossplane v2.4.0's
// ExistingRequiredResourcesFetcher (internal/xfn/required_resources.go)
// returns for sel: with match_name, the object of that apiVersion, kind,
// namespace (empty: cluster scoped) and name, or nothing; with match_labels,
// every object of that apiVersion and kind in the namespace (no namespace:
// every namespace) whose labels include them all, sorted by namespace/name.
// Crossplane sends nothing found as an empty Resources.
func fetch(sel *fnv1.ResourceSelector, cluster []*structpb.Struct) *fnv1.Resources {
	out := &fnv1.Resources{}
	for _, o := range cluster {
		md := observed.Field(o, "metadata").GetStructValue()
		if observed.String(o, "apiVersion") != sel.GetApiVersion() || observed.String(o, "kind") != sel.GetKind() {
			continue
		}
		switch m := sel.GetMatch().(type) {
		case *fnv1.ResourceSelector_MatchName:
			if observed.String(md, "name") == m.MatchName && observed.String(md, "namespace") == sel.GetNamespace() {
				return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: o}}}
			}
		case *fnv1.ResourceSelector_MatchLabels:
			if sel.Namespace != nil && observed.String(md, "namespace") != sel.GetNamespace() {
				continue
			}
			if labels.SelectorFromSet(m.MatchLabels.GetLabels()).Matches(labels.Set(metadataLabels(md))) {
				out.Items = append(out.Items, &fnv1.Resource{Resource: o})
			}
		}
	}
	key := func(r *fnv1.Resource) string {
		return observed.String(r.GetResource(), "metadata", "namespace") + "/" + observed.String(r.GetResource(), "metadata", "name")
	}
	slices.SortFunc(out.Items, func(a, b *fnv1.Resource) int { return strings.Compare(key(a), key(b)) })
	return out
}

// metadataLabels reads the labels of an object's metadata.
func metadataLabels(md *structpb.Struct) map[string]string {
	out := map[string]string{}
	for k, v := range observed.Field(md, "labels").GetStructValue().GetFields() {
		out[k] = v.GetStringValue()
	}
	return out
}

// run runs the function on s with the real sizing catalog.
func (s scenario) run(t testing.TB) *fnv1.RunFunctionResponse {
	t.Helper()
	f := &Function{now: func() time.Time { return now }, size: fakeSize, kwokCatalog: s.KWOKCatalog}
	if s.Catalog {
		f.size = nil
	}
	rsp, err := f.RunFunction(t.Context(), s.request(t))
	if err != nil {
		t.Fatalf("RunFunction: %v", err)
	}
	return rsp
}

// environmentConfig is an EnvironmentConfig named name whose data is the YAML
// data (indented two spaces).
func environmentConfig(name, data string) string {
	return "apiVersion: apiextensions.crossplane.io/v1beta1\nkind: EnvironmentConfig\nmetadata:\n  name: " + name + "\ndata:\n" + data
}

// xpool is an XPool claimed as namespace/name with spec (YAML, indented
// two spaces) and status.
func xpool(name, ns, spec string) string {
	return "apiVersion: e6data.io/v1alpha1\nkind: XPool\nmetadata:\n  name: " + name + "-x7k2p\n  labels:\n    crossplane.io/claim-name: " + name +
		"\n    crossplane.io/claim-namespace: " + ns + "\nspec:\n" + spec
}

// qs is a QueryService.
func qs(name, ns, pool, poolNS, image, cpu, mem string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: e6data.io/v1alpha1\nkind: QueryService\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\n")
	if len(labels) > 0 {
		b.WriteString("  labels:\n")
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			b.WriteString("    " + k + ": " + labels[k] + "\n")
		}
	}
	b.WriteString("spec:\n  executor:\n    image: " + image + "\n    replicas: 2\n    resources:\n      cpu: \"" + cpu + "\"\n      memory: " + mem + "\n")
	if pool != "" {
		b.WriteString("    poolRef:\n      name: " + pool + "\n      namespace: " + poolNS + "\n")
	}
	return b.String()
}

// desired returns the desired composed resource n of rsp, or nil.
func desired(rsp *fnv1.RunFunctionResponse, n string) *unstructured.Unstructured {
	r, ok := rsp.GetDesired().GetResources()[n]
	if !ok {
		return nil
	}
	return &unstructured.Unstructured{Object: r.GetResource().AsMap()}
}

// desiredNames are the names of rsp's desired composed resources, sorted;
// empty, not nil, when there are none.
func desiredNames(rsp *fnv1.RunFunctionResponse) []string {
	return append([]string{}, slices.Sorted(maps.Keys(rsp.GetDesired().GetResources()))...)
}

// status returns the desired XPool status as a map.
func status(rsp *fnv1.RunFunctionResponse) map[string]any {
	m := rsp.GetDesired().GetComposite().GetResource().AsMap()
	st, _ := m["status"].(map[string]any)
	return st
}

// conditions maps each condition type of rsp to "Status/Reason".
func conditions(rsp *fnv1.RunFunctionResponse) map[string]string {
	out := map[string]string{}
	for _, c := range rsp.GetConditions() {
		out[c.GetType()] = strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_") + "/" + c.GetReason()
	}
	return out
}

// results lists rsp's results as "SEVERITY Reason: message".
func results(rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	for _, r := range rsp.GetResults() {
		out = append(out, strings.TrimPrefix(r.GetSeverity().String(), "SEVERITY_")+" "+r.GetReason()+": "+r.GetMessage())
	}
	return out
}

// toYAML renders a response as YAML with sorted keys.
func toYAML(t testing.TB, rsp *fnv1.RunFunctionResponse) []byte {
	t.Helper()
	j, err := protojson.Marshal(rsp)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// readFile reads a file relative to the test.
func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nestedNumber reads a number at path of an unstructured object, stored as
// a JSON number or a quantity string; 0 when absent.
func nestedNumber(obj map[string]any, path ...string) int64 {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case string:
		q, err := apiresource.ParseQuantity(n)
		if err != nil {
			return 0
		}
		return q.Value()
	}
	return 0
}
