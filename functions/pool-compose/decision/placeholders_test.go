package decision

import (
	"testing"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
)

// TestDecidePlaceholders: the placeholders hold minExecutors slots less
// the executors running, none while suspended, at the pool's own priority
// class unless the input names one.
func TestDecidePlaceholders(t *testing.T) {
	slot := sizing.Resources{CPU: k8sresource.MustParse("2"), Memory: k8sresource.MustParse("8Gi")}
	base := func(mod func(*PlaceholderInput)) PlaceholderInput {
		p := PlaceholderInput{
			Pool: "burst", Namespace: "pools", WarmLevel: 4, PerNode: 2, Slot: slot, SlotOK: true,
			Config:     v1beta1.Placeholder{Priority: ptr.To[int32](-10), Image: "pause:3.10"},
			Scheduling: objects.Scheduling{NodeSelector: map[string]string{qsv1alpha1.LabelPool: "burst"}},
		}
		if mod != nil {
			mod(&p)
		}
		return p
	}
	type want struct {
		// Replicas and Class are the Deployment's; -1 and "" without one.
		Replicas      int64
		Class         string
		PriorityClass bool
		AntiAffinity  bool
		Waiting       []string
		Preserve      []resource.Name
		Events        []string
	}
	cases := map[string]struct {
		reason string
		in     PlaceholderInput
		want   want
	}{
		"MinExecutors": {
			reason: "Nothing runs: four placeholders, at the pool's own PriorityClass, which the pool waits for until it exists.",
			in:     base(nil),
			want:   want{Replicas: 4, Class: "burst-placeholder", PriorityClass: true, Waiting: []string{"PriorityClass burst-placeholder"}},
		},
		"LessTheRunning": {
			reason: "Three executors run and hold slots themselves: one placeholder is left.",
			in:     base(func(p *PlaceholderInput) { p.Occupied = 3; p.PriorityClassObserved = true }),
			want:   want{Replicas: 1, Class: "burst-placeholder", PriorityClass: true},
		},
		"MoreRunningThanMin": {
			reason: "More executors run than minExecutors: no placeholder.",
			in:     base(func(p *PlaceholderInput) { p.Occupied = 9; p.PriorityClassObserved = true }),
			want:   want{Replicas: 0, Class: "burst-placeholder", PriorityClass: true},
		},
		"Suspended": {
			reason: "A suspended pool holds no warm slots.",
			in:     base(func(p *PlaceholderInput) { p.Suspend = true; p.PriorityClassObserved = true }),
			want:   want{Replicas: 0, Class: "burst-placeholder", PriorityClass: true},
		},
		"ExistingClass": {
			reason: "The input names an existing PriorityClass: the pool composes none and its placeholders use that one.",
			in:     base(func(p *PlaceholderInput) { p.Config.PriorityClassName = "batch-low" }),
			want:   want{Replicas: 4, Class: "batch-low"},
		},
		"OnePerNode": {
			reason: "One executor a node: placeholders spread one a node, so each warm slot is a warm node.",
			in:     base(func(p *PlaceholderInput) { p.PerNode = 1; p.PriorityClassObserved = true }),
			want:   want{Replicas: 4, Class: "burst-placeholder", PriorityClass: true, AntiAffinity: true},
		},
		"NoSlotSize": {
			reason: "No executor size is known: the placeholders are kept as they are, a warning says what to do, and the PriorityClass (no capacity) is composed so that attaching the first QueryService does not make the pool wait for it.",
			in:     base(func(p *PlaceholderInput) { p.SlotOK = false }),
			want:   want{Replicas: -1, PriorityClass: true, Waiting: []string{"PriorityClass burst-placeholder"}, Preserve: []resource.Name{objects.ComposedPlaceholder}, Events: []string{"NoWarmSlotSize"}},
		},
		"NoSlotSizeNoneWanted": {
			reason: "No executor size is known and no warm slot is asked for: nothing to warn about.",
			in:     base(func(p *PlaceholderInput) { p.SlotOK = false; p.WarmLevel = 0; p.PriorityClassObserved = true }),
			want:   want{Replicas: -1, PriorityClass: true, Preserve: []resource.Name{objects.ComposedPlaceholder}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, o := decidePlaceholders(tc.in)
			got := want{Replicas: -1, Waiting: o.Waiting, Preserve: o.Preserve}
			if l, ok := o.Lazy[objects.ComposedPlaceholder]; ok {
				d := l.Build()
				got.Replicas, _, _ = unstructured.NestedInt64(d.Object, "spec", "replicas")
				got.Class, _, _ = unstructured.NestedString(d.Object, "spec", "template", "spec", "priorityClassName")
				_, got.AntiAffinity, _ = unstructured.NestedMap(d.Object, "spec", "template", "spec", "affinity", "podAntiAffinity")
			}
			_, got.PriorityClass = o.Lazy[objects.ComposedPlaceholderPriorityClass]
			for _, r := range o.Results {
				got.Events = append(got.Events, r.Reason)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\ndecidePlaceholders (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestSlot: a warm slot is the largest request of the compatible attached
// executors, else an equal share of a node.
func TestSlot(t *testing.T) {
	exec := func(name, cpu, mem string) Attachment {
		q := &QueryService{Name: name, Namespace: "team-a"}
		q.Spec.Executor.Resources.CPU = ptr.To(k8sresource.MustParse(cpu))
		q.Spec.Executor.Resources.Memory = ptr.To(k8sresource.MustParse(mem))
		return Attachment{QS: q, Name: name, Namespace: "team-a", Attached: true}
	}
	sized := &sizing.Result{
		InstanceType:  "r7gd.2xlarge",
		Allocatable:   sizing.Resources{CPU: k8sresource.MustParse("7910m"), Memory: k8sresource.MustParse("30Gi")},
		Compatibility: []sizing.Compatibility{{QueryService: "team-a/small", Compatible: true}, {QueryService: "team-a/huge", Compatible: false}},
	}
	type want struct {
		CPU, Memory string
		OK          bool
	}
	cases := map[string]struct {
		reason   string
		attached []Attachment
		size     *sizing.Result
		explicit string
		want     want
	}{
		"LargestBeforeSizing": {
			reason:   "Before sizing every attached executor counts: the largest CPU and the largest memory.",
			attached: []Attachment{exec("small", "2", "16Gi"), exec("wide", "4", "8Gi")},
			want:     want{CPU: "4", Memory: "16Gi", OK: true},
		},
		"IncompatibleLeftOut": {
			reason:   "An executor that fits no node of the pool's type does not size its slots.",
			attached: []Attachment{exec("small", "2", "8Gi"), exec("huge", "64", "512Gi")},
			size:     sized,
			want:     want{CPU: "2", Memory: "8Gi", OK: true},
		},
		"ShareOfNode": {
			reason:   "No compatible executor and an explicit instance type: a quarter of the node at 4 a node, memory rounded down to a MiB.",
			size:     sized,
			explicit: "r7gd.2xlarge",
			want:     want{CPU: "1977m", Memory: "7680Mi", OK: true},
		},
		"GuessedTypeNoShare": {
			reason: "No compatible executor and a type the pool guessed (reference 4.5: a family, no QueryService yet): no slot, so no node is launched for warm capacity no executor may use.",
			size:   sized,
			want:   want{CPU: "0", Memory: "0"},
		},
		"OtherTypeNoShare": {
			reason:   "The sized type is not the explicit one (an upgrade in progress): no share of a node whose type nobody asked for.",
			size:     sized,
			explicit: "r7gd.4xlarge",
			want:     want{CPU: "0", Memory: "0"},
		},
		"Unknown": {
			reason: "Neither an executor nor a size: no slot.",
			want:   want{CPU: "0", Memory: "0"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, ok := slot(tc.attached, tc.size, 4, tc.explicit)
			got := want{CPU: r.CPU.String(), Memory: r.Memory.String(), OK: ok}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nslot (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
