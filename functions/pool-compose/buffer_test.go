package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/test/harness/golden"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// TestCapacityBufferComposed follows a kwok pool on a cluster that serves
// CapacityBuffer: the first call composes an empty buffer beside the
// placeholders; once Karpenter's buffer controller has marked it
// ReadyForProvisioning at its generation, the buffer holds the warm slots
// and the placeholder Deployment goes. The second response is a golden
// file, and the buffer is valid against Karpenter v1.14.1's CRD
// (test/crds/upstream/autoscaling.x-k8s.io_capacitybuffers.yaml).
func TestCapacityBufferComposed(t *testing.T) {
	crds := append(slices.Clone(kwokCRDs), decision.CRDCapacityBuffer)
	first := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: crds}.run(t)
	if got, want := desiredNames(first), []string{"capacity", "capacity-buffer", "capacity-buffer-podtemplate", "placeholder"}; !containsAll(got, want) {
		t.Fatalf("first call composes %v, want at least %v", got, want)
	}
	if got := nestedNumber(desired(first, "capacity-buffer").Object, "spec", "replicas"); got != 0 {
		t.Errorf("first call: buffer replicas %d, want 0 while placeholders hold the slots", got)
	}
	observed := observe(t, first, func(n string, u *unstructured.Unstructured) map[string]any {
		if n != string(objects.ComposedBuffer) {
			return healthy(0, 1)(n, u)
		}
		u.SetGeneration(1)
		return map[string]any{"conditions": []any{map[string]any{
			"type": decision.CondReadyForProvisioning, "status": "True", "reason": "Resolved", "observedGeneration": int64(1),
			"message": "Pod template resolved successfully", "lastTransitionTime": "2026-11-22T11:59:00Z",
		}}}
	})
	st := "  warmCapacity:\n    method: Placeholders\n    slots: 2\n    capacityBuffer: burst-warm-slots\n    awaitingSince: \"2026-11-22T11:59:00Z\"\n"
	second := scenario{XR: withStatus(xpool("burst", "pools", basicSpec), st), QueryServices: allQS, CRDs: crds, Observed: observed}.run(t)
	if d := desired(second, "placeholder"); d != nil {
		t.Errorf("processed buffer: the placeholder Deployment is still composed")
	}
	if got := nestedNumber(desired(second, "capacity-buffer").Object, "spec", "replicas"); got != 0 {
		t.Errorf("processed buffer: replicas %d, want 0 until the capacity provider sets them (it sees the placeholders still holding slots)", got)
	}
	if got := conditions(second)[decision.CondWarmCapacity]; got != "TRUE/"+decision.ReasonBufferProcessed {
		t.Errorf("WarmCapacity condition %q, want TRUE/%s", got, decision.ReasonBufferProcessed)
	}
	golden.File(t, filepath.Join("testdata", "capacity-buffer", "kwok.yaml"), toYAML(t, second))
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatalf("cannot load the upstream schemas: %v", err)
	}
	if err := reg.Validate(desired(second, "capacity-buffer")); err != nil {
		t.Errorf("the composed CapacityBuffer is invalid against the upstream CRD: %v", err)
	}
	holds := func(rsp *fnv1.RunFunctionResponse) string {
		b, _, _ := unstructured.NestedMap(desired(rsp, "capacity").Object, "spec", "forProvider", "warmSlots", "capacityBuffer")
		return fmt.Sprint(b)
	}
	if got, want := holds(first), "map[holds:false name:burst-warm-slots]"; got != want {
		t.Errorf("first call: the PoolCapacity's warmSlots.capacityBuffer is %s, want %s (a probe the provider keeps at 0)", got, want)
	}
	if got, want := holds(second), "map[holds:true name:burst-warm-slots]"; got != want {
		t.Errorf("processed buffer: the PoolCapacity's warmSlots.capacityBuffer is %s, want %s", got, want)
	}
	// A buffer that holds the slots has new executors admitted gated
	// until its autoscaler has seen them (the provider writes the gate's
	// parameters);
	// the probe does not.
	gate := func(rsp *fnv1.RunFunctionResponse) string {
		g, _, _ := unstructured.NestedString(desired(rsp, "capacity").Object, "spec", "forProvider", "executorGate")
		return g
	}
	if got, want := gate(first), ""; got != want {
		t.Errorf("first call: the PoolCapacity's executorGate is %q, want none while placeholders hold the slots", got)
	}
	if got, want := gate(second), qsv1alpha1.GateExecutor; got != want {
		t.Errorf("processed buffer: the PoolCapacity's executorGate is %q, want %q", got, want)
	}

	// The capacity provider took the replicas over (its annotation): the
	// composition leaves them out, so that Crossplane's server-side apply
	// gives up its claim and never resets the provider's value; the
	// server keeps the provider's replicas, so the object stays valid
	// (the CRD's rule that podTemplateRef needs replicas or limits is
	// checked against a real API server in internal/controller/
	// poolcapacity TestBufferScale).
	owned := observe(t, second, func(n string, u *unstructured.Unstructured) map[string]any {
		if n != string(objects.ComposedBuffer) {
			return healthy(0, 1)(n, u)
		}
		u.SetGeneration(2)
		u.SetAnnotations(map[string]string{qsv1alpha1.AnnotationReplicasOwner: "burstpool-capacity"})
		_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "replicas")
		return map[string]any{"conditions": []any{map[string]any{
			"type": decision.CondReadyForProvisioning, "status": "True", "reason": "Resolved", "observedGeneration": int64(2),
			"message": "Pod template resolved successfully", "lastTransitionTime": "2026-11-22T11:59:00Z",
		}}}
	})
	st = "  warmCapacity:\n    method: CapacityBuffer\n    slots: 2\n    capacityBuffer: burst-warm-slots\n"
	third := scenario{XR: withStatus(xpool("burst", "pools", basicSpec), st), QueryServices: allQS, CRDs: crds, Observed: owned}.run(t)
	if _, set, _ := unstructured.NestedFieldNoCopy(desired(third, "capacity-buffer").Object, "spec", "replicas"); set {
		t.Errorf("owned buffer: the composition still sets spec.replicas, which Crossplane's apply would take back from the capacity provider")
	}
	if got, want := holds(third), "map[holds:true name:burst-warm-slots]"; got != want {
		t.Errorf("owned buffer: the PoolCapacity's warmSlots.capacityBuffer is %s, want %s", got, want)
	}
}

// TestCapacityBufferVersion: a CapacityBuffer CRD that does not serve
// v1beta1 (the version composed) counts as not served.
func TestCapacityBufferVersion(t *testing.T) {
	cases := map[string]struct {
		reason string
		crd    string
		want   bool
	}{
		"ServesV1beta1": {reason: "Karpenter v1.14.1's CRD serves v1beta1.", crd: "spec:\n  versions:\n  - {name: v1beta1, served: true}\n", want: true},
		"OnlyV1alpha1":  {reason: "A CRD that serves only v1alpha1 cannot take the v1beta1 object.", crd: "spec:\n  versions:\n  - {name: v1alpha1, served: true}\n"},
		"NotServed":     {reason: "A version listed but not served is not served.", crd: "spec:\n  versions:\n  - {name: v1beta1, served: false}\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := decision.ServesVersion(mustStruct(t, tc.crd), objects.BufferVersion); got != tc.want {
				t.Errorf("%s\nservesVersion = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

// containsAll tells whether every one of want is in got.
func containsAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// TestUnprocessedBufferKeepsThePoolReady: where the CRD is served but no
// autoscaler acts on buffers (Karpenter's gate off), the empty probe buffer
// exists and is never processed. It must count as ready once it exists, as
// the placeholder Deployment does, or Crossplane never marks the composite
// Ready ("Unready resources: capacity-buffer") although placeholders hold
// the warm slots.
func TestUnprocessedBufferKeepsThePoolReady(t *testing.T) {
	crds := append(slices.Clone(kwokCRDs), decision.CRDCapacityBuffer)
	first := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: crds}.run(t)
	observed := observe(t, first, func(n string, u *unstructured.Unstructured) map[string]any {
		if n == string(objects.ComposedBuffer) {
			u.SetGeneration(1)
			return map[string]any{} // no condition: nothing processed it
		}
		return healthy(0, 1)(n, u)
	})
	st := "  warmCapacity:\n    method: Placeholders\n    slots: 2\n    capacityBuffer: burst-warm-slots\n    awaitingSince: \"2026-11-22T11:00:00Z\"\n"
	rsp := scenario{XR: withStatus(xpool("burst", "pools", basicSpec), st), QueryServices: allQS, CRDs: crds, Observed: observed}.run(t)
	if got := conditions(rsp)[decision.CondWarmCapacity]; got != "FALSE/"+decision.ReasonBufferIgnored {
		t.Fatalf("WarmCapacity condition %q, want FALSE/%s (the bound passed)", got, decision.ReasonBufferIgnored)
	}
	for _, n := range []string{"capacity-buffer", "capacity-buffer-podtemplate", "placeholder"} {
		if got := rsp.GetDesired().GetResources()[n].GetReady().String(); got != "READY_TRUE" {
			t.Errorf("%s: %s, want READY_TRUE once it exists", n, got)
		}
	}
}
