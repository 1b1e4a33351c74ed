package objects

import (
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// bareCapacity is the smallest PoolCapacity's arguments: pools/burst,
// one executor a node, at most four, reporting unauthorized executors.
func bareCapacity(f func(a *CapacityArgs)) CapacityArgs {
	var a CapacityArgs
	a.Pool, a.Namespace, a.ExecutorsPerNode, a.MaxExecutors = "burst", "pools", 1, 4
	a.Unauthorized, a.ProviderConfigName = string(capv1alpha1.UnauthorizedReport), "default"
	if f != nil {
		f(&a)
	}
	return a
}

// fullCapacity is a PoolCapacity's arguments with every field set.
func fullCapacity(a *CapacityArgs) {
	a.NodeSelector = map[string]string{"e6data.io/pool": "burst"}
	a.Tolerations = []corev1.Toleration{{Key: "e6data.io/pool", Operator: corev1.TolerationOpEqual, Value: "burst", Effect: corev1.TaintEffectNoSchedule}}
	a.QueryServices = []CapacityQueryService{{Name: "analytics", Namespace: "team-a", Replicas: ptr.To[int32](2), MaxPoolExecutors: 3}}
	a.Suspend, a.DeleteFailed, a.Unauthorized, a.EnforceShares = true, true, string(capv1alpha1.UnauthorizedEvict), true
	a.Pricing = &capv1alpha1.Pricing{Catalog: "aws"}
	a.Startup = &capv1alpha1.Startup{Taint: corev1.Taint{Key: "e6data.io/warming", Value: "burst", Effect: corev1.TaintEffectNoSchedule},
		Images: []string{"ghcr.io/e6data/executor:3.1"}, OpenAfter: metav1.Duration{Duration: 5 * time.Minute}}
	a.WarmSlots, a.WarmBuffer, a.ExecutorGate = 2, &capv1alpha1.WarmBuffer{Name: "burst-warm-slots", Holds: true}, "e6data.io/pool-slot"
}

// TestPoolCapacity: the PoolCapacity is the capacity API's, with the
// optional fields the composition has always written even when zero, and
// no other.
func TestPoolCapacity(t *testing.T) {
	identity := map[string]any{"e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools"}
	with := func(k, v string) map[string]any {
		return map[string]any{"e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools", k: v}
	}
	cases := map[string]struct {
		reason string
		args   CapacityArgs
		path   []string
		want   any
	}{
		"Bare": {
			reason: "Empty node selector, tolerations and QueryServices, suspend and every policy are written; executorGate, pricing, startup and capacityBuffer are left out.",
			args:   bareCapacity(nil),
			want: map[string]any{
				"apiVersion": "capacity.e6data.io/v1alpha1", "kind": "PoolCapacity",
				"metadata": map[string]any{"name": "burst-capacity", "labels": identity},
				"spec": map[string]any{
					"providerConfigRef": map[string]any{"name": "default"},
					"forProvider": map[string]any{
						"pool":             map[string]any{"name": "burst", "namespace": "pools"},
						"nodeSelector":     map[string]any{},
						"executorSelector": with("e6data.io/executor-type", "pool"),
						"warmupSelector":   with("e6data.io/component", "warmup"),
						"executorsPerNode": int64(1),
						"maxExecutors":     int64(4),
						"tolerations":      []any{},
						"queryServices":    []any{},
						"suspend":          false,
						"policies":         map[string]any{"deleteFailedExecutors": false, "unauthorizedExecutors": "Report", "enforceShares": false},
						"warmSlots":        map[string]any{"selector": with("e6data.io/component", "placeholder"), "gate": "e6data.io/warm-slot", "slots": int64(0)},
					},
				},
			},
		},
		"NoNamespace": {
			reason: "A pool without a namespace has an empty pool namespace, and no namespace label.",
			args:   bareCapacity(func(a *CapacityArgs) { a.Namespace = "" }),
			path:   []string{"spec", "forProvider", "pool"},
			want:   map[string]any{"name": "burst", "namespace": ""},
		},
		"QueryServices": {
			reason: "A QueryService's regularExecutors is written even when unknown (0); its maxPoolExecutors only when it has a share.",
			args: bareCapacity(func(a *CapacityArgs) {
				a.QueryServices = []CapacityQueryService{{Name: "analytics", Namespace: "team-a"}, {Name: "reporting", Namespace: "team-b", Replicas: ptr.To[int32](3), MaxPoolExecutors: 2}}
			}),
			path: []string{"spec", "forProvider", "queryServices"},
			want: []any{
				map[string]any{"name": "analytics", "namespace": "team-a", "regularExecutors": int64(0)},
				map[string]any{"name": "reporting", "namespace": "team-b", "regularExecutors": int64(3), "maxPoolExecutors": int64(2)},
			},
		},
		"StartupWithoutImages": {
			reason: "A startup without images or taint value writes both empty.",
			args: bareCapacity(func(a *CapacityArgs) {
				a.Startup = &capv1alpha1.Startup{Taint: corev1.Taint{Key: "e6data.io/warming", Effect: corev1.TaintEffectNoSchedule}, OpenAfter: metav1.Duration{Duration: 90 * time.Second}}
			}),
			path: []string{"spec", "forProvider", "startup"},
			want: map[string]any{"taint": map[string]any{"key": "e6data.io/warming", "value": "", "effect": "NoSchedule"}, "images": []any{}, "openAfter": "1m30s"},
		},
		"BufferThatDoesNotHold": {
			reason: "A CapacityBuffer that does not hold the warm slots says so.",
			args:   bareCapacity(func(a *CapacityArgs) { a.WarmBuffer = &capv1alpha1.WarmBuffer{Name: "burst-warm-slots"} }),
			path:   []string{"spec", "forProvider", "warmSlots", "capacityBuffer"},
			want:   map[string]any{"name": "burst-warm-slots", "holds": false},
		},
		"Full": {
			reason: "Every argument set is written.",
			args:   bareCapacity(fullCapacity),
			path:   []string{"spec", "forProvider"},
			want: map[string]any{
				"pool":             map[string]any{"name": "burst", "namespace": "pools"},
				"nodeSelector":     map[string]any{"e6data.io/pool": "burst"},
				"executorSelector": with("e6data.io/executor-type", "pool"),
				"warmupSelector":   with("e6data.io/component", "warmup"),
				"executorsPerNode": int64(1),
				"maxExecutors":     int64(4),
				"tolerations":      []any{map[string]any{"key": "e6data.io/pool", "operator": "Equal", "value": "burst", "effect": "NoSchedule"}},
				"queryServices":    []any{map[string]any{"name": "analytics", "namespace": "team-a", "regularExecutors": int64(2), "maxPoolExecutors": int64(3)}},
				"suspend":          true,
				"policies":         map[string]any{"deleteFailedExecutors": true, "unauthorizedExecutors": "Evict", "enforceShares": true},
				"executorGate":     "e6data.io/pool-slot",
				"pricing":          map[string]any{"catalog": "aws"},
				"startup": map[string]any{
					"taint":     map[string]any{"key": "e6data.io/warming", "value": "burst", "effect": "NoSchedule"},
					"images":    []any{"ghcr.io/e6data/executor:3.1"},
					"openAfter": "5m0s",
				},
				"warmSlots": map[string]any{
					"selector": with("e6data.io/component", "placeholder"), "gate": "e6data.io/warm-slot", "slots": int64(2),
					"capacityBuffer": map[string]any{"name": "burst-warm-slots", "holds": true},
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got any = PoolCapacity(tc.args).Object
			for _, p := range tc.path {
				got = got.(map[string]any)[p]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nPoolCapacity(...) at %v: -want, +got:\n%s", tc.reason, tc.path, diff)
			}
		})
	}
}

// TestPoolCapacityDecodes: the provider decodes the PoolCapacity into the
// capacity API's types, and reads back exactly the arguments.
func TestPoolCapacityDecodes(t *testing.T) {
	// full is what the provider reads of fullCapacity, changed by f.
	full := func(f func(p *capv1alpha1.PoolCapacityParameters)) capv1alpha1.PoolCapacityParameters {
		p := capv1alpha1.PoolCapacityParameters{
			Pool:             capv1alpha1.PoolRef{Name: "burst", Namespace: "pools"},
			NodeSelector:     map[string]string{"e6data.io/pool": "burst"},
			ExecutorSelector: map[string]string{"e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools", "e6data.io/executor-type": "pool"},
			WarmupSelector:   map[string]string{"e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools", "e6data.io/component": "warmup"},
			Tolerations:      []corev1.Toleration{{Key: "e6data.io/pool", Operator: corev1.TolerationOpEqual, Value: "burst", Effect: corev1.TaintEffectNoSchedule}},
			ExecutorsPerNode: 1, MaxExecutors: 4,
			QueryServices: []capv1alpha1.AttachedQueryService{{Name: "analytics", Namespace: "team-a", RegularExecutors: 2, MaxPoolExecutors: 3}},
			Suspend:       true,
			Policies:      capv1alpha1.Policies{DeleteFailedExecutors: true, EnforceShares: true, UnauthorizedExecutors: capv1alpha1.UnauthorizedEvict},
			ExecutorGate:  "e6data.io/pool-slot",
			Pricing:       &capv1alpha1.Pricing{Catalog: "aws"},
			Startup: &capv1alpha1.Startup{Taint: corev1.Taint{Key: "e6data.io/warming", Value: "burst", Effect: corev1.TaintEffectNoSchedule},
				Images: []string{"ghcr.io/e6data/executor:3.1"}, OpenAfter: metav1.Duration{Duration: 5 * time.Minute}},
			WarmSlots: &capv1alpha1.WarmSlots{
				Selector: map[string]string{"e6data.io/pool": "burst", "e6data.io/pool-namespace": "pools", "e6data.io/component": "placeholder"},
				Gate:     "e6data.io/warm-slot", Slots: 2, CapacityBuffer: &capv1alpha1.WarmBuffer{Name: "burst-warm-slots", Holds: true},
			},
		}
		if f != nil {
			f(&p)
		}
		return p
	}
	cases := map[string]struct {
		reason string
		args   CapacityArgs
		want   capv1alpha1.PoolCapacityParameters
	}{
		"Full": {
			reason: "Every argument comes back in its field.",
			args:   bareCapacity(fullCapacity),
			want:   full(nil),
		},
		"CountOnly": {
			reason: "A PoolCapacity that only counts reports unauthorized executors, and prices, opens and releases nothing.",
			args:   bareCapacity(fullCapacity).CountOnly(),
			want: full(func(p *capv1alpha1.PoolCapacityParameters) {
				p.Policies = capv1alpha1.Policies{UnauthorizedExecutors: capv1alpha1.UnauthorizedReport}
				p.ExecutorGate, p.Pricing, p.Startup = "", nil, nil
				p.WarmSlots.Slots, p.WarmSlots.CapacityBuffer = 0, nil
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got capv1alpha1.PoolCapacity
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(PoolCapacity(tc.args).Object, &got); err != nil {
				t.Fatalf("%s\ncannot decode the PoolCapacity: %v", tc.reason, err)
			}
			if diff := cmp.Diff(capv1alpha1.PoolCapacityGroupVersionKind, got.GroupVersionKind()); diff != "" {
				t.Errorf("%s\nGroupVersionKind: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(&xpv2.Reference{Name: "default"}, got.Spec.ProviderConfigReference); diff != "" {
				t.Errorf("%s\nproviderConfigRef: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got.Spec.ForProvider); diff != "" {
				t.Errorf("%s\nforProvider: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDisarmed: a disarmed PoolCapacity is the same PoolCapacity with the
// policies of one that only counts.
func TestDisarmed(t *testing.T) {
	counting := func(a *CapacityArgs) {
		fullCapacity(a)
		a.DeleteFailed, a.Unauthorized, a.EnforceShares = false, string(capv1alpha1.UnauthorizedReport), false
	}
	cases := map[string]struct {
		reason string
		args   CapacityArgs
		want   CapacityArgs
	}{
		"Enforcing": {
			reason: "A PoolCapacity that deletes, evicts and enforces shares does none of them once disarmed, and keeps the rest.",
			args:   bareCapacity(fullCapacity),
			want:   bareCapacity(counting),
		},
		"Counting": {
			reason: "A PoolCapacity that only counts is unchanged.",
			args:   bareCapacity(counting),
			want:   bareCapacity(counting),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := PoolCapacity(tc.args)
			got := Disarmed(u)
			if diff := cmp.Diff(PoolCapacity(tc.want).Object, got.Object); diff != "" {
				t.Errorf("%s\nDisarmed(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(PoolCapacity(tc.args).Object, u.Object); diff != "" {
				t.Errorf("%s\nDisarmed(u) changed u: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestJSONPath: a field's path follows the JSON names of the fields down
// to it, through inlined structs and pointers.
func TestJSONPath(t *testing.T) {
	pc := &capv1alpha1.PoolCapacity{Spec: capv1alpha1.PoolCapacitySpec{
		ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{}},
		ForProvider:                capv1alpha1.PoolCapacityParameters{WarmSlots: &capv1alpha1.WarmSlots{CapacityBuffer: &capv1alpha1.WarmBuffer{}}},
	}}
	var other capv1alpha1.WarmBuffer
	cases := map[string]struct {
		reason string
		field  any
		want   []string
	}{
		"Inline": {
			reason: "An inlined struct's field sits beside the fields of the struct that embeds it.",
			field:  &pc.Spec.ProviderConfigReference.Name,
			want:   []string{"spec", "providerConfigRef", "name"},
		},
		"ThroughPointers": {
			reason: "Pointers to structs are followed.",
			field:  &pc.Spec.ForProvider.WarmSlots.CapacityBuffer.Holds,
			want:   []string{"spec", "forProvider", "warmSlots", "capacityBuffer", "holds"},
		},
		"Metadata": {
			reason: "ObjectMeta is metadata.",
			field:  &pc.Name,
			want:   []string{"metadata", "name"},
		},
		"NotAField": {
			reason: "A field of another struct has no path.",
			field:  &other.Holds,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, jsonPath(pc, tc.field)); diff != "" {
				t.Errorf("%s\njsonPath(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
