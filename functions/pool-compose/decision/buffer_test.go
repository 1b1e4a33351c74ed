package decision

import (
	"testing"
	"time"

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
)

// TestDecideWarmMethod: what holds the warm slots. The signal that an
// autoscaler acts on a CapacityBuffer is its ReadyForProvisioning
// condition True at the buffer's generation: Karpenter v1.14.1's buffer
// controller sets it (pkg/controllers/capacitybuffer/controller.go,
// resolveAndUpdateStatus, with ObservedGeneration from SetCondition in
// pkg/apis/autoscaling/v1beta1/capacitybuffer.go) and only runs with its
// CapacityBuffer feature gate on (pkg/controllers/controllers.go), which
// is off by default (pkg/operator/options/options.go).
// now is the clock of these tests.
var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

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
			want: want{Method: warmBuffer, ComposeBuffer: true, Status: metav1.ConditionTrue, Reason: ReasonBufferProcessed},
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
			want: want{Method: warmPlaceholders, ComposeBuffer: true, Status: metav1.ConditionFalse, Reason: ReasonBufferIgnored, AwaitingSince: earlier(3 * minute)},
		},
		"GateTurnedOff": {
			reason: "The buffer held the slots, then its new spec went unprocessed past the bound: placeholders take the slots back.",
			in: base(func(in *WarmMethodInput) {
				in.Observed = stale
				in.Previous = &poolv1alpha1.WarmCapacityStatus{Method: warmBuffer, AwaitingSince: earlier(2 * minute)}
			}),
			want: want{Method: warmPlaceholders, ComposeBuffer: true, Status: metav1.ConditionFalse, Reason: ReasonBufferIgnored, AwaitingSince: earlier(2 * minute)},
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
			Pool: "burst", Namespace: "pools", WarmLevel: 4, Occupied: 1, PerNode: 2, Slot: slot, SlotOK: true, PriorityClassObserved: true,
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
			reason: "A processed buffer holds minExecutors less the running executors, which the capacity provider sets: the composition asks for 0; no placeholder Deployment.",
			in:     base(nil),
			want:   want{Placeholders: -1, Buffer: 0, Template: true, Status: poolv1alpha1.WarmCapacityStatus{Method: warmBuffer, Slots: 3, CapacityBuffer: "burst-warm-slots"}},
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
