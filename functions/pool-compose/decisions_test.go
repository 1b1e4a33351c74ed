package main

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// settled is the request Crossplane sends for s once the pool has
// settled: the objects of the first response observed, healthy, and the
// XPool carrying the status that response wrote. statusOf overrides an
// observed object's status (nil: healthy).
func settled(t testing.TB, s scenario, statusOf func(string, *unstructured.Unstructured) map[string]any) *fnv1.RunFunctionRequest {
	t.Helper()
	first := s.run(t)
	if f := fatal(first); f != "" {
		t.Fatalf("first call: Fatal %s", f)
	}
	s.Observed = observe(t, first, func(n string, u *unstructured.Unstructured) map[string]any {
		if statusOf != nil {
			if st := statusOf(n, u); st != nil {
				return st
			}
		}
		return healthy(1, 2)(n, u)
	})
	req := s.request(t)
	req.Observed.Composite.Resource.Fields["status"] = first.GetDesired().GetComposite().GetResource().GetFields()["status"]
	return req
}

// decisionOf runs f on req at at and says how the decision cache answered:
// hit, miss or uncacheable.
func decisionOf(t *testing.T, f *Function, req *fnv1.RunFunctionRequest, at time.Time) (*fnv1.RunFunctionResponse, string) {
	t.Helper()
	f.now = func() time.Time { return at }
	h, m, u := f.decisions.hits.Load(), f.decisions.misses.Load(), f.decisions.uncacheable.Load()
	rsp, err := f.RunFunction(t.Context(), req)
	if err != nil {
		t.Fatalf("RunFunction: %v", err)
	}
	var got []string
	if f.decisions.hits.Load() != h {
		got = append(got, "hit")
	}
	if f.decisions.misses.Load() != m {
		got = append(got, "miss")
	}
	if f.decisions.uncacheable.Load() != u {
		got = append(got, "uncacheable")
	}
	return rsp, strings.Join(got, "+")
}

// structAt returns the Struct at path of s, created where missing.
func structAt(s *structpb.Struct, path ...string) *structpb.Struct {
	for _, p := range path {
		v, ok := s.GetFields()[p]
		if !ok || v.GetStructValue() == nil {
			v = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{}})
			s.Fields[p] = v
		}
		s = v.GetStructValue()
	}
	return s
}

// withOpenCircuit is req with the XPool's watch circuit opened a minute
// ago: the pool follows its counts until the circuit's cooldown ends, five
// minutes from now.
func withOpenCircuit(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionRequest {
	out := proto.Clone(req).(*fnv1.RunFunctionRequest)
	structAt(out.Observed.Composite.Resource, "status").Fields["conditions"] = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
		structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"type": structpb.NewStringValue("Responsive"), "status": structpb.NewStringValue("False"), "reason": structpb.NewStringValue("WatchCircuitOpen"),
			"lastTransitionTime": structpb.NewStringValue(now.Add(-time.Minute).Format(time.RFC3339)),
		}}),
	}})
	return out
}

// withUnusedImage is req with a warmup DaemonSet observed for an image no
// QueryService uses any more: it is kept warm for the retention, counted
// down from now.
func withUnusedImage(t testing.TB, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionRequest {
	out := proto.Clone(req).(*fnv1.RunFunctionRequest)
	out.Observed.Resources["warmup-unused"] = &fnv1.Resource{Resource: mustStruct(t, `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: burst-warmup-unused
  namespace: pools
  annotations: {e6data.io/image: "ghcr.io/e6data/retired:1.0"}
status: {desiredNumberScheduled: 2, numberReady: 2}
`)}
	return out
}

// TestDecisionCache changes, one at a time, each part of a settled pool's
// request that the decision reads, and each reading of the clock that
// matters, and checks how the decision cache answers: anything changed is
// decided afresh (a miss), the same request again is a hit, and a decision
// that depends on the very reading of the clock is never kept
// (uncacheable). Whatever it answers, the response is the one an uncached
// function decides for that request at that time.
func TestDecisionCache(t *testing.T) {
	env := []string{environmentConfig(decision.DefaultEnvironmentConfig, "  clusterName: test-cluster\n")}
	pool := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs, Environment: env}
	base := settled(t, pool, nil)

	// A QueryService newly reported is checked now.
	fresh := pool.request(t)
	circuit := withOpenCircuit(base)
	unused := withUnusedImage(t, base)
	// A cluster that serves CapacityBuffer but whose autoscaler has not
	// processed the pool's buffer: the pool waits for it, from now.
	awaiting := settled(t, scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: append(slices.Clone(kwokCRDs), decision.CRDCapacityBuffer), Environment: env}, nil)

	type change struct {
		reason string
		// first is the request decided first (nil: base), at now; it is
		// answered firstGot.
		first    *fnv1.RunFunctionRequest
		firstGot string
		// change changes a copy of first into the second request (nil:
		// the same request), decided after at.
		change func(*fnv1.RunFunctionRequest)
		after  time.Duration
		// want is hit, miss, uncacheable, or decided (a miss or
		// uncacheable: what the change makes of the decision is not
		// this test's concern).
		want string
	}
	cases := map[string]change{
		"SameRequest": {
			reason: "Crossplane polls an unchanged pool: the response kept is served.",
			want:   "hit",
		},
		"SameRequestLater": {
			reason: "A decision that reads no clock holds at any later time.",
			after:  49 * time.Hour,
			want:   "hit",
		},
		"ClockWentBack": {
			reason: "A response is served only at or after the time it was decided.",
			after:  -time.Second,
			want:   "miss",
		},
		"XPoolSpec": {
			reason: "The pool's spec changed.",
			change: func(r *fnv1.RunFunctionRequest) {
				structAt(r.Observed.Composite.Resource, "spec").Fields["maxExecutors"] = structpb.NewNumberValue(9)
			},
			want: "miss",
		},
		"XPoolStatus": {
			reason: "The status Crossplane wrote changed.",
			change: func(r *fnv1.RunFunctionRequest) {
				structAt(r.Observed.Composite.Resource, "status").Fields["phase"] = structpb.NewStringValue("Pending")
			},
			want: "miss",
		},
		"XPoolMetadata": {
			reason: "The XPool is being deleted.",
			change: func(r *fnv1.RunFunctionRequest) {
				structAt(r.Observed.Composite.Resource, "metadata").Fields["deletionTimestamp"] = structpb.NewStringValue(now.Format(time.RFC3339))
			},
			want: "miss",
		},
		"Input": {
			reason: "The Composition's function input changed.",
			change: func(r *fnv1.RunFunctionRequest) {
				r.Input.Fields["clusterName"] = structpb.NewStringValue("other-cluster")
			},
			want: "miss",
		},
		"Settings": {
			reason: "The cluster's EnvironmentConfig changed.",
			change: func(r *fnv1.RunFunctionRequest) {
				structAt(r.RequiredResources[reqEnvironment].Items[0].Resource, "data").Fields["clusterName"] = structpb.NewStringValue("renamed")
			},
			want: "miss",
		},
		"Context": {
			reason: "An earlier step put something in the pipeline's context.",
			change: func(r *fnv1.RunFunctionRequest) {
				r.Context = &structpb.Struct{Fields: map[string]*structpb.Value{"apiextensions.crossplane.io/environment": structpb.NewStringValue("x")}}
			},
			want: "miss",
		},
		"DesiredComposite": {
			reason: "An earlier step desired something of the XPool.",
			change: func(r *fnv1.RunFunctionRequest) {
				structAt(r.Desired.Composite.Resource, "metadata", "labels").Fields["team"] = structpb.NewStringValue("a")
			},
			want: "miss",
		},
		"DesiredResources": {
			reason: "An earlier step desired an object.",
			change: func(r *fnv1.RunFunctionRequest) {
				if r.Desired.Resources == nil {
					r.Desired.Resources = map[string]*fnv1.Resource{}
				}
				r.Desired.Resources["extra"] = &fnv1.Resource{Resource: mustStruct(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n")}
			},
			want: "miss",
		},
		"Tag": {
			reason: "The request's tag, which the response carries back, changed.",
			change: func(r *fnv1.RunFunctionRequest) { r.Meta.Tag = "other" },
			want:   "miss",
		},
		"Credentials": {
			reason: "Crossplane supplied credentials.",
			change: func(r *fnv1.RunFunctionRequest) {
				r.Credentials = map[string]*fnv1.Credentials{"c": {Source: &fnv1.Credentials_CredentialData{CredentialData: &fnv1.CredentialData{Data: map[string][]byte{"k": []byte("v")}}}}}
			},
			want: "miss",
		},
		"ReportCheckedNow": {
			reason:   "A QueryService reported for the first time is checked at the clock's reading: that response holds for that reading only.",
			first:    fresh,
			firstGot: "uncacheable",
			want:     "uncacheable",
		},
		"WatchCircuitOpen": {
			reason:   "While the watch circuit is open the pool follows its counts; that decision holds until the cooldown ends.",
			first:    circuit,
			firstGot: "miss",
			after:    4 * time.Minute,
			want:     "hit",
		},
		"WatchCircuitCooledDown": {
			reason:   "Once the circuit's cooldown has ended the decision changes (the default TTL): the response kept is not served.",
			first:    circuit,
			firstGot: "miss",
			after:    5*time.Minute + time.Second,
			want:     "miss",
		},
		"UnusedImageRetained": {
			reason:   "An unused image's retention is counted down from the clock's reading.",
			first:    unused,
			firstGot: "uncacheable",
			want:     "uncacheable",
		},
		"AwaitingAutoscaler": {
			reason:   "The wait for an autoscaler to process the CapacityBuffer is counted down from the clock's reading.",
			first:    awaiting,
			firstGot: "uncacheable",
			want:     "uncacheable",
		},
		"AutoscalerWaitOver": {
			reason:   "Past the wait, the decision (placeholders hold the slots) holds at any later time.",
			first:    awaiting,
			firstGot: "uncacheable",
			after:    3 * time.Minute,
			want:     "miss",
		},
	}
	// Each required resource (the QueryServices, the CRDs, the
	// EnvironmentConfig, the owners of the pool's names) and each
	// observed composed resource, changed.
	for _, n := range slices.Sorted(maps.Keys(base.GetRequiredResources())) {
		cases["Required/"+n] = change{
			reason: "Required resource " + n + " changed, or appeared.",
			change: func(r *fnv1.RunFunctionRequest) {
				rs := r.RequiredResources[n]
				if len(rs.GetItems()) == 0 {
					rs.Items = append(rs.Items, &fnv1.Resource{Resource: mustStruct(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: appeared}\n")})
					return
				}
				structAt(rs.Items[0].Resource, "metadata", "labels").Fields["changed"] = structpb.NewStringValue("yes")
			},
			want: "decided",
		}
	}
	for _, n := range slices.Sorted(maps.Keys(base.GetObserved().GetResources())) {
		cases["Observed/"+n] = change{
			reason: "Observed composed resource " + n + " changed.",
			change: func(r *fnv1.RunFunctionRequest) {
				structAt(r.Observed.Resources[n].Resource, "status").Fields["changed"] = structpb.NewBoolValue(true)
			},
			want: "decided",
		}
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			first := tc.first
			if first == nil {
				first = base
			}
			wantFirst := tc.firstGot
			if wantFirst == "" {
				wantFirst = "miss"
			}
			f := &Function{size: fakeSize, decisions: newDecisionCache(16, 64<<20)}
			if _, got := decisionOf(t, f, proto.Clone(first).(*fnv1.RunFunctionRequest), now); got != wantFirst {
				t.Fatalf("%s\nfirst request: %s, want %s", tc.reason, got, wantFirst)
			}
			second := proto.Clone(first).(*fnv1.RunFunctionRequest)
			if tc.change != nil {
				tc.change(second)
			}
			at := now.Add(tc.after)
			rsp, got := decisionOf(t, f, second, at)
			if tc.want == "decided" && (got == "miss" || got == "uncacheable") {
				got = "decided"
			}
			if got != tc.want {
				t.Errorf("%s\nsecond request: %s, want %s", tc.reason, got, tc.want)
			}
			want, err := (&Function{now: func() time.Time { return at }, size: fakeSize}).RunFunction(t.Context(), proto.Clone(second).(*fnv1.RunFunctionRequest))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nthe response differs from the one decided afresh (-fresh +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestUntil checks, on every example pool in every environment (settled)
// and on the pools whose decisions read the clock, that a response holds
// as long as its decision says (decision.Output.Until): deciding the same
// request later, within that, gives the same response.
func TestUntil(t *testing.T) {
	reqs := map[string]*fnv1.RunFunctionRequest{}
	sizes := map[string]*Function{}
	for pool, claim := range examplePools(t) {
		xr, name, ns := claimToXR(t, claim)
		for env, e := range environments {
			settings := e.settings
			if settings == "" {
				settings = clusterSettings
			}
			s := scenario{Input: shippedInput(t), Environment: []string{environmentConfig(decision.DefaultEnvironmentConfig, settings+referenceTenancy)},
				XR: xr, QueryServices: exampleQueryServices(t, name, ns), CRDs: e.crds, Catalog: true, KWOKCatalog: e.kwokCatalog}
			reqs[pool+"/"+env] = settled(t, s, nil)
			sizes[pool+"/"+env] = &Function{kwokCatalog: e.kwokCatalog}
		}
	}
	pool := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs}
	reqs["Fresh"] = pool.request(t)
	reqs["Settled"] = settled(t, pool, nil)
	reqs["AwaitingAutoscaler"] = settled(t, scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: append(slices.Clone(kwokCRDs), decision.CRDCapacityBuffer)}, nil)
	reqs["WatchCircuitOpen"] = withOpenCircuit(reqs["Settled"])
	reqs["UnusedImageRetained"] = withUnusedImage(t, reqs["Settled"])
	for _, name := range slices.Sorted(maps.Keys(reqs)) {
		t.Run(name, func(t *testing.T) {
			f := sizes[name]
			if f == nil {
				f = &Function{size: fakeSize}
			}
			req := reqs[name]
			rsp, until := f.compose(proto.Clone(req).(*fnv1.RunFunctionRequest), now)
			for _, d := range []time.Duration{time.Second, 3 * time.Minute, 7 * time.Minute, 49 * time.Hour} {
				at := now.Add(d)
				if !decision.Holds(now, until, at) {
					continue
				}
				later, _ := f.compose(proto.Clone(req).(*fnv1.RunFunctionRequest), at)
				if diff := cmp.Diff(rsp, later, protocmp.Transform()); diff != "" {
					t.Errorf("decided at %s, the response holds until %s, but decided again %s later it differs (-first +later):\n%s", now, until, d, diff)
				}
			}
		})
	}
}

// TestDecisionCacheBound fills a decision cache of 8 MiB with the
// responses to many distinct requests of large pools, and checks that it
// keeps within its bound by its own count, and that the heap its responses
// hold (the heap with the cache full, less the heap once it is dropped)
// stays within its count.
func TestDecisionCacheBound(t *testing.T) {
	const bound = 8 << 20
	base := benchRequest(t, 200, 20, true)
	c := newDecisionCache(1000, bound)
	f := &Function{now: func() time.Time { return now }, decisions: c}
	const calls = 40
	for i := range calls {
		// A distinct request of its own memory: the responses share
		// nothing but what the function keeps across calls.
		req := proto.Clone(base).(*fnv1.RunFunctionRequest)
		req.Meta.Tag = fmt.Sprintf("request-%d", i)
		if _, err := f.RunFunction(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if _, bytes := c.size(); bytes > bound {
			t.Fatalf("after %d requests the cache counts %d bytes, more than its bound of %d", i+1, bytes, bound)
		}
	}
	entries, bytes := c.size()
	if entries == calls || entries == 0 {
		t.Errorf("the cache keeps %d of %d responses: want some, and some evicted to stay within %d bytes", entries, calls, bound)
	}
	heap := func() int64 {
		// Twice: the first only empties the sync.Pools into their
		// victim caches.
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	full := heap()
	runtime.KeepAlive(c)
	// The cache is no longer reachable.
	held := full - heap()
	runtime.KeepAlive(base)
	t.Logf("%d of %d responses kept, %d bytes counted, %d bytes of heap held (bound %d)", entries, calls, bytes, held, bound)
	if held > bytes {
		t.Errorf("the cache counts %d bytes but its responses hold %d: its estimate is not an upper bound", bytes, held)
	}
}

// TestDecisionCacheConcurrent calls one function from many goroutines at
// once, as gRPC does, with requests it answers from its caches and
// requests it decides, and checks every response against the one an
// uncached function decides (go test -race finds what they share unsafely).
func TestDecisionCacheConcurrent(t *testing.T) {
	pool := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs}
	reqs := []*fnv1.RunFunctionRequest{settled(t, pool, nil), pool.request(t), benchRequest(t, 10, 10, false)}
	want := make([]*fnv1.RunFunctionResponse, len(reqs))
	for i, req := range reqs {
		rsp, err := (&Function{now: func() time.Time { return now }, size: fakeSize}).RunFunction(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = rsp
	}
	f := &Function{now: func() time.Time { return now }, size: fakeSize, cache: &renderCache{}, decisions: newDecisionCache(16, 64<<20)}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 12 {
				k := (g + i) % len(reqs)
				rsp, err := f.RunFunction(t.Context(), proto.Clone(reqs[k]).(*fnv1.RunFunctionRequest))
				if err != nil {
					errs <- err.Error()
					return
				}
				if !proto.Equal(want[k], rsp) {
					errs <- fmt.Sprintf("request %d: the response differs from the one decided alone", k)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if f.decisions.hits.Load() == 0 {
		t.Error("no call was answered from the decision cache")
	}
}

// TestDecisionCacheMetrics: the cache counts how it answered each call,
// and its size, in the metrics the function serves.
func TestDecisionCacheMetrics(t *testing.T) {
	pool := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs}
	settledReq, fresh := settled(t, pool, nil), pool.request(t)
	f := &Function{now: func() time.Time { return now }, size: fakeSize, decisions: newDecisionCache(16, 64<<20)}
	for _, req := range []*fnv1.RunFunctionRequest{settledReq, settledReq, settledReq, fresh} {
		if _, err := f.RunFunction(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP burstpool_function_decision_cache_entries Responses the decision cache keeps.
# TYPE burstpool_function_decision_cache_entries gauge
burstpool_function_decision_cache_entries 1
# HELP burstpool_function_decisions_total RunFunction calls by how they were answered: hit (a response kept for the same request), miss (decided and kept), uncacheable (decided, not kept: the decision depends on the clock's reading).
# TYPE burstpool_function_decisions_total counter
burstpool_function_decisions_total{result="hit"} 2
burstpool_function_decisions_total{result="miss"} 1
burstpool_function_decisions_total{result="uncacheable"} 1
`
	if err := testutil.CollectAndCompare(f.decisions, strings.NewReader(want), "burstpool_function_decisions_total", "burstpool_function_decision_cache_entries"); err != nil {
		t.Error(err)
	}
	if _, bytes := f.decisions.size(); bytes <= 0 {
		t.Error("the cache counts no bytes for the response it keeps")
	}
}
