package castandin

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// nodeGroup is a NodeGroup as burstpool composes it (trimmed).
const nodeGroup = `
apiVersion: eks.aws.upbound.io/v1beta1
kind: NodeGroup
metadata:
  name: burst-nodegroup
  annotations: {crossplane.io/external-name: burst-ng}
spec:
  forProvider:
    capacityType: SPOT
    instanceTypes: [r7gd.4xlarge, r6gd.4xlarge]
    labels: {e6data.io/pool: burst}
    scalingConfig: [{minSize: 1, maxSize: 4}]
    taint:
    - {key: e6data.io/pool, value: burst, effect: NO_SCHEDULE}
    - {key: e6data.io/pool, value: burst, effect: NO_EXECUTE}
`

func TestGroupOf(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(nodeGroup), &u.Object); err != nil {
		t.Fatal(err)
	}
	got, err := GroupOf(u)
	if err != nil {
		t.Fatal(err)
	}
	want := Group{Name: "burst-nodegroup", External: "burst-ng", Min: 1, Max: 4, InstanceType: "r7gd.4xlarge", Spot: true,
		Labels: map[string]string{"e6data.io/pool": "burst"},
		Taints: []corev1.Taint{{Key: "e6data.io/pool", Value: "burst", Effect: corev1.TaintEffectNoSchedule}, {Key: "e6data.io/pool", Value: "burst", Effect: corev1.TaintEffectNoExecute}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GroupOf: the template is the group's first type, labels and taints with Kubernetes effects (-want, +got):\n%s", diff)
	}
}

func pod(cpu, mem string, sel map[string]string, tols ...corev1.Toleration) *corev1.Pod {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: sel, Tolerations: tols, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: rl}}}}}
}

func TestFits(t *testing.T) {
	g := Group{Labels: map[string]string{"e6data.io/pool": "burst"}, Taints: []corev1.Taint{{Key: "e6data.io/pool", Value: "burst", Effect: corev1.TaintEffectNoSchedule}}}
	tol := corev1.Toleration{Key: "e6data.io/pool", Operator: corev1.TolerationOpEqual, Value: "burst", Effect: corev1.TaintEffectNoSchedule}
	hold := g
	hold.Taints = append(hold.Taints, corev1.Taint{Key: "e6data.io/hold", Value: "true", Effect: corev1.TaintEffectNoSchedule})
	cases := map[string]struct {
		reason string
		g      Group
		p      *corev1.Pod
		want   bool
	}{
		"Fits":         {"Its selector matches the template and it tolerates the taint.", g, pod("1", "1Gi", map[string]string{"e6data.io/pool": "burst"}, tol), true},
		"OtherPool":    {"A selector the template's labels do not satisfy.", g, pod("1", "1Gi", map[string]string{"e6data.io/pool": "other"}, tol), false},
		"NoToleration": {"A pod that does not tolerate the template's taint.", g, pod("1", "1Gi", nil), false},
		"Held":         {"No pool pod tolerates the hold taint, so a held group never scales up.", hold, pod("1", "1Gi", map[string]string{"e6data.io/pool": "burst"}, tol), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.g.Fits(tc.p); got != tc.want {
				t.Errorf("%s\nFits = %t, want %t", tc.reason, got, tc.want)
			}
		})
	}
}

func TestNewNodes(t *testing.T) {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("15"), corev1.ResourceMemory: resource.MustParse("120Gi")}
	cases := map[string]struct {
		reason string
		rooms  []Room
		pods   []*corev1.Pod
		want   int
	}{
		"TwoPerNode":  {"Three 7-CPU pods: two share a node, the third needs another.", nil, []*corev1.Pod{pod("7", "10Gi", nil), pod("7", "10Gi", nil), pod("7", "10Gi", nil)}, 2},
		"MemoryBound": {"Two 70Gi pods cannot share a 120Gi node.", nil, []*corev1.Pod{pod("1", "70Gi", nil), pod("1", "70Gi", nil)}, 2},
		"TooLarge":    {"A pod larger than a node triggers nothing.", nil, []*corev1.Pod{pod("32", "10Gi", nil)}, 0},
		"RoomFirst": {"A node just added, whose pod is not bound yet, has room: no new node for it.",
			[]Room{RoomOf(alloc, nil)}, []*corev1.Pod{pod("7", "10Gi", nil)}, 0},
		"FullNode": {"A node whose bound pods leave too little room does not count.",
			[]Room{RoomOf(alloc, []*corev1.Pod{pod("10", "10Gi", nil)})}, []*corev1.Pod{pod("7", "10Gi", nil)}, 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NewNodes(alloc, tc.rooms, tc.pods); got != tc.want {
				t.Errorf("%s\nNewNodes = %d, want %d", tc.reason, got, tc.want)
			}
		})
	}
}
