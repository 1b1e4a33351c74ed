package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
)

// benchRequest is a kwok pool that allows every QueryService by selector,
// with n attached QueryServices of random sizes (seeded) that use images
// distinct images between them, and every warmup DaemonSet observed. With
// realistic, the QueryServices are the size real ones are (realisticQS).
func benchRequest(b testing.TB, n, images int, realistic bool) *fnv1.RunFunctionRequest {
	b.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(images)))
	qss := make([]string, 0, n)
	for i := range n {
		cpu := []string{"2", "4", "8"}[rng.IntN(3)]
		mem := []string{"8Gi", "16Gi", "30Gi"}[rng.IntN(3)]
		img := fmt.Sprintf("ghcr.io/e6data/executor:3.%d", i%images)
		name, ns, labels := fmt.Sprintf("qs-%04d", i), fmt.Sprintf("team-%d", i%50), map[string]string{"e6data.io/burst": "enabled"}
		if realistic {
			qss = append(qss, realisticQS(i, name, ns, "burst", "pools", img, cpu, mem, labels))
			continue
		}
		qss = append(qss, qs(name, ns, "burst", "pools", img, cpu, mem, labels))
	}
	s := scenario{
		XR:            xpool("burst", "pools", "  minExecutors: 4\n  maxExecutors: 200\n  executorsPerNode: 2\n  queryServiceSelector: {matchLabels: {e6data.io/burst: enabled}}\n"),
		QueryServices: qss, CRDs: kwokCRDs, Catalog: true,
	}
	first, err := (&Function{now: func() time.Time { return now }}).RunFunction(b.Context(), s.request(b))
	if err != nil || fatal(first) != "" {
		b.Fatalf("RunFunction: %v %s", err, fatal(first))
	}
	// Observe the first render as the API server returns it: every object
	// whole, with a status.
	obs := map[string]string{}
	for _, name := range desiredNames(first) {
		u := desired(first, name)
		u.Object["status"] = map[string]any{
			"observedGeneration": 1, "desiredNumberScheduled": 3, "numberReady": 3,
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
		}
		u.SetGeneration(1)
		y, err := json.Marshal(u.Object)
		if err != nil {
			b.Fatal(err)
		}
		obs[name] = string(y)
	}
	s.Observed = obs
	// And the XPool carries the status the first render wrote, as it will.
	req := s.request(b)
	req.Observed.Composite.Resource.Fields["status"] = first.GetDesired().GetComposite().GetResource().GetFields()["status"]
	return req
}

// benchFixedObjects are the desired objects of a benchmark's pool besides
// its warmup DaemonSets, by name.
var benchFixedObjects = []string{"access-policy", "access-policy-binding", "capacity", "node-agent-priorityclass", "nodeclass", "nodepool", "placeholder", "placeholder-priorityclass"}

// benchShapes are the pools the function is benchmarked on, as attached
// QueryServices × warm images: a ladder from 1 to 1,000 QueryServices,
// the four shapes the gRPC benchmark compares with its floor among them.
var benchShapes = []struct{ n, images int }{{1, 1}, {10, 1}, {10, 10}, {100, 1}, {100, 20}, {1000, 1}, {1000, 20}}

// BenchmarkRunFunction runs RunFunction in process on each of benchShapes,
// checking each response: decided, each call decided anew (a request that
// changed: the objects already rendered come from the render cache), and
// cached, each call the same request, answered by the decision cache.
func BenchmarkRunFunction(b *testing.B) {
	for _, s := range benchShapes {
		req := benchRequest(b, s.n, s.images, false)
		for _, cached := range []bool{false, true} {
			b.Run(benchName(s.n, s.images, cached), func(b *testing.B) {
				f := benchFunction(cached)
				// The pool's fixed objects (its PoolCapacity, NodeClass and
				// NodePool, the placeholders and their PriorityClass, the
				// node agents' PriorityClass, and the admission policy and
				// its binding: unauthorized executors are denied by
				// default), and one warmup DaemonSet per image.
				benchRunFunction(b, f, req, func(rsp *fnv1.RunFunctionResponse) {
					var fixed []string
					warmups := 0
					for _, name := range desiredNames(rsp) {
						if strings.HasPrefix(name, "warmup-") {
							warmups++
							continue
						}
						fixed = append(fixed, name)
					}
					if diff := cmp.Diff(benchFixedObjects, fixed); diff != "" || warmups != s.images {
						b.Fatalf("desired objects: %d warmup DaemonSets, want %d; the others (-want +got):\n%s", warmups, s.images, diff)
					}
				})
				if cached {
					if hits := f.decisions.hits.Load(); hits+1 < uint64(b.N) {
						b.Fatalf("the decision cache answered %d of %d calls, want all but the first", hits, b.N)
					}
				}
				b.ReportMetric(float64(s.n), "queryservices")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.n), "ns/queryservice")
			})
		}
	}
}

// benchName names a benchmark of n QueryServices and images images,
// decided or cached.
func benchName(n, images int, cached bool) string {
	if cached {
		return fmt.Sprintf("qs=%d/images=%d/cached", n, images)
	}
	return fmt.Sprintf("qs=%d/images=%d/decided", n, images)
}

// benchFunction is the Function a benchmark runs: with a render cache, and
// a decision cache when cached.
func benchFunction(cached bool) *Function {
	f := &Function{now: func() time.Time { return now }, cache: &renderCache{}}
	if cached {
		f.decisions = newDecisionCache(16, 64<<20)
	}
	return f
}

// benchRunFunction times f's RunFunction on req in process, failing b on
// an error or a fatal result and handing every response to check.
func benchRunFunction(b *testing.B, f *Function, req *fnv1.RunFunctionRequest, check func(*fnv1.RunFunctionResponse)) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rsp, err := f.RunFunction(b.Context(), req)
		if err != nil || fatal(rsp) != "" {
			b.Fatalf("RunFunction: %v %s", err, fatal(rsp))
		}
		check(rsp)
	}
}

// BenchmarkServe runs a call as the gRPC server serves it, in process, on
// each of benchShapes: the request decoded from its bytes, answered by
// wireServer, the answer encoded; decided (each call decided anew, the
// objects already rendered from the render cache and sent as their
// encodings) and cached (the decision cache's kept encoding). Each
// response must encode to as many bytes as the decided one.
func BenchmarkServe(b *testing.B) {
	for _, s := range benchShapes {
		req, err := proto.Marshal(benchRequest(b, s.n, s.images, false))
		if err != nil {
			b.Fatal(err)
		}
		for _, cached := range []bool{false, true} {
			b.Run(benchName(s.n, s.images, cached), func(b *testing.B) {
				f := benchFunction(cached)
				size := 0
				b.ReportAllocs()
				for b.Loop() {
					in := &fnv1.RunFunctionRequest{}
					if err := proto.Unmarshal(req, in); err != nil {
						b.Fatal(err)
					}
					rsp, err := wireServer{f: f}.RunFunction(b.Context(), in)
					if err != nil {
						b.Fatal(err)
					}
					out, err := proto.Marshal(rsp)
					if err != nil {
						b.Fatal(err)
					}
					if size == 0 {
						size = checkServed(b, f, in, out)
					}
					if len(out) != size {
						b.Fatalf("the response is %d bytes, the decided one %d", len(out), size)
					}
				}
				b.ReportMetric(float64(len(req)), "request-bytes")
				b.ReportMetric(float64(size), "response-bytes")
			})
		}
	}
}

// checkServed checks that out, the bytes served for req, read as the
// response f decides for req, and returns their length.
func checkServed(b *testing.B, f *Function, req *fnv1.RunFunctionRequest, out []byte) int {
	b.Helper()
	got := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(out, got); err != nil {
		b.Fatal(err)
	}
	if fatal(got) != "" {
		b.Fatalf("RunFunction: %s", fatal(got))
	}
	want, _ := (&Function{now: f.now}).answer(req, false)
	if !proto.Equal(want, got) {
		b.Fatal("the response served differs from the one decided")
	}
	return len(out)
}
