package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// FuzzRunFunction runs the function on random Pool specs, once built from
// typed fields and once from raw JSON: it must never panic or return a Go
// error, and a response is either Fatal or renders a status phase.
func FuzzRunFunction(f *testing.F) {
	f.Add(int32(0), int32(20), int32(1), false, "", "", "ghcr.io/a:1", "1h", "", "", "team-a", []byte(`{"maxExecutors":3,"allowedQueryServices":[{"name":"analytics","namespace":"team-a"}]}`))
	f.Add(int32(4), int32(24), int32(4), true, "m-16x-amd64-linux", "m", "", "2h", "karpenter", "kwok", "", []byte(`{"maxExecutors":-1}`))
	f.Add(int32(-3), int32(0), int32(-1), false, "no-such-type", "x", "::bad::", "soon", "lke", "aws", "*", []byte(`{"queryServiceSelector":{"matchExpressions":[{"key":"a","operator":"Bogus"}]},"maxExecutors":2}`))
	f.Add(int32(1), int32(1), int32(9), false, "", "", "", "", "static", "onprem", "x", []byte(`{"nodeSelector":{"a":"b"},"maxExecutors":1,"allowedQueryServices":[{"name":"x"}],"tolerations":[{"operator":"Exists"}]}`))

	f.Fuzz(func(t *testing.T, minE, maxE, epn int32, suspend bool, itype, family, image, retention, method, cloud, ns string, raw []byte) {
		spec := map[string]any{
			"minExecutors": minE, "maxExecutors": maxE, "executorsPerNode": epn, "suspend": suspend,
			"allowedQueryServices":  []any{map[string]any{"name": "analytics", "namespace": ns}},
			"queryServiceSelector":  map[string]any{"matchLabels": map[string]any{"e6data.io/burst": "enabled"}},
			"instanceConfig":        map[string]any{"instanceType": itype, "instanceFamily": family, "spotEnabled": suspend},
			"imageConfig":           map[string]any{"cachedImages": []any{image}, "unusedImageRetention": retention, "imagePullSecrets": []any{map[string]any{"name": "s", "namespace": ns}}},
			"provisioning":          map[string]any{"method": method, "cloud": cloud, "manageNodePool": suspend},
			"nodeSelector":          map[string]any{"pool": ns},
			"tolerations":           []any{map[string]any{"key": ns, "operator": "Exists"}},
			"storageAgent":          map[string]any{"enabled": suspend, "image": image},
			"inheritNodeConfigFrom": map[string]any{"name": "analytics", "namespace": ns},
		}
		specs := []any{spec}
		var rawSpec any
		if json.Unmarshal(raw, &rawSpec) == nil {
			specs = append(specs, rawSpec) // re-encoded: one value per key
		}
		for _, s := range specs {
			b, err := json.Marshal(map[string]any{
				"apiVersion": "e6data.io/v1alpha1", "kind": "XPool",
				"metadata": map[string]any{"name": "fuzz", "labels": map[string]any{labelClaimName: "fuzz", labelClaimNamespace: "pools"}},
				"spec":     s,
			})
			if err != nil {
				t.Fatal(err)
			}
			sc := scenario{XR: string(b), QueryServices: allQS, CRDs: kwokCRDs, Catalog: true,
				Observed: map[string]string{"capacity": "apiVersion: capacity.e6data.io/v1alpha1\nkind: PoolCapacity\nmetadata: {name: fuzz-capacity}\nstatus: {atProvider: {occupiedExecutors: 3, nodes: {ready: 1}}}\n"}}
			fn := &Function{now: func() time.Time { return now }}
			rsp, err := fn.RunFunction(t.Context(), sc.request(t))
			if err != nil {
				t.Fatalf("RunFunction returned a Go error: %v", err)
			}
			if fatal(rsp) == "" && status(rsp)["phase"] == nil {
				t.Fatalf("neither Fatal nor a phase: %s", fmt.Sprint(results(rsp)))
			}
		}
	})
}

// fatal returns rsp's Fatal message, or "".
func fatal(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}
