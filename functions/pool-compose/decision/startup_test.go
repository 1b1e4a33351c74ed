package decision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
)

// TestStartupOf: a Karpenter pool that warms images launches its nodes
// with the startup taint, and its PoolCapacity asks the provider to lift
// it once the images are warm or after warmup.openAfter.
func TestStartupOf(t *testing.T) {
	taint := corev1.Taint{Key: qsv1alpha1.TaintWarming, Value: "burst", Effect: corev1.TaintEffectNoSchedule}
	images := []string{"registry.example/engine:1"}
	cases := map[string]struct {
		reason string
		method string
		images []string
		warmup *v1beta1.Warmup
		want   *capv1alpha1.Startup
	}{
		"KarpenterDefault": {
			reason: "A Karpenter pool with a warm image waits for it, at most the default 5m.",
			method: methodKarpenter, images: images,
			want: &capv1alpha1.Startup{Taint: taint, Images: images, OpenAfter: metav1.Duration{Duration: 5 * time.Minute}},
		},
		"EKSAutoMode": {
			reason: "EKS Auto Mode's NodePool is Karpenter's karpenter.sh/v1 NodePool, startupTaints included.",
			method: methodEKSAutoMode, images: images, warmup: &v1beta1.Warmup{OpenAfter: "90s"},
			want: &capv1alpha1.Startup{Taint: taint, Images: images, OpenAfter: metav1.Duration{Duration: 90 * time.Second}},
		},
		"Disabled": {
			reason: "openAfter 0s launches nodes without the taint.",
			method: methodKarpenter, images: images, warmup: &v1beta1.Warmup{OpenAfter: "0s"},
		},
		"NoImages": {
			reason: "Nothing to warm, nothing to wait for.",
			method: methodKarpenter,
		},
		"CloudNodePool": {
			reason: "LKE's node pools have no startup taints their autoscaler ignores: no taint.",
			method: methodLKE, images: images,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := Input{Pool: "burst", Config: &v1beta1.Input{Warmup: tc.warmup}}
			f := Facts{Detection: Detection{Method: tc.method}}
			if diff := cmp.Diff(tc.want, startupOf(in, f, tc.images)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestWarmBeforeScheduleObjects: the NodePool carries the startup taint,
// the warmup pods tolerate it, the executors' scheduling does not, and
// placeholders are created gated.
func TestWarmBeforeScheduleObjects(t *testing.T) {
	taint := warmingTaint("burst", 1, nil)
	np := objects.NodePool(objects.NodePoolArgs{Pool: "burst", NodeClass: nodeClassKinds[cloudKWOK], Types: []string{"m5.large"}, StartupTaint: taint,
		Tuning: v1beta1.Karpenter{ConsolidateAfter: "5m"}})
	st, _, _ := unstructured.NestedSlice(np.Object, "spec", "template", "spec", "startupTaints")
	want := []any{map[string]any{"key": qsv1alpha1.TaintWarming, "value": "burst", "effect": "NoSchedule"}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("NodePool startupTaints: -want, +got:\n%s", diff)
	}

	ph := objects.Placeholder(objects.PlaceholderArgs{Pool: "burst", Namespace: "pools", Replicas: 1, Image: "pause",
		Slot: sizing.Resources{CPU: k8sresource.MustParse("1"), Memory: k8sresource.MustParse("1Gi")}})
	gates, _, _ := unstructured.NestedSlice(ph.Object, "spec", "template", "spec", "schedulingGates")
	if diff := cmp.Diff([]any{map[string]any{"name": qsv1alpha1.GateWarmSlot}}, gates); diff != "" {
		t.Errorf("placeholder schedulingGates: -want, +got:\n%s", diff)
	}
}

// TestImagesConditionOpenedCold: a node opened at the bound makes
// ImagesWarm False and names the node and the images it lacked.
func TestImagesConditionOpenedCold(t *testing.T) {
	warm := []poolv1alpha1.CachedImage{{Image: "e6/exec:1", WarmupStatus: poolv1alpha1.WarmupReady}}
	cold := []capv1alpha1.ColdNode{{Node: "node-a", Images: []string{"e6/exec:1"}}}
	got := imagesCondition(warm, cold)
	want := Condition{Type: CondImagesWarm, Status: metav1.ConditionFalse, Reason: "NodesOpenedCold",
		Message: "pool nodes took executors after warmup.openAfter before their images were warm, so those executors pull first: node-a (without e6/exec:1); see the warmup pods on them, or raise warmup.openAfter in the EnvironmentConfig"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
	if got := imagesCondition(warm, nil); got.Reason != "AllWarm" {
		t.Errorf("without cold nodes: reason %s, want AllWarm", got.Reason)
	}
}

// TestImageRefs: new nodes wait for every warm image but those that fail
// to warm.
func TestImageRefs(t *testing.T) {
	p := WarmPlan{Images: []poolv1alpha1.CachedImage{
		{Image: "e6/exec:1", WarmupStatus: poolv1alpha1.WarmupReady},
		{Image: "e6/exec:typo", WarmupStatus: poolv1alpha1.WarmupFailed},
		{Image: "e6/exec:2", WarmupStatus: poolv1alpha1.WarmupPending},
	}}
	if diff := cmp.Diff([]string{"e6/exec:1", "e6/exec:2"}, p.imageRefs()); diff != "" {
		t.Errorf("-want, +got:\n%s", diff)
	}
}
