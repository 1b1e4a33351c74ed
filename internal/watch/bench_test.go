package watch

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// executorPod is a pool executor as a QueryService operator makes it
// (docs/queryservice.md), bound to node or, when node is empty, waiting
// for room.
func executorPod(i int, node string) *corev1.Pod {
	start := metav1.NewTime(time.Unix(1_700_000_000, 0))
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "workspace-analytics", Name: fmt.Sprintf("analytics-exec-%05d", i), UID: "u", ResourceVersion: "42",
			Labels: map[string]string{qsv1alpha1.LabelPool: "burst-pool", qsv1alpha1.LabelPoolNamespace: "e6-pools", qsv1alpha1.LabelQueryService: "analytics",
				qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentExecutor}},
		Spec: corev1.PodSpec{NodeName: node,
			NodeSelector: map[string]string{qsv1alpha1.LabelPool: "burst-pool", qsv1alpha1.LabelPoolNamespace: "e6-pools"},
			Tolerations: []corev1.Toleration{
				{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: "burst-pool", Effect: corev1.TaintEffectNoSchedule},
				{Key: qsv1alpha1.TaintPoolNamespace, Operator: corev1.TolerationOpEqual, Value: "e6-pools", Effect: corev1.TaintEffectNoSchedule},
			},
			Containers: []corev1.Container{{Name: "executor", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &start, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "executor", Image: "ghcr.io/e6data/executor:3.1", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}}},
	}
	if node == "" {
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, LastTransitionTime: start}}}
	}
	return p
}

// BenchmarkPod measures the cache transform of one executor pod: what
// every pod event costs before it reaches the store.
func BenchmarkPod(b *testing.B) {
	for _, tc := range []struct{ name, node string }{{"Running", "burst-node-1"}, {"Unschedulable", ""}} {
		b.Run(tc.name, func(b *testing.B) {
			pods := make([]*corev1.Pod, 1024)
			for i := range pods {
				pods[i] = executorPod(i, tc.node)
			}
			b.ReportAllocs()
			var last *capacity.Pod
			for i := 0; b.Loop(); i++ {
				last = Pod(pods[i%len(pods)])
			}
			want := capacity.PodRunning
			if tc.node == "" {
				want = capacity.PodPending
			}
			if last.State != want || last.NodeName != tc.node {
				b.Fatalf("pod %v on %q, want %v on %q", last.State, last.NodeName, want, tc.node)
			}
		})
	}
}
