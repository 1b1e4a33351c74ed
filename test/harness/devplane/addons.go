package devplane

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/internal/sizing"
)

// addOnContainer is one container of an add-on DaemonSet, with its CPU
// request.
type addOnContainer struct {
	name, cpu string
}

// eksAddOns are the DaemonSets every node of an EKS cluster runs with
// Karpenter, as the EKS add-ons install them: kube-proxy requests 100m
// (the EKS kube-proxy add-on), and aws-node, the Amazon VPC CNI, 25m for
// its init container aws-vpc-cni-init and 25m for each of its containers
// aws-node and aws-eks-nodeagent (amazon-vpc-cni-k8s
// config/master/aws-k8s-cni.yaml). None requests memory. Both tolerate
// every taint, so they run on pool nodes, and Karpenter counts them
// before it launches a node.
var eksAddOns = []struct {
	name       string
	init, main []addOnContainer
}{
	{name: "kube-proxy", main: []addOnContainer{{"kube-proxy", "100m"}}},
	{name: "aws-node", init: []addOnContainer{{"aws-vpc-cni-init", "25m"}}, main: []addOnContainer{{"aws-node", "25m"}, {"aws-eks-nodeagent", "25m"}}},
}

// AddOnDaemonSets are the add-on DaemonSets a real cluster of the simulated
// cloud runs on every node (on AWS, EKS's kube-proxy and aws-node with
// their default requests), so pods on the simulated nodes have what is
// left on a real node, and a sizing model that forgets them leaves
// executors Pending here as it would there. None for other clouds.
func AddOnDaemonSets(cloud sizing.Cloud) []*appsv1.DaemonSet {
	if cloud != sizing.CloudAWS {
		return nil
	}
	out := make([]*appsv1.DaemonSet, 0, len(eksAddOns))
	for _, a := range eksAddOns {
		labels := map[string]string{"k8s-app": a.name}
		ds := &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: metav1.NamespaceSystem, Labels: labels},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						HostNetwork:       true,
						PriorityClassName: "system-node-critical",
						NodeSelector:      map[string]string{corev1.LabelOSStable: string(corev1.Linux)},
						Tolerations:       []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
						InitContainers:    addOnContainers(a.init),
						Containers:        addOnContainers(a.main),
					},
				},
			},
		}
		out = append(out, ds)
	}
	return out
}

func addOnContainers(cs []addOnContainer) []corev1.Container {
	out := make([]corev1.Container, 0, len(cs))
	for _, c := range cs {
		out = append(out, corev1.Container{
			Name:      c.name,
			Image:     "registry.example.com/eks/" + c.name + ":simulated",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(c.cpu)}},
		})
	}
	return out
}

// RunAddOns creates the simulated cloud's add-on DaemonSets (AddOnDaemonSets);
// those that exist are left as they are.
func RunAddOns(ctx context.Context, c client.Client, cloud sizing.Cloud) error {
	for _, ds := range AddOnDaemonSets(cloud) {
		if err := c.Create(ctx, ds); err != nil && !kerrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
