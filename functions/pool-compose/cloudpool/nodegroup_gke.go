package cloudpool

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// gkeNameMax is the longest GKE node pool name (GKE API NodePool.name: up
// to 40 characters).
const gkeNameMax = 40

// gkeNodePool builds a provider-gcp NodePool. GKE runs the Cluster
// Autoscaler itself for a node pool with autoscaling; totalMinNodeCount
// and totalMaxNodeCount bound the pool across its zones (GKE API
// NodePoolAutoscaling), as minExecutors and maxExecutors do. The node
// pool's labels and taints are its node template, so GKE scales it from
// zero without further hints. Without nodeCount or initialNodeCount the
// autoscaler owns the count.
func gkeNodePool(in NodeGroupInput, labels map[string]any, taints []corev1.Taint) (*unstructured.Unstructured, error) {
	s := in.Settings.GKE
	if s == nil {
		s = &v1beta1.GKENodePools{}
	}
	cluster := s.Cluster
	if cluster == "" {
		cluster = in.ClusterName
	}
	switch {
	case cluster == "":
		return nil, required("nodeGroups.gke.cluster (or clusterName)", "the GKE cluster's name")
	case s.Location == "":
		return nil, required("nodeGroups.gke.location", "the GKE cluster's region or zone")
	}
	image := s.ImageType
	if image == "" {
		image = "COS_CONTAINERD"
	}
	nc := map[string]any{
		"machineType":    in.InstanceTypes[0],
		"spot":           in.Spot,
		"imageType":      image,
		"labels":         labels,
		"taint":          upperTaints(taints),
		"resourceLabels": gkeResourceLabels(in),
	}
	if s.ServiceAccount != "" {
		nc["serviceAccount"] = s.ServiceAccount
	}
	fp := map[string]any{
		"cluster":  cluster,
		"location": s.Location,
		"autoscaling": []any{map[string]any{
			"totalMinNodeCount": int64(in.MinNodes),
			"totalMaxNodeCount": int64(in.MaxNodes),
			"locationPolicy":    "ANY",
		}},
		"management": []any{map[string]any{"autoRepair": true, "autoUpgrade": true}},
		"nodeConfig": []any{nc},
	}
	if s.Project != "" {
		fp["project"] = s.Project
	}
	if len(s.NodeLocations) > 0 {
		fp["nodeLocations"] = toAny(s.NodeLocations)
	}
	return nodeGroupManaged(APIVersionGKENodePool, KindGKENodePool, cloudName(in.Name, gkeNameMax, false), in, fp, nil), nil
}

// gkeResourceLabels are the node group tags as GCP resource labels, whose
// keys hold no dots or slashes.
func gkeResourceLabels(in NodeGroupInput) map[string]any {
	l := map[string]any{"burstpool": "true", "e6data-pool": in.Pool}
	if in.Namespace != "" {
		l["e6data-pool-namespace"] = in.Namespace
	}
	return l
}
