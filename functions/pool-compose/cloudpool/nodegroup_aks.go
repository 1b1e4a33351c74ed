package cloudpool

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// aksNameMax is the longest name of an AKS Linux node pool: 12 lower-case
// letters and digits, starting with a letter (AKS docs, "Create node
// pools": naming rules).
const aksNameMax = 12

// AKSSpotTaint is the taint AKS puts on every node of a Spot node pool
// (AKS docs, "Add an Azure Spot node pool": the pool's nodes carry
// kubernetes.azure.com/scalesetpriority=spot:NoSchedule). The node pool
// lists it so the provider sees no drift, and the pool's pods tolerate it.
var AKSSpotTaint = corev1.Taint{Key: "kubernetes.azure.com/scalesetpriority", Value: "spot", Effect: corev1.TaintEffectNoSchedule}

// aksNodePool builds a provider-azure KubernetesClusterNodePool. With
// enableAutoScaling AKS runs the Cluster Autoscaler on the pool between
// minCount and maxCount; nodeCount is left to it. Spot pools delete their
// evicted nodes (evictionPolicy Delete), so an eviction frees quota and
// the autoscaler can replace them, and pay up to the on-demand price
// (spotMaxPrice -1).
func aksNodePool(in NodeGroupInput, labels map[string]any, taints []corev1.Taint) (*unstructured.Unstructured, error) {
	s := in.Settings.AKS
	if s == nil {
		s = &v1beta1.AKSNodePools{}
	}
	if s.KubernetesClusterID == "" {
		return nil, required("nodeGroups.aks.kubernetesClusterID", "the AKS cluster's Azure resource ID")
	}
	os := s.OSSKU
	if os == "" {
		os = "AzureLinux"
	}
	nodeTaints := make([]any, 0, len(taints)+1)
	for _, t := range taints {
		nodeTaints = append(nodeTaints, t.ToString())
	}
	fp := map[string]any{
		"kubernetesClusterId": s.KubernetesClusterID,
		"vmSize":              in.InstanceTypes[0],
		"mode":                "User",
		"osSku":               os,
		"enableAutoScaling":   true,
		"minCount":            int64(in.MinNodes),
		"maxCount":            int64(in.MaxNodes),
		"nodeLabels":          labels,
		"tags":                nodeGroupTags(in),
		"priority":            "Regular",
	}
	if in.Spot {
		fp["priority"], fp["evictionPolicy"], fp["spotMaxPrice"] = "Spot", "Delete", int64(-1)
		if !slices.Contains(nodeTaints, any(AKSSpotTaint.ToString())) {
			nodeTaints = append(nodeTaints, AKSSpotTaint.ToString())
		}
	}
	fp["nodeTaints"] = nodeTaints
	if s.VNetSubnetID != "" {
		fp["vnetSubnetId"] = s.VNetSubnetID
	}
	if len(s.Zones) > 0 {
		fp["zones"] = toAny(s.Zones)
	}
	return nodeGroupManaged(APIVersionAKSNodePool, KindAKSNodePool, cloudName(in.Name, aksNameMax, true), in, fp, nil), nil
}
