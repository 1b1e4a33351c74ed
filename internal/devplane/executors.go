package devplane

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// ExecutorDeploymentName is the name a QueryService operator gives the
// Deployment of qs's pool executors (strategy "burst").
func ExecutorDeploymentName(qs string) string { return qs + "-executor-pool-burst" }

// ExecutorDeployment is what a QueryService operator creates to burst qs's
// executors onto pool: pods with the labels and scheduling cues of
// docs/queryservice.md, each requesting (and limited to) cpu and mem.
func ExecutorDeployment(ns, qs, pool, image string, replicas int32, cpu, mem string) *appsv1.Deployment {
	labels := map[string]string{
		qsv1.LabelPool:         pool,
		qsv1.LabelQueryService: qs,
		qsv1.LabelExecutorType: qsv1.ExecutorTypePool,
		qsv1.LabelComponent:    qsv1.ComponentExecutor,
	}
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: ExecutorDeploymentName(qs), Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{qsv1.LabelPool: pool},
					Tolerations:  []corev1.Toleration{{Key: qsv1.TaintPool, Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule}},
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
