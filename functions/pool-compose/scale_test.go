package main

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// crowdNamespaces is how many namespaces the crowd's QueryServices spread
// over.
const crowdNamespaces = 200

// crowdMember is the i-th QueryService of a large cluster, realistic in
// size: the first 5 are allowed by name by crowdPool, the next 5 selected by
// its label selector, the next 2 point at it labelled but not allowed; the
// rest point at 40 other pools.
func crowdMember(i int) map[string]any {
	ns := fmt.Sprintf("workspace-%03d", i%crowdNamespaces)
	name, pool, labels := fmt.Sprintf("qs-%05d", i), fmt.Sprintf("pool-%d", i%40), map[string]string{"e6data.io/burst": "enabled"}
	switch {
	case i < 5:
		pool = "burst"
	case i < 10:
		pool, labels = "burst", map[string]string{"tier": "burst-gold"}
	case i < 12:
		pool, labels = "burst", map[string]string{qsv1alpha1.LabelPool: "burst"}
	}
	return realisticObject(i, name, ns, pool, "pools", "ghcr.io/e6data/executor:3."+fmt.Sprint(i%7), "4", "30Gi", labels)
}

// crowdPool is the spec of pool burst in namespace pools that attaches 10
// of the crowd.
func crowdPool() string {
	spec := "  minExecutors: 2\n  maxExecutors: 40\n  queryServiceSelector: {matchLabels: {tier: burst-gold}}\n  allowedQueryServices:\n"
	for i := range 5 {
		spec += fmt.Sprintf("  - {name: qs-%05d, namespace: workspace-%03d}\n", i, i%crowdNamespaces)
	}
	return spec
}

// TestTenOfTenThousand composes a pool with 10 attached QueryServices in a
// cluster of 10,000 realistic ones (about 8 KB each, 80 MB in all), with the
// request Crossplane builds from the function's requirements: it carries the
// pool's QueryServices (and those labelled for it), not the cluster's, and
// fits gRPC's default 4 MiB many times over.
func TestTenOfTenThousand(t *testing.T) {
	cluster := make([]*structpb.Struct, 0, 10000)
	for i := range 10000 {
		o, err := structpb.NewStruct(crowdMember(i))
		if err != nil {
			t.Fatal(err)
		}
		cluster = append(cluster, o)
	}
	spec := crowdPool()
	s := scenario{XR: xpool("burst", "pools", spec), Cluster: cluster, CRDs: kwokCRDs}
	req := s.request(t)

	var items int
	for n, r := range req.GetRequiredResources() {
		if n[:len(reqCRDPrefix)] != reqCRDPrefix {
			items += len(r.GetItems())
		}
	}
	if items != 12 {
		t.Errorf("the request carries %d QueryServices, want the 10 attached and the 2 labelled for the pool", items)
	}
	size := proto.Size(req)
	if size > 4<<20 {
		t.Errorf("the request is %d bytes, more than gRPC's default 4 MiB", size)
	}
	whole := 0
	for _, q := range cluster {
		whole += proto.Size(q)
	}
	t.Logf("request: %d bytes (%d QueryServices); the cluster's QueryServices: %d bytes", size, items, whole)

	rsp, err := (&Function{now: func() time.Time { return now }, size: fakeSize}).RunFunction(t.Context(), req)
	if err != nil {
		t.Fatalf("RunFunction: %v", err)
	}
	if f := fatal(rsp); f != "" {
		t.Fatalf("RunFunction: Fatal %s", f)
	}
	attached, reported := 0, 0
	for _, q := range status(rsp)["attachedQueryServices"].([]any) {
		reported++
		if q.(map[string]any)["attached"] == true {
			attached++
		}
	}
	if attached != 10 || reported != 12 {
		t.Errorf("%d attached and %d reported, want 10 and 12: %v", attached, reported, results(rsp))
	}
	if got := len(rsp.GetDesired().GetResources()); got == 0 {
		t.Errorf("no desired objects")
	}
}
