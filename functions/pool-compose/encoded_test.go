package main

import (
	"net"
	"sync"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// serveWire serves s over gRPC on a loopback port until t ends, and
// returns a client of it.
func serveWire(t *testing.T, s wireServer) fnv1.FunctionRunnerServiceClient {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	fnv1.RegisterFunctionRunnerServiceServer(srv, s)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return fnv1.NewFunctionRunnerServiceClient(conn)
}

// TestWireServer calls the function over gRPC as Crossplane does, each
// request twice, and checks that what Crossplane reads is the response an
// uncached function decides, whether the response was decided, sent as
// the encoding the decision cache keeps, or served with a shortened TTL,
// and that a hit sends the kept encoding.
func TestWireServer(t *testing.T) {
	pool := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs}
	settledReq := settled(t, pool, nil)

	cases := map[string]struct {
		reason string
		req    *fnv1.RunFunctionRequest
		// cache: the function keeps decisions; render: it keeps rendered
		// objects.
		cache, render bool
		// after is how long after the first call the second is made.
		after time.Duration
		// encoded: the second call is answered with the kept encoding.
		encoded bool
	}{
		"Hit": {
			reason:  "An unchanged request is answered with the encoding kept when it was decided.",
			req:     settledReq,
			cache:   true,
			encoded: true,
		},
		"HitRendered": {
			reason:  "The encoding kept is made from the response with its objects from the render cache as their encodings.",
			req:     settledReq,
			cache:   true,
			render:  true,
			encoded: true,
		},
		"ShortenedTTL": {
			reason: "A response that holds until an instant within its TTL (a warm window's lead) is served with the TTL shortened to it: a message, encoded by gRPC.",
			req:    settled(t, scenario{XR: xpool("burst", "pools", lunchSpec), QueryServices: allQS, CRDs: kwokCRDs}, nil),
			cache:  true,
			after:  57*time.Minute + 30*time.Second,
		},
		"Uncacheable": {
			reason: "A response that holds for the clock's reading only is decided on every call.",
			req:    pool.request(t),
			cache:  true,
		},
		"NoCache": {
			reason: "Without the decision cache every call is decided.",
			req:    settledReq,
		},
		"NoCacheRendered": {
			reason: "Without the decision cache every call is decided, and sent with its objects from the render cache as their encodings.",
			req:    settledReq,
			render: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &Function{size: fakeSize}
			if tc.cache {
				f.decisions = newDecisionCache(16, 64<<20)
			}
			if tc.render {
				f.cache = &renderCache{}
			}
			c := serveWire(t, wireServer{f: f})
			for i, at := range []time.Time{now, now.Add(tc.after)} {
				f.now = func() time.Time { return at }
				got, err := c.RunFunction(t.Context(), proto.Clone(tc.req).(*fnv1.RunFunctionRequest))
				if err != nil {
					t.Fatalf("%s\ncall %d: %v", tc.reason, i+1, err)
				}
				want, err := (&Function{now: func() time.Time { return at }, size: fakeSize}).RunFunction(t.Context(), proto.Clone(tc.req).(*fnv1.RunFunctionRequest))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
					t.Errorf("%s\ncall %d: the response differs from the one decided afresh (-fresh +got):\n%s", tc.reason, i+1, diff)
				}
			}
			// The same call in process: a kept encoding is a response of
			// unknown fields only.
			rsp, err := wireServer{f: f}.RunFunction(t.Context(), proto.Clone(tc.req).(*fnv1.RunFunctionRequest))
			if err != nil {
				t.Fatal(err)
			}
			encoded := rsp.GetMeta() == nil && len(rsp.ProtoReflect().GetUnknown()) > 0
			if encoded != tc.encoded {
				t.Errorf("%s\nanswered with a kept encoding: %t, want %t", tc.reason, encoded, tc.encoded)
			}
		})
	}
}

// TestWireServerConcurrent sends one kept encoding, and the encodings of
// one set of rendered objects, to many callers at once, as gRPC does when
// Crossplane polls with several workers (go test -race finds what they
// share unsafely).
func TestWireServerConcurrent(t *testing.T) {
	req := settled(t, scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs}, nil)
	want, err := (&Function{now: func() time.Time { return now }, size: fakeSize}).RunFunction(t.Context(), proto.Clone(req).(*fnv1.RunFunctionRequest))
	if err != nil {
		t.Fatal(err)
	}
	for _, decisions := range []*decisionCache{newDecisionCache(16, 64<<20), nil} {
		f := &Function{now: func() time.Time { return now }, size: fakeSize, cache: &renderCache{}, decisions: decisions}
		c := serveWire(t, wireServer{f: f})
		// Each caller's first wrong answer, if any.
		wrong := make([]string, 8)
		var wg sync.WaitGroup
		for g := range wrong {
			wg.Go(func() {
				for range 10 {
					rsp, err := c.RunFunction(t.Context(), req)
					switch {
					case err != nil:
						wrong[g] = err.Error()
					case !proto.Equal(want, rsp):
						wrong[g] = "the response differs from the one decided alone"
					default:
						continue
					}
					return
				}
			})
		}
		wg.Wait()
		for g, w := range wrong {
			if w != "" {
				t.Errorf("decision cache %t: caller %d: %s", decisions != nil, g, w)
			}
		}
		if decisions != nil && decisions.hits.Load() == 0 {
			t.Error("no call was answered from the decision cache")
		}
	}
}

// TestRenderCacheWire checks the message sent for a decided response: its
// objects from the render cache are their encodings, made once and sent
// again on later calls, it reads as the response, and the response
// itself is left as it was.
func TestRenderCacheWire(t *testing.T) {
	req := settled(t, scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs}, nil)
	f := &Function{now: func() time.Time { return now }, size: fakeSize, cache: &renderCache{}}
	var first *fnv1.RunFunctionResponse
	for i := range 2 {
		rsp, wire := f.answer(proto.Clone(req).(*fnv1.RunFunctionRequest), true)
		want, err := (&Function{now: func() time.Time { return now }, size: fakeSize}).RunFunction(t.Context(), proto.Clone(req).(*fnv1.RunFunctionRequest))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, rsp, protocmp.Transform()); diff != "" {
			t.Fatalf("call %d: the response differs from one decided without the render cache (-want +got):\n%s", i+1, diff)
		}
		b, err := proto.Marshal(wire)
		if err != nil {
			t.Fatal(err)
		}
		got := &fnv1.RunFunctionResponse{}
		if err := proto.Unmarshal(b, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Fatalf("call %d: the message sent reads other than the response (-want +got):\n%s", i+1, diff)
		}
		encoded := 0
		for n, r := range wire.GetDesired().GetResources() {
			if len(r.GetResource().GetFields()) > 0 {
				continue
			}
			encoded++
			if i == 1 && first.GetDesired().GetResources()[n].GetResource() != r.GetResource() {
				t.Errorf("call 2: %s was encoded again", n)
			}
		}
		if encoded == 0 {
			t.Errorf("call %d: no object was sent as its encoding", i+1)
		}
		first = wire
	}
}
