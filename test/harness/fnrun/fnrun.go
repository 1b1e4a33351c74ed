// Package fnrun is test harness: it serves the pool-compose function from
// its own binary on 127.0.0.1 and runs one composition of an XPool the way
// Crossplane v2.4 does, fetching the resources the function requires from a
// real API server. Tests that replay what a tenant can do through the
// objects Crossplane hands the function (QueryServices, EnvironmentConfigs,
// claims) use it, so the function is judged over gRPC on what a cluster
// really holds, not on a request a test wrote by hand.
package fnrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// maxIterations is how many times Crossplane v2.4 calls a function while
// its requirements change (internal/xfn: MaxRequirementsIterations).
const maxIterations = 5

// Function is the pool-compose binary serving on 127.0.0.1.
type Function struct {
	client fnv1.FunctionRunnerServiceClient
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// build builds functions/pool-compose once per test binary into
// _output/fnrun of the checkout, holding a file lock so that test binaries
// building it at once do not write it together.
func build(root string) (string, error) {
	buildOnce.Do(func() {
		dir := filepath.Join(root, "_output", "fnrun")
		if buildErr = os.MkdirAll(dir, 0o755); buildErr != nil {
			return
		}
		lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			buildErr = err
			return
		}
		defer lock.Close() //nolint:errcheck // closing releases the lock
		if buildErr = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); buildErr != nil {
			return
		}
		binary = filepath.Join(dir, "pool-compose")
		cmd := exec.Command("go", "build", "-o", binary, "./functions/pool-compose") //nolint:gosec // the repository's own package
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("cannot build functions/pool-compose: %w\n%s", err, b)
		}
	})
	return binary, buildErr
}

// CRDPaths are the CRDs an API server serves for the function's required
// resources to be fetched as in a cluster with burstpool and Karpenter on
// AWS installed: the QueryService, Crossplane's EnvironmentConfig, the
// PoolCapacity, Karpenter's NodePool and EC2NodeClass, under the checkout
// at root.
func CRDPaths(root string) []string {
	upstream := filepath.Join(root, "test", "crds", "upstream")
	return []string{
		filepath.Join(root, "examples", "crds"),
		filepath.Join(upstream, "crossplane", "apiextensions.crossplane.io_environmentconfigs.yaml"),
		filepath.Join(root, "package", "provider", "crds"),
		filepath.Join(upstream, "karpenter.sh_nodepools.yaml"),
		filepath.Join(upstream, "karpenter.k8s.aws_ec2nodeclasses.yaml"),
	}
}

// Start builds the function (once per test binary) and serves it on a free
// port of 127.0.0.1 until the test ends.
func Start(t testing.TB) *Function {
	t.Helper()
	root := gomod.RootForTest(t)
	bin, err := build(root)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := localcp.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd := exec.Command(bin, "--insecure", "--address", addr, "--metrics-address", "") //nolint:gosec // the binary built above
	logs, err := os.Create(filepath.Join(t.TempDir(), "pool-compose.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start the function: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			if b, err := os.ReadFile(logs.Name()); err == nil {
				t.Logf("function log:\n%s", localcp.TailLines(string(b), 40))
			}
		}
	})
	if err := localcp.WaitPort(t.Context(), addr, 30*time.Second); err != nil {
		t.Fatalf("the function does not listen on %s: %v", addr, err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &Function{client: fnv1.NewFunctionRunnerServiceClient(conn)}
}

// Request is one composition: the XPool, the composed resources that
// already exist (by composition resource name) and the Composition's
// function input.
type Request struct {
	XR       *unstructured.Unstructured
	Observed map[string]*unstructured.Unstructured
	// Input is the pipeline step's input; nil takes the one of the
	// Composition burstpool ships (apis/composition.yaml).
	Input map[string]any
}

// Compose runs the function as Crossplane v2.4 does for one reconcile of
// r.XR: it calls the function, fetches from c every resource the response
// requires (internal/xfn ExistingRequiredResourcesFetcher: a Get by
// namespace and name, or a List by labels in one or every namespace;
// nothing found is an empty list), and calls again while the requirements
// change, at most five times. It returns the last response.
func (f *Function) Compose(ctx context.Context, c client.Reader, r Request) (*fnv1.RunFunctionResponse, error) {
	req, err := request(r)
	if err != nil {
		return nil, err
	}
	var rsp *fnv1.RunFunctionResponse
	var last *fnv1.Requirements
	for range maxIterations {
		if rsp, err = f.client.RunFunction(ctx, req); err != nil {
			return nil, fmt.Errorf("RunFunction: %w", err)
		}
		reqs := rsp.GetRequirements()
		if proto.Equal(reqs, last) {
			return rsp, nil
		}
		last = reqs
		req.RequiredResources = map[string]*fnv1.Resources{}
		for n, sel := range reqs.GetResources() {
			if req.RequiredResources[n], err = Fetch(ctx, c, sel); err != nil {
				return nil, fmt.Errorf("cannot fetch required resource %q: %w", n, err)
			}
		}
	}
	return rsp, nil
}

// Fetch returns what Crossplane hands a function for one required
// resource selector.
func Fetch(ctx context.Context, c client.Reader, sel *fnv1.ResourceSelector) (*fnv1.Resources, error) {
	gvk := schema.FromAPIVersionAndKind(sel.GetApiVersion(), sel.GetKind())
	out := &fnv1.Resources{}
	if name := sel.GetMatchName(); name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		err := c.Get(ctx, client.ObjectKey{Namespace: sel.GetNamespace(), Name: name}, u)
		if apierrors.IsNotFound(err) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		return out, add(out, u.Object)
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.MatchingLabels(sel.GetMatchLabels().GetLabels())}
	if sel.Namespace != nil {
		opts = append(opts, client.InNamespace(sel.GetNamespace()))
	}
	if err := c.List(ctx, l, opts...); err != nil {
		return nil, err
	}
	for i := range l.Items {
		if err := add(out, l.Items[i].Object); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func add(out *fnv1.Resources, obj map[string]any) error {
	s, err := structpb.NewStruct(obj)
	if err != nil {
		return err
	}
	out.Items = append(out.Items, &fnv1.Resource{Resource: s})
	return nil
}

// request is the first RunFunctionRequest of r: no required resources yet,
// an empty desired state but for the composite's kind.
func request(r Request) (*fnv1.RunFunctionRequest, error) {
	in := r.Input
	if in == nil {
		var err error
		if in, err = ShippedInput(); err != nil {
			return nil, err
		}
	}
	input, err := structpb.NewStruct(in)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	xr, err := structpb.NewStruct(r.XR.Object)
	if err != nil {
		return nil, fmt.Errorf("XR: %w", err)
	}
	desired, err := structpb.NewStruct(map[string]any{"apiVersion": r.XR.GetAPIVersion(), "kind": r.XR.GetKind()})
	if err != nil {
		return nil, err
	}
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "fnrun"},
		Input:    input,
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: xr}, Resources: map[string]*fnv1.Resource{}},
		Desired:  &fnv1.State{Composite: &fnv1.Resource{Resource: desired}, Resources: map[string]*fnv1.Resource{}},
	}
	for n, u := range r.Observed {
		s, err := structpb.NewStruct(u.Object)
		if err != nil {
			return nil, fmt.Errorf("observed %s: %w", n, err)
		}
		req.Observed.Resources[n] = &fnv1.Resource{Resource: s}
	}
	return req, nil
}

// ShippedInput is the input of the compose-pool step of the Composition
// burstpool ships, apis/composition.yaml.
func ShippedInput() (map[string]any, error) {
	root, err := gomod.Root()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(root, "apis", "composition.yaml")) //nolint:gosec // the repository's own file
	if err != nil {
		return nil, err
	}
	var comp struct {
		Spec struct {
			Pipeline []struct {
				Step  string         `json:"step"`
				Input map[string]any `json:"input"`
			} `json:"pipeline"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &comp); err != nil {
		return nil, fmt.Errorf("apis/composition.yaml: %w", err)
	}
	for _, s := range comp.Spec.Pipeline {
		if s.Step == "compose-pool" {
			return s.Input, nil
		}
	}
	return nil, fmt.Errorf("apis/composition.yaml has no compose-pool step")
}

// XPool is the composite Crossplane makes of claim namespace/name with the
// spec given as YAML: named after the claim with a suffix, labelled with
// the claim's name and namespace.
func XPool(name, namespace, specYAML string) (*unstructured.Unstructured, error) {
	spec := map[string]any{}
	if err := yaml.Unmarshal([]byte(specYAML), &spec); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("e6data.io/v1alpha1")
	u.SetKind("XPool")
	u.SetName(name + "-x7k2p")
	u.SetLabels(map[string]string{"crossplane.io/claim-name": name, "crossplane.io/claim-namespace": namespace})
	return u, nil
}

// Desired returns rsp's desired composed resources by composition resource
// name.
func Desired(rsp *fnv1.RunFunctionResponse) map[string]*unstructured.Unstructured {
	out := make(map[string]*unstructured.Unstructured, len(rsp.GetDesired().GetResources()))
	for n, r := range rsp.GetDesired().GetResources() {
		out[n] = &unstructured.Unstructured{Object: r.GetResource().AsMap()}
	}
	return out
}

// Status returns the desired status of the composite.
func Status(rsp *fnv1.RunFunctionResponse) map[string]any {
	s, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	return s
}

// Conditions returns the conditions the response sets on the composite
// (and its claim), by type.
func Conditions(rsp *fnv1.RunFunctionResponse) map[string]*fnv1.Condition {
	out := make(map[string]*fnv1.Condition, len(rsp.GetConditions()))
	for _, c := range rsp.GetConditions() {
		out[c.GetType()] = c
	}
	return out
}
