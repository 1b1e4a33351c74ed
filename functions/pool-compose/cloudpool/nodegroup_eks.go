package cloudpool

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// eksNameMax is the longest EKS node group name (EKS API CreateNodegroup,
// nodegroupName: up to 63 characters).
const eksNameMax = 63

// Cluster Autoscaler tags on AWS (kubernetes/autoscaler
// cluster-autoscaler/cloudprovider/aws/README.md, "Auto-Discovery Setup"
// and "Scaling a node group to 0"). For a managed node group the autoscaler
// reads the group's labels, taints and tags with DescribeNodegroup
// (cloudprovider/aws/managed_nodegroup_cache.go), so the node-template
// tags on the node group itself give it the template of a group that has
// no node yet.
const (
	caTagEnabled       = "k8s.io/cluster-autoscaler/enabled"
	caTagClusterPrefix = "k8s.io/cluster-autoscaler/"
	caTagLabelPrefix   = "k8s.io/cluster-autoscaler/node-template/label/"
	caTagTaintPrefix   = "k8s.io/cluster-autoscaler/node-template/taint/"
)

// eksAMIType is the EKS-optimised Amazon Linux 2023 image of an
// architecture (EKS API Nodegroup amiType).
func eksAMIType(arch string) string {
	if arch == "arm64" {
		return "AL2023_ARM_64_STANDARD"
	}
	return "AL2023_x86_64_STANDARD"
}

// AMITypeArch is the architecture an EKS AMI type runs on (EKS API
// Nodegroup amiType: the *_ARM_64* types are arm64; the *_x86_64* and
// WINDOWS_* types amd64), "" when the AMI type does not say (CUSTOM, whose
// launch template names the image).
func AMITypeArch(t string) string {
	switch {
	case strings.Contains(t, "ARM_64"):
		return "arm64"
	case strings.Contains(t, "x86_64"), strings.HasPrefix(t, "WINDOWS_"):
		return "amd64"
	}
	return ""
}

// groupArch is the one architecture of a node group's instance types:
// EKS launches every node of a managed node group from one AMI type, of
// one architecture, and refuses a group whose instance types are of
// another (EKS API CreateNodegroup, amiType and instanceTypes).
func groupArch(types []string, archs map[string]string) (string, error) {
	by := map[string][]string{}
	for _, t := range types {
		a := archs[t]
		if a == "" {
			return "", errors.Errorf("the architecture of instance type %s is not known: add it to the settings' catalogOverrides with its arch", t)
		}
		by[a] = append(by[a], t)
	}
	if len(by) > 1 {
		var parts []string
		for _, a := range slices.Sorted(maps.Keys(by)) {
			parts = append(parts, fmt.Sprintf("%s (%s)", strings.Join(by[a], ", "), a))
		}
		return "", errors.Errorf("instance types %s do not share one architecture, and an EKS node group runs one AMI type: offer types of one architecture", strings.Join(parts, " and "))
	}
	return archs[types[0]], nil
}

// eksNodeGroup builds a provider-aws NodeGroup. scalingConfig's minSize
// and maxSize are burstpool's; desiredSize is set once, in initProvider,
// and belongs to the Cluster Autoscaler from then on (Crossplane managed
// resources, "initProvider": fields there are used on create and ignored
// on update, the docs' own example being this desiredSize).
func eksNodeGroup(in NodeGroupInput, labels map[string]any, taints []corev1.Taint) (*unstructured.Unstructured, error) {
	s := in.Settings.EKS
	if s == nil {
		s = &v1beta1.EKSNodeGroups{}
	}
	cluster := s.ClusterName
	if cluster == "" {
		cluster = in.ClusterName
	}
	switch {
	case cluster == "":
		return nil, required("nodeGroups.eks.clusterName (or clusterName)", "the EKS cluster's name")
	case s.Region == "":
		return nil, required("nodeGroups.eks.region", "the EKS cluster's region")
	case len(s.SubnetIDs) == 0:
		return nil, required("nodeGroups.eks.subnetIDs", "the subnets pool nodes run in")
	case s.NodeRoleARN == "":
		return nil, required("nodeGroups.eks.nodeRoleARN", "the IAM role ARN of pool nodes")
	}
	types := in.InstanceTypes[:1]
	capacity := "ON_DEMAND"
	if in.Spot {
		types, capacity = in.InstanceTypes, "SPOT"
	}
	arch, err := groupArch(types, in.Archs)
	if err != nil {
		return nil, err
	}
	amiType := eksAMIType(arch)
	if s.AMIType != "" {
		if a := AMITypeArch(s.AMIType); a != "" && a != arch {
			return nil, errors.Errorf("settings nodeGroups.eks.amiType %s runs on %s, but the group's instance types (%s) are %s: EKS refuses the group; set an AMI type of %s or leave it empty", s.AMIType, a, strings.Join(types, ", "), arch, arch)
		}
		amiType = s.AMIType
	}
	tags := nodeGroupTags(in)
	for k, v := range s.Tags {
		tags[k] = v
	}
	tags[caTagEnabled] = "true"
	tags[caTagClusterPrefix+cluster] = "owned"
	for k, v := range labels {
		tags[caTagLabelPrefix+k] = v
	}
	for _, t := range taints {
		// One tag per key: of the pool's two e6data.io/pool taints the
		// NoExecute one, listed last, is the template's; a pod that
		// tolerates it is a pool pod, which tolerates both.
		tags[caTagTaintPrefix+t.Key] = t.Value + ":" + string(t.Effect)
	}
	fp := map[string]any{
		"region":        s.Region,
		"clusterName":   cluster,
		"nodeRoleArn":   s.NodeRoleARN,
		"subnetIds":     toAny(s.SubnetIDs),
		"instanceTypes": toAny(types),
		"capacityType":  capacity,
		"amiType":       amiType,
		"labels":        labels,
		"taint":         upperTaints(taints),
		"scalingConfig": []any{map[string]any{"minSize": int64(in.MinNodes), "maxSize": int64(in.MaxNodes)}},
		"tags":          tags,
	}
	if s.DiskSizeGiB > 0 {
		fp["diskSize"] = int64(s.DiskSizeGiB)
	}
	ip := map[string]any{"scalingConfig": []any{map[string]any{"desiredSize": int64(in.MinNodes)}}}
	return nodeGroupManaged(APIVersionEKSNodeGroup, KindEKSNodeGroup, cloudName(in.Name, eksNameMax, false), in, fp, ip), nil
}

// toAny is ss as a list of an unstructured object.
func toAny(ss []string) []any {
	out := make([]any, 0, len(ss))
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}
