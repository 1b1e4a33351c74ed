package watch

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/warmup"
)

// StripPod is a cache transform that keeps only the parts of a pod that Pod
// reads, so a cache of tens of thousands of pods stays small.
func StripPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              p.Name,
			Namespace:         p.Namespace,
			UID:               p.UID,
			ResourceVersion:   p.ResourceVersion,
			Labels:            p.Labels,
			CreationTimestamp: p.CreationTimestamp,
			DeletionTimestamp: p.DeletionTimestamp,
		},
		Spec: corev1.PodSpec{NodeName: p.Spec.NodeName},
		Status: corev1.PodStatus{
			Phase:                 p.Status.Phase,
			Reason:                p.Status.Reason,
			Message:               p.Status.Message,
			StartTime:             p.Status.StartTime,
			InitContainerStatuses: stripContainers(p.Status.InitContainerStatuses),
			ContainerStatuses:     stripContainers(p.Status.ContainerStatuses),
		},
	}
	if img, ok := p.Annotations[warmup.AnnotationImage]; ok {
		out.Annotations = map[string]string{warmup.AnnotationImage: img}
	}
	return out, nil
}

func stripContainers(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i, c := range in {
		out[i] = corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: c.State, LastTerminationState: c.LastTerminationState}
	}
	return out
}

// StripNode is a cache transform that keeps only the parts of a node that
// Node reads.
func StripNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	out := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:              n.Name,
			UID:               n.UID,
			ResourceVersion:   n.ResourceVersion,
			Labels:            n.Labels,
			DeletionTimestamp: n.DeletionTimestamp,
		},
		Spec: corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable, Taints: n.Spec.Taints},
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return out, nil
}

// Pod returns the capacity view of a pod.
func Pod(p *corev1.Pod) *capacity.Pod {
	out := &capacity.Pod{
		Namespace: p.Namespace,
		Name:      p.Name,
		UID:       string(p.UID),
		Pool:      p.Labels[qsv1alpha1.LabelPool],
		Labels:    p.Labels,
		Image:     p.Annotations[warmup.AnnotationImage],
		NodeName:  p.Spec.NodeName,
		State:     state(p),
		Reason:    p.Status.Reason,
		Message:   p.Status.Message,
		Started:   p.CreationTimestamp.Time,
	}
	if p.Status.StartTime != nil {
		out.Started = p.Status.StartTime.Time
	}
	n := len(p.Status.InitContainerStatuses) + len(p.Status.ContainerStatuses)
	if n > 0 {
		out.Containers = make([]capacity.Container, 0, n)
		for _, c := range p.Status.InitContainerStatuses {
			out.Containers = append(out.Containers, container(c, true))
		}
		for _, c := range p.Status.ContainerStatuses {
			out.Containers = append(out.Containers, container(c, false))
		}
	}
	return out
}

func state(p *corev1.Pod) capacity.PodState {
	if p.DeletionTimestamp != nil {
		return capacity.PodDeleted
	}
	switch p.Status.Phase {
	case corev1.PodPending, "":
		return capacity.PodPending
	case corev1.PodRunning:
		return capacity.PodRunning
	case corev1.PodSucceeded:
		return capacity.PodSucceeded
	case corev1.PodFailed:
		return capacity.PodFailed
	default:
		return capacity.PodUnknown
	}
}

func container(c corev1.ContainerStatus, init bool) capacity.Container {
	out := capacity.Container{Name: c.Name, Init: init, Image: c.Image}
	if w := c.State.Waiting; w != nil {
		out.WaitingReason, out.WaitingMessage = w.Reason, w.Message
	}
	out.Terminated = termination(c.State.Terminated)
	out.LastTerminated = termination(c.LastTerminationState.Terminated)
	return out
}

func termination(t *corev1.ContainerStateTerminated) *capacity.Termination {
	if t == nil {
		return nil
	}
	return &capacity.Termination{Reason: t.Reason, ExitCode: t.ExitCode, Message: t.Message, FinishedAt: t.FinishedAt.Time}
}

// Node returns the capacity view of a node.
func Node(n *corev1.Node) *capacity.Node {
	out := &capacity.Node{
		Name:        n.Name,
		Pool:        n.Labels[qsv1alpha1.LabelPool],
		Labels:      n.Labels,
		Deleting:    n.DeletionTimestamp != nil,
		Schedulable: !n.Spec.Unschedulable,
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Ready = c.Status == corev1.ConditionTrue
		}
	}
	if slices.ContainsFunc(n.Spec.Taints, blocksScheduling) {
		out.Schedulable = false
	}
	return out
}

// blocksScheduling reports whether a taint keeps executors off a node. The
// pool's own taint does not: pool executors tolerate it. Nor do the taints
// that mirror the Ready condition, which Ready already accounts for and
// which trail it (the API server adds not-ready to every new node).
func blocksScheduling(t corev1.Taint) bool {
	switch t.Key {
	case qsv1alpha1.TaintPool, corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable:
		return false
	}
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}
