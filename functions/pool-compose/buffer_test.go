package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/test/harness/golden"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// TestDecideWarmMethod: what holds the warm slots. The signal that an
// autoscaler acts on a CapacityBuffer is its ReadyForProvisioning
// condition True at the buffer's generation: Karpenter v1.14.1's buffer
// controller sets it (pkg/controllers/capacitybuffer/controller.go,
// resolveAndUpdateStatus, with ObservedGeneration from SetCondition in
// pkg/apis/autoscaling/v1beta1/capacitybuffer.go) and only runs with its
// CapacityBuffer feature gate on (pkg/controllers/controllers.go), which
// is off by default (pkg/operator/options/options.go).
func TestDecideWarmMethod(t *testing.T) {
	minute := time.Minute
	earlier := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-d)} }
	processed := BufferObservation{Observed: true, Generation: 3, ProcessedGeneration: 3}
	stale := BufferObservation{Observed: true, Generation: 4, ProcessedGeneration: 3}
	base := func(mod func(*WarmMethodInput)) WarmMethodInput {
		in := WarmMethodInput{Now: now, Setting: warmAuto, Where: "warmCapacity.method", Timeout: 2 * minute, Served: true, Buffer: "pools/burst-warm-slots"}
		if mod != nil {
			mod(&in)
		}
		return in
	}
	type want struct {
		Method        string
		ComposeBuffer bool
		Status        metav1.ConditionStatus
		Reason        string
		AwaitingSince *metav1.Time
		RequeueAfter  time.Duration
	}
	cases := map[string]struct {
		reason string
		in     WarmMethodInput
		want   want
	}{
		"NotServed": {
			reason: "The cluster does not serve CapacityBuffer: placeholders, no buffer.",
			in:     base(func(in *WarmMethodInput) { in.Served = false }),
			want:   want{Method: warmPlaceholders, Status: metav1.ConditionFalse, Reason: reasonBufferNotServed},
		},
		"ForcedButNotServed": {
			reason: "The settings ask for buffers where none is served: placeholders, and the condition says so.",
			in:     base(func(in *WarmMethodInput) { in.Served = false; in.Setting = warmBuffer }),
			want:   want{Method: warmPlaceholders, Status: metav1.ConditionFalse, Reason: reasonBufferNotServed},
		},
		"PlaceholdersConfigured": {
			reason: "The settings force placeholders: no buffer even where one is served and processed.",
			in:     base(func(in *WarmMethodInput) { in.Setting = warmPlaceholders; in.Observed = processed }),
			want:   want{Method: warmPlaceholders, Status: metav1.ConditionFalse, Reason: reasonPlaceholdersSet},
		},
		"ForcedUnprocessed": {
			reason: "The settings force buffers: the buffer holds the slots though nothing processed it.",
			in:     base(func(in *WarmMethodInput) { in.Setting = warmBuffer }),
			want:   want{Method: warmBuffer, ComposeBuffer: true, Status: metav1.ConditionTrue, Reason: reasonBufferForced},
		},
		"FirstSeen": {
			reason: "Served, not composed yet: a probe buffer, placeholders meanwhile, and the wait starts now.",
			in:     base(nil),
			want:   want{Method: warmPlaceholders, ComposeBuffer: true, Status: metav1.ConditionFalse, Reason: reasonAwaitingAutoscale, AwaitingSince: earlier(0), RequeueAfter: 2 * minute},
		},
		"Processed": {
			reason: "An autoscaler resolved the buffer's current generation: the buffer holds the slots and the wait ends.",
			in: base(func(in *WarmMethodInput) {
				in.Observed = processed
				in.Previous = &poolv1alpha1.WarmCapacityStatus{Method: warmPlaceholders, AwaitingSince: earlier(minute)}
			}),
			want: want{Method: warmBuffer, ComposeBuffer: true, Status: metav1.ConditionTrue, Reason: reasonBufferProcessed},
		},
		"NewGenerationWithinBound": {
			reason: "The buffer held the slots and its new spec is not processed yet: it keeps them while the wait is within the bound.",
			in: base(func(in *WarmMethodInput) {
				in.Observed = stale
				in.Previous = &poolv1alpha1.WarmCapacityStatus{Method: warmBuffer, AwaitingSince: earlier(30 * time.Second)}
			}),
			want: want{Method: warmBuffer, ComposeBuffer: true, Status: metav1.ConditionTrue, Reason: reasonAwaitingAutoscale, AwaitingSince: earlier(30 * time.Second), RequeueAfter: 90 * time.Second},
		},
		"NotProcessedInTime": {
			reason: "Nothing processed the buffer within the bound (Karpenter's gate off): placeholders hold the slots, the empty buffer stays as a probe.",
			in: base(func(in *WarmMethodInput) {
				in.Observed = BufferObservation{Observed: true, Generation: 1}
				in.Previous = &poolv1alpha1.WarmCapacityStatus{Method: warmPlaceholders, AwaitingSince: earlier(3 * minute)}
			}),
			want: want{Method: warmPlaceholders, ComposeBuffer: true, Status: metav1.ConditionFalse, Reason: reasonBufferIgnored, AwaitingSince: earlier(3 * minute)},
		},
		"GateTurnedOff": {
			reason: "The buffer held the slots, then its new spec went unprocessed past the bound: placeholders take the slots back.",
			in: base(func(in *WarmMethodInput) {
				in.Observed = stale
				in.Previous = &poolv1alpha1.WarmCapacityStatus{Method: warmBuffer, AwaitingSince: earlier(2 * minute)}
			}),
			want: want{Method: warmPlaceholders, ComposeBuffer: true, Status: metav1.ConditionFalse, Reason: reasonBufferIgnored, AwaitingSince: earlier(2 * minute)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := decideWarmMethod(tc.in)
			got := want{Method: m.Method, ComposeBuffer: m.ComposeBuffer, Status: m.Condition.Status, Reason: m.Condition.Reason, AwaitingSince: m.AwaitingSince, RequeueAfter: m.RequeueAfter}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ndecideWarmMethod (-want +got):\n%s", tc.reason, diff)
			}
			if m.Condition.Type != CondWarmCapacity || m.Condition.Message == "" {
				t.Errorf("%s\ncondition %+v: want type %s with a message", tc.reason, m.Condition, CondWarmCapacity)
			}
		})
	}
}

// TestDecideWarmSlots: which objects hold the warm slots, and how many.
func TestDecideWarmSlots(t *testing.T) {
	slot := sizing.Resources{CPU: k8sresource.MustParse("2"), Memory: k8sresource.MustParse("8Gi")}
	processed := BufferObservation{Observed: true, Generation: 2, ProcessedGeneration: 2}
	base := func(mod func(*PlaceholderInput)) PlaceholderInput {
		p := PlaceholderInput{
			Pool: "burst", Namespace: "pools", MinExecutors: 4, Occupied: 1, PerNode: 2, Slot: slot, SlotOK: true, PriorityClassObserved: true,
			Config:     v1beta1.Placeholder{Priority: ptr.To[int32](-10), Image: "pause:3.10"},
			Scheduling: objects.Scheduling{NodeSelector: map[string]string{qsv1alpha1.LabelPool: "burst"}},
			Warm:       WarmMethodInput{Now: now, Setting: warmAuto, Timeout: time.Minute, Served: true, Observed: processed},
		}
		if mod != nil {
			mod(&p)
		}
		return p
	}
	type want struct {
		// Placeholders and Buffer are the replicas asked of each; -1
		// when the object is not composed.
		Placeholders, Buffer int64
		Template             bool
		Preserve             []resource.Name
		Status               poolv1alpha1.WarmCapacityStatus
	}
	cases := map[string]struct {
		reason string
		in     PlaceholderInput
		want   want
	}{
		"Buffer": {
			reason: "A processed buffer holds minExecutors less the running executors; no placeholder Deployment.",
			in:     base(nil),
			want:   want{Placeholders: -1, Buffer: 3, Template: true, Status: poolv1alpha1.WarmCapacityStatus{Method: warmBuffer, Slots: 3, CapacityBuffer: "burst-warm-slots"}},
		},
		"BufferSuspended": {
			reason: "A suspended pool's buffer asks for nothing.",
			in:     base(func(p *PlaceholderInput) { p.Suspend = true }),
			want:   want{Placeholders: -1, Buffer: 0, Template: true, Status: poolv1alpha1.WarmCapacityStatus{Method: warmBuffer, CapacityBuffer: "burst-warm-slots"}},
		},
		"Awaiting": {
			reason: "The buffer is not processed yet: placeholders hold the slots and the probe buffer asks for none.",
			in:     base(func(p *PlaceholderInput) { p.Warm.Observed = BufferObservation{} }),
			want: want{Placeholders: 3, Buffer: 0, Template: true, Status: poolv1alpha1.WarmCapacityStatus{
				Method: warmPlaceholders, Slots: 3, CapacityBuffer: "burst-warm-slots", AwaitingSince: &metav1.Time{Time: now},
			}},
		},
		"NotServed": {
			reason: "No CapacityBuffer served: placeholders as before, no buffer objects.",
			in:     base(func(p *PlaceholderInput) { p.Warm.Served = false }),
			want:   want{Placeholders: 3, Buffer: -1, Status: poolv1alpha1.WarmCapacityStatus{Method: warmPlaceholders, Slots: 3}},
		},
		"UnknownSize": {
			reason: "No executor size known: no warm slots; the buffer and its template are kept as observed, like the placeholders.",
			in:     base(func(p *PlaceholderInput) { p.SlotOK = false }),
			want: want{Placeholders: -1, Buffer: -1, Preserve: []resource.Name{objects.ComposedPlaceholder, objects.ComposedBuffer, objects.ComposedBufferTemplate},
				Status: poolv1alpha1.WarmCapacityStatus{Method: warmBuffer, CapacityBuffer: "burst-warm-slots"}},
		},
	}
	replicas := func(o Outcome, n resource.Name) int64 {
		l, ok := o.Lazy[n]
		if !ok {
			return -1
		}
		r, _, _ := unstructured.NestedInt64(l.Build().Object, "spec", "replicas")
		return r
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, o := decidePlaceholders(tc.in)
			_, tmpl := o.Lazy[objects.ComposedBufferTemplate]
			got := want{Placeholders: replicas(o, objects.ComposedPlaceholder), Buffer: replicas(o, objects.ComposedBuffer), Template: tmpl, Preserve: o.Preserve, Status: *st}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ndecidePlaceholders (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCapacityBufferComposed follows a kwok pool on a cluster that serves
// CapacityBuffer: the first call composes an empty buffer beside the
// placeholders; once Karpenter's buffer controller has marked it
// ReadyForProvisioning at its generation, the buffer holds the warm slots
// and the placeholder Deployment goes. The second response is a golden
// file, and the buffer is valid against Karpenter v1.14.1's CRD
// (test/crds/upstream/autoscaling.x-k8s.io_capacitybuffers.yaml).
func TestCapacityBufferComposed(t *testing.T) {
	crds := append(slices.Clone(kwokCRDs), crdCapacityBuffer)
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
			"type": condReadyForProvisioning, "status": "True", "reason": "Resolved", "observedGeneration": int64(1),
			"message": "Pod template resolved successfully", "lastTransitionTime": "2026-11-22T11:59:00Z",
		}}}
	})
	st := "  warmCapacity:\n    method: Placeholders\n    slots: 2\n    capacityBuffer: burst-warm-slots\n    awaitingSince: \"2026-11-22T11:59:00Z\"\n"
	second := scenario{XR: withStatus(xpool("burst", "pools", basicSpec), st), QueryServices: allQS, CRDs: crds, Observed: observed}.run(t)
	if d := desired(second, "placeholder"); d != nil {
		t.Errorf("processed buffer: the placeholder Deployment is still composed")
	}
	if got := nestedNumber(desired(second, "capacity-buffer").Object, "spec", "replicas"); got != 2 {
		t.Errorf("processed buffer: replicas %d, want minExecutors 2", got)
	}
	if got := conditions(second)[CondWarmCapacity]; got != "TRUE/"+reasonBufferProcessed {
		t.Errorf("WarmCapacity condition %q, want TRUE/%s", got, reasonBufferProcessed)
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

	// The capacity provider took the replicas over (its annotation): the
	// composition leaves them out, so that Crossplane's server-side apply
	// gives up its claim and never resets the provider's value; the
	// server keeps the provider's replicas, so the object stays valid.
	owned := observe(t, second, func(n string, u *unstructured.Unstructured) map[string]any {
		if n != string(objects.ComposedBuffer) {
			return healthy(0, 1)(n, u)
		}
		u.SetGeneration(2)
		u.SetAnnotations(map[string]string{qsv1alpha1.AnnotationReplicasOwner: "burstpool-capacity"})
		_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "replicas")
		return map[string]any{"conditions": []any{map[string]any{
			"type": condReadyForProvisioning, "status": "True", "reason": "Resolved", "observedGeneration": int64(2),
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
			if got := servesVersion(mustStruct(t, tc.crd), objects.BufferVersion); got != tc.want {
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
	crds := append(slices.Clone(kwokCRDs), crdCapacityBuffer)
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
	if got := conditions(rsp)[CondWarmCapacity]; got != "FALSE/"+reasonBufferIgnored {
		t.Fatalf("WarmCapacity condition %q, want FALSE/%s (the bound passed)", got, reasonBufferIgnored)
	}
	for _, n := range []string{"capacity-buffer", "capacity-buffer-podtemplate", "placeholder"} {
		if got := rsp.GetDesired().GetResources()[n].GetReady().String(); got != "READY_TRUE" {
			t.Errorf("%s: %s, want READY_TRUE once it exists", n, got)
		}
	}
}
