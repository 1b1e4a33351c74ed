package devplane

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	capv1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	poolv1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// ExecutorDeploymentName is the name a QueryService operator gives the
// Deployment of qs's pool executors (strategy "burst").
func ExecutorDeploymentName(qs string) string { return qs + "-executor-pool-burst" }

// PoolExecutorScheduling reads the Pool claim ns/name's
// status.executorScheduling: what its executors must carry. It fails while
// the pool has not published it yet.
func PoolExecutorScheduling(ctx context.Context, c client.Client, ns, name string) (poolv1.ExecutorScheduling, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("e6data.io/v1alpha1")
	u.SetKind("Pool")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return poolv1.ExecutorScheduling{}, err
	}
	m, ok, _ := unstructured.NestedMap(u.Object, "status", "executorScheduling")
	if !ok {
		return poolv1.ExecutorScheduling{}, fmt.Errorf("pool %s/%s has not published status.executorScheduling yet", ns, name)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return poolv1.ExecutorScheduling{}, err
	}
	var es poolv1.ExecutorScheduling
	return es, json.Unmarshal(b, &es)
}

// ExecutorDeployment is what a QueryService operator creates to burst qs's
// executors onto a pool, following the contract of docs/queryservice.md:
// pods with exactly the labels, node selector, tolerations and annotations of the
// pool's status.executorScheduling (sched), plus the QueryService and
// component labels, each requesting (and limited to) cpu and mem.
func ExecutorDeployment(ns, qs, image string, replicas int32, cpu, mem string, sched poolv1.ExecutorScheduling) *appsv1.Deployment {
	labels := maps.Clone(sched.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[qsv1.LabelQueryService] = qs
	labels[qsv1.LabelComponent] = qsv1.ComponentExecutor
	tols := PodTolerations(sched.Tolerations)
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: ExecutorDeploymentName(qs), Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels), Annotations: maps.Clone(sched.Annotations)},
				Spec: corev1.PodSpec{
					NodeSelector: maps.Clone(sched.NodeSelector),
					Tolerations:  tols,
					Containers: []corev1.Container{{
						Name:      "executor",
						Image:     image,
						Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl},
					}},
				},
			},
		},
	}
}

// PodTolerations are a pool's published tolerations as a pod's.
func PodTolerations(ts []poolv1.Toleration) []corev1.Toleration {
	out := make([]corev1.Toleration, 0, len(ts))
	for _, t := range ts {
		out = append(out, corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
			Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds,
		})
	}
	return out
}

// ExecutorResources is the CPU and memory of one executor of the
// QueryService qs (spec.executor.resources), as its operator requests them.
func ExecutorResources(qs *unstructured.Unstructured) (cpu, mem string) {
	cpu, _, _ = unstructured.NestedString(qs.Object, "spec", "executor", "resources", "cpu")
	mem, _, _ = unstructured.NestedString(qs.Object, "spec", "executor", "resources", "memory")
	return cpu, mem
}

// ScaleExecutors sets the replicas of QueryService ns/qs's pool executor
// Deployment to n, as its operator would.
func ScaleExecutors(ctx context.Context, c client.Client, ns, qs string, n int32) error {
	// A merge patch of replicas alone: an update of what was read races
	// the Deployment controller's status writes.
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ExecutorDeploymentName(qs)}}
	return c.Patch(ctx, d, client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n)))
}

// CapacityObservation reads status.atProvider of the PoolCapacity name
// (the function names a local pool's <pool>-capacity).
func CapacityObservation(ctx context.Context, c client.Client, name string) (capv1.PoolCapacityObservation, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(capv1.SchemeGroupVersion.String())
	u.SetKind("PoolCapacity")
	if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		return capv1.PoolCapacityObservation{}, err
	}
	pc := &capv1.PoolCapacity{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pc); err != nil {
		return capv1.PoolCapacityObservation{}, err
	}
	return pc.Status.AtProvider, nil
}
