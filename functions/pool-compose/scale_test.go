package main

import (
	"fmt"
	"testing"

	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestTenOfTenThousand composes a pool with 10 attached QueryServices in a
// cluster of 10,000 realistic ones (about 8 KB each, 80 MB in all), with the
// request Crossplane builds from the function's requirements: it carries the
// pool's QueryServices (and those labelled for it), not the cluster's, and
// fits gRPC's default 4 MiB many times over.
func TestTenOfTenThousand(t *testing.T) {
	cluster := make([]*structpb.Struct, 0, 10000)
	for i := range 10000 {
		ns := fmt.Sprintf("workspace-%03d", i%200)
		name, pool, labels := fmt.Sprintf("qs-%05d", i), fmt.Sprintf("pool-%d", i%40), map[string]string{"e6data.io/burst": "enabled"}
		switch {
		case i < 5:
			// Allowed by name.
			pool = "burst"
		case i < 10:
			// Selected by label.
			pool, labels = "burst", map[string]string{"tier": "burst-gold"}
		case i < 12:
			// Point here without being allowed, labelled as users do.
			pool, labels = "burst", map[string]string{labelPoolName: "burst"}
		}
		o, err := structpb.NewStruct(realisticObject(i, name, ns, pool, "pools", "ghcr.io/e6data/executor:3."+fmt.Sprint(i%7), "4", "30Gi", labels))
		if err != nil {
			t.Fatal(err)
		}
		cluster = append(cluster, o)
	}
	spec := "  minExecutors: 2\n  maxExecutors: 40\n  queryServiceSelector: {matchLabels: {tier: burst-gold}}\n  allowedQueryServices:\n"
	for i := range 5 {
		spec += fmt.Sprintf("  - {name: qs-%05d, namespace: workspace-%03d}\n", i, i%200)
	}
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
