package devplane

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// SystemNodes are the kwok nodes, in two zones and carrying no pool label,
// that package Deployments run on where Crossplane's Deployment runtime
// runs them (the provider's two replicas spread over hosts, and never onto
// pool nodes: deploy/provider/runtimeconfig.yaml). kwok reports their pods
// Running, so Crossplane sees the Deployment Available.
var SystemNodes = []string{"system-a", "system-b"}

// AddSystemNodes creates SystemNodes.
func AddSystemNodes(ctx context.Context, c client.Client) error {
	rl := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	key, value, _ := strings.Cut(localcp.KwokNodeAnnotation, "=")
	for i, name := range SystemNodes {
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{key: value},
				Labels: map[string]string{
					corev1.LabelHostname: name, corev1.LabelTopologyZone: fmt.Sprintf("zone-%c", 'a'+i),
					corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux", "type": "kwok",
				},
			},
			Status: corev1.NodeStatus{Capacity: rl, Allocatable: rl},
		}
		if err := c.Create(ctx, n); err != nil && !kerrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot create system node %s: %w", name, err)
		}
	}
	return nil
}
