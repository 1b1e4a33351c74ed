package objects

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// discoveryTag is the tag Karpenter's AWS guides put on a cluster's subnets
// and security groups.
const discoveryTag = "karpenter.sh/discovery"

// selectorTerms renders AWS selector terms, or the discovery-tag default.
func selectorTerms(terms []v1beta1.SelectorTerm, cluster, field string, withName bool) ([]any, error) {
	if len(terms) == 0 {
		if cluster == "" {
			return nil, fmt.Errorf("set %s or clusterName in the EnvironmentConfig, so pool nodes find their subnets and security groups", field)
		}
		return []any{map[string]any{"tags": map[string]any{discoveryTag: cluster}}}, nil
	}
	out := make([]any, 0, len(terms))
	for i, t := range terms {
		m := map[string]any{}
		if len(t.Tags) > 0 {
			m["tags"] = StringMap(t.Tags)
		}
		if t.ID != "" {
			m["id"] = t.ID
		}
		if t.Name != "" {
			if !withName {
				return nil, fmt.Errorf("%s[%d].name is not supported for subnets: use tags or id", field, i)
			}
			m["name"] = t.Name
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s[%d] is empty: set tags, id or name", field, i)
		}
		out = append(out, m)
	}
	return out, nil
}

// tagsOf are the cloud tags of pool nodes.
func tagsOf(pool string, extra map[string]string) map[string]any {
	t := StringMap(extra)
	t[qsv1alpha1.LabelPool] = pool
	return t
}

// networkTerms are the subnet and security group selector terms of a
// NodeClass, from the settings under section (aws or eksAutoMode).
func networkTerms(n v1beta1.NodeNetwork, cluster, section string) (subnetTerms, groupTerms []any, err error) {
	if subnetTerms, err = selectorTerms(n.SubnetSelectorTerms, cluster, section+".subnetSelectorTerms", false); err != nil {
		return nil, nil, err
	}
	if groupTerms, err = selectorTerms(n.SecurityGroupSelectorTerms, cluster, section+".securityGroupSelectorTerms", true); err != nil {
		return nil, nil, err
	}
	return subnetTerms, groupTerms, nil
}

// ec2NodeClass is the spec of a karpenter.k8s.aws/v1 EC2NodeClass.
func ec2NodeClass(a NodeClassArgs) (map[string]any, error) {
	aws := a.Config.AWS
	if aws == nil {
		aws = &v1beta1.AWS{}
	}
	spec := map[string]any{}
	switch {
	case aws.Role != "":
		spec["role"] = aws.Role
	case aws.InstanceProfile != "":
		spec["instanceProfile"] = aws.InstanceProfile
	default:
		return nil, fmt.Errorf("set aws.role (or aws.instanceProfile) in the EnvironmentConfig: pool nodes need an IAM role")
	}
	subnets, sgs, err := networkTerms(aws.NodeNetwork, a.ClusterName, "aws")
	if err != nil {
		return nil, err
	}
	spec["subnetSelectorTerms"] = subnets
	spec["securityGroupSelectorTerms"] = sgs
	spec["amiSelectorTerms"] = []any{map[string]any{"alias": aws.AMIAlias}}
	spec["metadataOptions"] = map[string]any{
		"httpEndpoint":            "enabled",
		"httpProtocolIPv6":        "disabled",
		"httpPutResponseHopLimit": int64(1),
		"httpTokens":              "required",
	}
	spec["tags"] = tagsOf(a.Pool, aws.Tags)
	if k := kubeletConfig(a.Kubelet, true); len(k) > 0 {
		spec["kubelet"] = k
	}
	if a.LocalNVMe {
		spec["instanceStorePolicy"] = "RAID0"
	} else if bdm := imageVolume(aws, a.Images); bdm != nil {
		spec["blockDeviceMappings"] = []any{bdm}
	}
	return spec, nil
}

// defaultEBSVolume is the size, in GiB, of the volume Karpenter gives
// images when a NodeClass names none (its AMI families' default block
// device mapping).
const defaultEBSVolume = 20

// imageVolume is the block device mapping of the volume that holds a
// node's container images, sized for images warm images: the default
// 20Gi plus aws.rootVolumePerImage for each, as gp3, encrypted. It is the
// AMI family's ephemeral block device as Karpenter's AWS provider names it
// (pkg/providers/amifamily: /dev/xvda on AL2023 and AL2, the root volume;
// /dev/xvdb on Bottlerocket, its data volume; /dev/sda1 on Windows), and
// Karpenter takes it as the node's ephemeral-storage. Nil when images is
// 0 or the family is unknown (Karpenter's default then applies).
func imageVolume(aws *v1beta1.AWS, images int) map[string]any {
	per, err := resource.ParseQuantity(aws.RootVolumePerImage)
	if images <= 0 || err != nil {
		return nil
	}
	family, _, _ := strings.Cut(aws.AMIAlias, "@")
	device, root := "", true
	switch {
	case family == "al2023" || family == "al2":
		device = "/dev/xvda"
	case family == "bottlerocket":
		device, root = "/dev/xvdb", false
	case strings.HasPrefix(family, "windows"):
		device = "/dev/sda1"
	default:
		return nil
	}
	gib := defaultEBSVolume + int64(images)*((per.Value()+(1<<30)-1)>>30)
	bdm := map[string]any{
		"deviceName": device,
		"ebs": map[string]any{
			"volumeSize":          fmt.Sprintf("%dGi", gib),
			"volumeType":          "gp3",
			"encrypted":           true,
			"deleteOnTermination": true,
		},
	}
	if root {
		bdm["rootVolume"] = true
	}
	return bdm
}

// eksNodeClass is the spec of an eks.amazonaws.com/v1 NodeClass (EKS Auto
// Mode), with the fields AWS documents: role, subnet and security group
// selector terms, ephemeralStorage, and tags where the cluster role may
// apply them.
func eksNodeClass(a NodeClassArgs) (map[string]any, error) {
	eks := a.Config.EKSAutoMode
	if eks == nil || eks.Role == "" {
		return nil, fmt.Errorf("set eksAutoMode.role in the EnvironmentConfig: EKS Auto Mode nodes need an IAM role")
	}
	subnets, sgs, err := networkTerms(eks.NodeNetwork, a.ClusterName, "eksAutoMode")
	if err != nil {
		return nil, err
	}
	spec := map[string]any{
		"role":                       eks.Role,
		"subnetSelectorTerms":        subnets,
		"securityGroupSelectorTerms": sgs,
		"ephemeralStorage":           map[string]any{"size": eks.EphemeralStorageSize},
	}
	// AWS's managed Auto Mode policies do not let the cluster role apply
	// user-defined tags: a NodeClass with tags is not Ready unless the
	// role was given the tagging permissions (AWS, "Amazon EKS Auto Mode
	// cluster IAM role", "Custom AWS tags for EKS Auto resources"), which
	// eksAutoMode.clusterRoleTags says. Nothing finds pool nodes by tag:
	// the NodePool's labels name the pool.
	if eks.ClusterRoleTags {
		spec["tags"] = tagsOf(a.Pool, eks.Tags)
	}
	return spec, nil
}
