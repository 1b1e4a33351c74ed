package watch

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/warmup"
)

func TestNode(t *testing.T) {
	labels := map[string]string{qsv1alpha1.LabelPool: "p"}
	ready := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	taint := func(key string, e corev1.TaintEffect) corev1.Taint { return corev1.Taint{Key: key, Effect: e} }
	cases := map[string]struct {
		reason string
		node   corev1.Node
		want   capacity.Node
	}{
		"ReadyPoolNode": {
			reason: "A Ready node with only the pool taint is schedulable.",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels},
				Spec:   corev1.NodeSpec{Taints: []corev1.Taint{taint(qsv1alpha1.TaintPool, corev1.TaintEffectNoSchedule)}},
				Status: corev1.NodeStatus{Conditions: ready}},
			want: capacity.Node{Name: "n", Pool: "p", Labels: labels, Ready: true, Schedulable: true},
		},
		"ConditionTaintsIgnored": {
			reason: "The not-ready and unreachable taints mirror Ready and do not count again.",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels},
				Spec: corev1.NodeSpec{Taints: []corev1.Taint{
					taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoSchedule), taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)}},
				Status: corev1.NodeStatus{Conditions: ready}},
			want: capacity.Node{Name: "n", Pool: "p", Labels: labels, Ready: true, Schedulable: true},
		},
		"DisruptedNode": {
			reason: "Karpenter's disruption taint makes the node unschedulable, whatever executors tolerate.",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels},
				Spec:   corev1.NodeSpec{Taints: []corev1.Taint{taint("karpenter.sh/disrupted", corev1.TaintEffectNoSchedule)}},
				Status: corev1.NodeStatus{Conditions: ready}},
			want: capacity.Node{Name: "n", Pool: "p", Labels: labels, Ready: true, Cordoned: true},
		},
		"PoolTaints": {
			reason: "The pool's identity taints do not count; a taint of its own (spec.tolerations) is kept for the pool's tolerations to judge.",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels},
				Spec: corev1.NodeSpec{Taints: []corev1.Taint{taint(qsv1alpha1.TaintPool, corev1.TaintEffectNoSchedule),
					taint(qsv1alpha1.TaintPoolNamespace, corev1.TaintEffectNoSchedule), {Key: "dedicated", Value: "a", Effect: corev1.TaintEffectNoSchedule}}},
				Status: corev1.NodeStatus{Conditions: ready}},
			want: capacity.Node{Name: "n", Pool: "p", Labels: labels, Ready: true, Taints: []capacity.Taint{{Key: "dedicated", Value: "a", Effect: "NoSchedule"}}},
		},
		"CordonedDeletingNode": {
			reason: "A cordoned node is unschedulable; a node with a deletion timestamp is deleting; no Ready condition means not ready.",
			node: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels, DeletionTimestamp: &metav1.Time{Time: time.Unix(1, 0)}},
				Spec: corev1.NodeSpec{Unschedulable: true}},
			want: capacity.Node{Name: "n", Pool: "p", Labels: labels, Deleting: true, Cordoned: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cached, err := TransformNode(&tc.node)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tc.want, cached.(*record[*capacity.Node]).view); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPod(t *testing.T) {
	start := metav1.Time{Time: time.Unix(100, 0)}
	labels := map[string]string{qsv1alpha1.LabelPool: "p", "other": "x"}
	tolerations := []corev1.Toleration{{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: "p", Effect: corev1.TaintEffectNoSchedule}}
	// The scheduler's verdict on a pod no node has room for
	// (k8s.io/api/core/v1 PodReasonUnschedulable).
	unschedulable := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}
	affinity := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	cases := map[string]struct {
		reason string
		pod    corev1.Pod
		want   capacity.Pod
	}{
		"RunningWarmupPod": {
			reason: "The cached record keeps the image annotation, node, start time, when its containers ran and their states.",
			pod: corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "u", Labels: labels,
					Annotations: map[string]string{warmup.AnnotationImage: "img:1", "big": "dropped"}},
				Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "pause", Image: "helper"}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &start,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "pull", Image: "img:1", State: corev1.ContainerState{
						Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: start}}}},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "pause", Image: "helper", Ready: true, State: corev1.ContainerState{
						Running: &corev1.ContainerStateRunning{StartedAt: start}}}}},
			},
			want: capacity.Pod{Namespace: "ns", Name: "w", UID: "u", Pool: "p", Labels: labels, Image: "img:1", NodeName: "n",
				State: capacity.PodRunning, Started: start.Time, Running: start.Time,
				Containers: []capacity.Container{
					{Name: "pull", Init: true, Image: "img:1", Terminated: &capacity.Termination{Reason: "Completed", FinishedAt: start.Time}},
					{Name: "pause", Image: "helper"},
				}},
		},
		"RestartedContainer": {
			reason: "A running pod whose container restarted has no Running time: its first start is no longer in its status.",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r", Labels: labels, CreationTimestamp: start},
				Spec: corev1.PodSpec{NodeName: "n"},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "x", RestartCount: 1,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}}}},
			want: capacity.Pod{Namespace: "ns", Name: "r", Pool: "p", Labels: labels, NodeName: "n", State: capacity.PodRunning, Started: start.Time, Created: start.Time,
				Containers: []capacity.Container{{Name: "x"}}},
		},
		"TerminatingPod": {
			reason: "A pod with a deletion timestamp is Deleted whatever its phase.",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "e", Labels: labels, CreationTimestamp: start, DeletionTimestamp: &start},
				Status: corev1.PodStatus{Phase: corev1.PodRunning}},
			want: capacity.Pod{Namespace: "ns", Name: "e", Pool: "p", Labels: labels, State: capacity.PodDeleted, Started: start.Time, Created: start.Time, DeletedAt: start.Time},
		},
		"DisruptedPodWithRequests": {
			reason: "The DisruptionTarget condition, the latest condition transition, the requests (containers summed, the largest init container if more) and the resource version are kept.",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "e", Labels: labels, CreationTimestamp: start, ResourceVersion: "42"},
				Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}},
					Containers: []corev1.Container{
						{Name: "a", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}},
						{Name: "b", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")}}},
					}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start},
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.Time{Time: start.Add(time.Minute)}},
				}}},
			want: capacity.Pod{Namespace: "ns", Name: "e", Pool: "p", Labels: labels, State: capacity.PodRunning, Started: start.Time, Created: start.Time,
				Transitioned: start.Add(time.Minute), ResourceVersion: "42", CPUMillis: 3000, MemoryBytes: 1536 << 20,
				Disruption: &capacity.Disruption{Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", At: start.Add(time.Minute)}},
		},
		"UnschedulablePod": {
			reason: "An unbound pending pod keeps what it asks for (its node selector, its required node-affinity terms and its tolerations) and whether the scheduler found it no room.",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u", Labels: labels, CreationTimestamp: start},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{qsv1alpha1.LabelPool: "p"}, Tolerations: tolerations,
					Affinity: affinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: qsv1alpha1.LabelPoolNamespace, Operator: corev1.NodeSelectorOpIn, Values: []string{"team-a"}},
						{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}},
					}})},
				Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{unschedulable}}},
			want: capacity.Pod{Namespace: "ns", Name: "u", Pool: "p", Labels: labels, State: capacity.PodPending, Started: start.Time, Created: start.Time, Unschedulable: true,
				Aim: &capacity.Aim{NodeSelector: map[string]string{qsv1alpha1.LabelPool: "p"}, Tolerations: tolerations, Affinity: []capacity.Term{{
					{Key: qsv1alpha1.LabelPoolNamespace, Operator: corev1.NodeSelectorOpIn, Values: []string{"team-a"}},
					{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}},
				}}}},
		},
		"GatedPod": {
			reason: "A pod held by a scheduling gate (PodScheduled False, SchedulingGated) is not unschedulable; every affinity term is kept, match fields too; its gates are kept.",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g", Labels: labels, CreationTimestamp: start},
				Spec: corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: "hold"}},
					Affinity: affinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: qsv1alpha1.LabelPool, Operator: corev1.NodeSelectorOpIn, Values: []string{"p"}}}},
						corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}},
							MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n1"}}}})},
				Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
					{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}}},
			want: capacity.Pod{Namespace: "ns", Name: "g", Pool: "p", Labels: labels, State: capacity.PodPending, Started: start.Time, Created: start.Time, Gates: []string{"hold"},
				Aim: &capacity.Aim{Affinity: []capacity.Term{
					{{Key: qsv1alpha1.LabelPool, Operator: corev1.NodeSelectorOpIn, Values: []string{"p"}}},
					{{Key: "zone", Operator: corev1.NodeSelectorOpExists}, {Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n1"}, Field: true}},
				}}},
		},
		"ContradictoryAffinity": {
			reason: "A node-affinity requirement that contradicts the node selector is kept as it is: the capacity core finds that no node has both.",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Labels: labels, CreationTimestamp: start},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{qsv1alpha1.LabelPool: "p"},
					Affinity: affinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: qsv1alpha1.LabelPool, Operator: corev1.NodeSelectorOpIn, Values: []string{"q"}}}})},
				Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{unschedulable}}},
			want: capacity.Pod{Namespace: "ns", Name: "c", Pool: "p", Labels: labels, State: capacity.PodPending, Started: start.Time, Created: start.Time, Unschedulable: true,
				Aim: &capacity.Aim{NodeSelector: map[string]string{qsv1alpha1.LabelPool: "p"},
					Affinity: []capacity.Term{{{Key: qsv1alpha1.LabelPool, Operator: corev1.NodeSelectorOpIn, Values: []string{"q"}}}}}},
		},
		"BoundPendingPod": {
			reason: "A bound pod keeps no aim: where it runs is decided.",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", Labels: labels, CreationTimestamp: start},
				Spec:   corev1.PodSpec{NodeName: "n", NodeSelector: map[string]string{qsv1alpha1.LabelPool: "p"}},
				Status: corev1.PodStatus{Phase: corev1.PodPending}},
			want: capacity.Pod{Namespace: "ns", Name: "b", Pool: "p", Labels: labels, NodeName: "n", State: capacity.PodPending, Started: start.Time, Created: start.Time},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cached, err := TransformPod(&tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tc.want, cached.(*record[*capacity.Pod]).view); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestAimsShared checks that pods asking for the same nodes share one Aim,
// and pods asking for other nodes do not.
func TestAimsShared(t *testing.T) {
	a, b, c := executorPod(1, ""), executorPod(2, ""), executorPod(3, "")
	c.Spec.NodeSelector = map[string]string{qsv1alpha1.LabelPool: "burst-pool", qsv1alpha1.LabelPoolNamespace: "e6-pools", "zone": "a"}
	pa, pb, pc := Pod(a), Pod(b), Pod(c)
	if pa.Aim == nil || pa.Aim != pb.Aim {
		t.Errorf("two executors of one template keep two Aims: %p and %p", pa.Aim, pb.Aim)
	}
	if pc.Aim == pa.Aim {
		t.Errorf("an executor with another node selector shares the Aim of one without it")
	}
	if diff := cmp.Diff(a.Spec.Tolerations, pa.Aim.Tolerations); diff != "" {
		t.Errorf("tolerations (-pod +aim):\n%s", diff)
	}
}
