package warmup

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/golden"
)

func TestDaemonSet(t *testing.T) {
	since := time.Date(2026, 5, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*60*60))
	helper := "ghcr.io/burstpool/warm:v0.1.0"
	cases := map[string]struct {
		reason string
		in     DaemonSetInput
	}{
		"Minimal": {
			reason: "With only a pool, an image and the helper, the DaemonSet tolerates the pool taint and warms the normalized image.",
			in:     DaemonSetInput{Pool: "analytics", Namespace: "burstpool-system", Image: "nginx", HelperImage: helper},
		},
		"Full": {
			reason: "Pull secrets, tolerations, node selector, labels and priority are carried; the pool's own labels win; the toleration of the pool taint is not repeated.",
			in: DaemonSetInput{
				Pool:        "analytics",
				Namespace:   "team-a",
				Image:       "123456789012.dkr.ecr.us-east-1.amazonaws.com/e6data/executor:3.1.4",
				HelperImage: helper,
				PullSecrets: []string{"ecr", "", "ghcr"},
				Tolerations: []corev1.Toleration{
					{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: "analytics", Effect: corev1.TaintEffectNoSchedule},
					{Key: "dedicated", Operator: corev1.TolerationOpExists},
				},
				NodeSelector:      map[string]string{qsv1alpha1.LabelPool: "analytics", "kubernetes.io/arch": "arm64"},
				Labels:            map[string]string{"team": "a", qsv1alpha1.LabelComponent: "overridden"},
				PriorityClassName: "system-node-critical",
			},
		},
		"Unused": {
			reason: "An unused image's DaemonSet carries the stamp in UTC on the DaemonSet only, not on the pod template.",
			in: DaemonSetInput{
				Pool:         "a-pool-whose-name-is-far-too-long-for-a-daemonset-name",
				Namespace:    "burstpool-system",
				Image:        "ghcr.io/e6data/executor@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				HelperImage:  helper,
				NodeSelector: map[string]string{qsv1alpha1.LabelPool: "a-pool-whose-name-is-far-too-long-for-a-daemonset-name"},
				UnusedSince:  &since,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.in.Tolerations
			ds := DaemonSet(tc.in)
			if errs := validation.IsDNS1123Label(ds.Name); len(errs) > 0 {
				t.Errorf("%s\nDaemonSet(...).Name %q: %v", tc.reason, ds.Name, errs)
			}
			if ds.Name != DaemonSetName(tc.in.Pool, tc.in.Image) {
				t.Errorf("%s\nDaemonSet(...).Name %q, want DaemonSetName %q", tc.reason, ds.Name, DaemonSetName(tc.in.Pool, tc.in.Image))
			}
			if len(before) > 0 && &before[0] == &ds.Spec.Template.Spec.Tolerations[0] {
				t.Errorf("%s\nDaemonSet(...) shares its tolerations with the input", tc.reason)
			}
			got, err := yaml.Marshal(ds)
			if err != nil {
				t.Fatal(err)
			}
			golden.File(t, filepath.Join("testdata", name+".yaml"), got)
		})
	}
}

// TestDaemonSetSelectorStable checks that the selector, which a DaemonSet
// cannot change, depends only on the pool and the image.
func TestDaemonSetSelectorStable(t *testing.T) {
	a := DaemonSet(DaemonSetInput{Pool: "p", Image: "nginx", HelperImage: "h:1"})
	b := DaemonSet(DaemonSetInput{Pool: "p", Image: "docker.io/library/nginx:latest", HelperImage: "h:2",
		Labels: map[string]string{"x": "y"}, UnusedSince: &time.Time{}})
	if diff := cmp.Diff(a.Spec.Selector, b.Spec.Selector); diff != "" {
		t.Errorf("selector changed with helper, labels or stamp: -a, +b:\n%s", diff)
	}
	if diff := cmp.Diff(a.Spec.Template.Annotations, b.Spec.Template.Annotations); diff != "" {
		t.Errorf("pod annotations changed with the stamp, which would restart pods: -a, +b:\n%s", diff)
	}
}
