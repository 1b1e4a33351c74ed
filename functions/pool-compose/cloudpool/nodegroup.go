package cloudpool

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// MethodNodeGroup composes the cloud's node group, which the cluster's
// Cluster Autoscaler scales: BuildNodeGroup.
const MethodNodeGroup = "node-group"

// Clouds BuildNodeGroup composes a node group on.
const (
	CloudAWS   = "aws"
	CloudGCP   = "gcp"
	CloudAzure = "azure"
)

// API versions and kinds of the node group managed resources: the storage
// versions of Upbound's provider families (provider-aws v1.23.0,
// provider-gcp v1.14.0, provider-azure v1.13.0), served without a
// conversion webhook.
const (
	APIVersionEKSNodeGroup = "eks.aws.upbound.io/v1beta1"
	KindEKSNodeGroup       = "NodeGroup"
	APIVersionGKENodePool  = "container.gcp.upbound.io/v1beta1"
	KindGKENodePool        = "NodePool"
	APIVersionAKSNodePool  = "containerservice.azure.upbound.io/v1beta1"
	KindAKSNodePool        = "KubernetesClusterNodePool"
)

// annotationExternalName names a managed resource's object in the cloud
// (crossplane-runtime pkg/meta, AnnotationKeyExternalName).
const annotationExternalName = "crossplane.io/external-name"

// TaintHold keeps the Cluster Autoscaler from adding nodes to a node group
// that is suspended or drains: it is on the group's node template, no pool
// pod tolerates it, so a scale-up simulation never finds a pod the new node
// would run, while the group's nodes, which still run executors, stay until
// they are empty.
const TaintHold = "e6data.io/hold"

// NodeGroupInput is everything BuildNodeGroup needs to describe one node
// group.
type NodeGroupInput struct {
	// Pool and Namespace are the pool's; its nodes carry them as labels and
	// taints.
	Pool, Namespace string

	// Cloud is CloudAWS, CloudGCP or CloudAzure.
	Cloud string

	// Name is the managed resource's name. The cloud's name for the group
	// (its external name) is derived from it, within the cloud's limits.
	Name string

	// InstanceTypes are the node types, the first the one the pool was
	// sized for. Only EKS takes several (a diversified spot set); the
	// others use the first.
	InstanceTypes []string

	// Archs are the architectures (amd64 or arm64) of instance types, by
	// type, holding at least the group's: EKS's AMI type follows the
	// architecture the group's types share, and a group whose types do
	// not share one is refused.
	Archs map[string]string

	// Spot asks for spot capacity.
	Spot bool

	// MinNodes and MaxNodes bound the autoscaler.
	MinNodes, MaxNodes int32

	// Labels and Taints are put on the pool's nodes, beside its identity
	// labels and taints (IdentityTaints), which are added when missing.
	Labels map[string]string
	Taints []corev1.Taint

	// Hold puts TaintHold on the group: the autoscaler adds no node to it.
	Hold bool

	// Settings are the platform's node group settings.
	Settings v1beta1.NodeGroups

	// ClusterName is the settings' clusterName, the default cluster of EKS
	// and GKE.
	ClusterName string
}

// BuildNodeGroup returns the node group managed resource for in. Its error
// names the setting or field that is missing and says what to set.
func BuildNodeGroup(in NodeGroupInput) (*unstructured.Unstructured, error) {
	if err := validateNodeGroup(in); err != nil {
		return nil, err
	}
	taints := poolTaints(Input{Pool: in.Pool, Namespace: in.Namespace, Taints: in.Taints})
	if in.Hold {
		taints = append(taints, corev1.Taint{Key: TaintHold, Value: "true", Effect: corev1.TaintEffectNoSchedule})
	}
	labels := nodeLabels(Input{Pool: in.Pool, Namespace: in.Namespace, Labels: in.Labels})
	var (
		u   *unstructured.Unstructured
		err error
	)
	switch in.Cloud {
	case CloudAWS:
		u, err = eksNodeGroup(in, labels, taints)
	case CloudGCP:
		u, err = gkeNodePool(in, labels, taints)
	case CloudAzure:
		u, err = aksNodePool(in, labels, taints)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "cannot build the %s node group of pool %q", in.Cloud, in.Pool)
	}
	u.SetName(in.Name)
	u.SetLabels(objectLabels(Input{Pool: in.Pool, Namespace: in.Namespace}))
	return u, nil
}

// validateNodeGroup checks what every cloud needs.
func validateNodeGroup(in NodeGroupInput) error {
	switch {
	case in.Pool == "":
		return errors.New("Pool is empty: set it to the pool's name")
	case in.Name == "":
		return errors.New("Name is empty: set it to the node group object's name")
	case !slices.Contains([]string{CloudAWS, CloudGCP, CloudAzure}, in.Cloud):
		return errors.Errorf("Cloud %q has no node group: use %q, %q or %q", in.Cloud, CloudAWS, CloudGCP, CloudAzure)
	case len(in.InstanceTypes) == 0 || in.InstanceTypes[0] == "":
		return errors.Errorf("InstanceTypes is empty: set it to the node type of pool %q", in.Pool)
	case in.MaxNodes < 1:
		return errors.Errorf("MaxNodes is %d: set it to at least 1", in.MaxNodes)
	case in.MinNodes < 0 || in.MinNodes > in.MaxNodes:
		return errors.Errorf("MinNodes is %d: set it between 0 and MaxNodes (%d)", in.MinNodes, in.MaxNodes)
	}
	return nil
}

// nodeGroupManaged wraps forProvider (and initProvider, when not nil) as
// the spec of a node group managed resource named external in the cloud.
func nodeGroupManaged(apiVersion, kind, external string, in NodeGroupInput, forProvider, initProvider map[string]any) *unstructured.Unstructured {
	spec := map[string]any{"forProvider": forProvider, "managementPolicies": managementPolicies}
	if initProvider != nil {
		spec["initProvider"] = initProvider
	}
	if n := in.Settings.ProviderConfigName; n != "" {
		spec["providerConfigRef"] = map[string]any{"name": n}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}}
	u.SetAnnotations(map[string]string{annotationExternalName: external})
	return u
}

// cloudName is name within a cloud's limit of max characters: name itself
// when it fits, else its head and a hash of the whole, so that two long
// names differ. alnum keeps only lower-case letters and digits, starting
// with a letter (AKS's node pool names).
func cloudName(name string, maxLen int, alnum bool) string {
	sum := sha256.Sum256([]byte(name))
	h := hex.EncodeToString(sum[:])
	if alnum {
		return "bp" + h[:maxLen-2]
	}
	if len(name) <= maxLen {
		return name
	}
	return strings.TrimRight(name[:maxLen-9], "-") + "-" + h[:8]
}

// nodeGroupTags are the cloud tags every node group carries.
func nodeGroupTags(in NodeGroupInput) map[string]any {
	t := map[string]any{"burstpool": "true", "e6data-pool": in.Pool}
	if in.Namespace != "" {
		t["e6data-pool-namespace"] = in.Namespace
	}
	return t
}

// upperEffect is a taint effect as the EKS and GKE APIs spell it
// (NoSchedule becomes NO_SCHEDULE).
func upperEffect(e corev1.TaintEffect) string {
	var b strings.Builder
	for i, r := range string(e) {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// upperTaints renders taints as {key, value, effect} with the EKS and GKE
// effects.
func upperTaints(ts []corev1.Taint) []any {
	out := make([]any, 0, len(ts))
	for _, t := range ts {
		out = append(out, map[string]any{"key": t.Key, "value": t.Value, "effect": upperEffect(t.Effect)})
	}
	return out
}

// required is the error of a setting a cloud's node groups need.
func required(path, what string) error {
	return fmt.Errorf("settings %s is empty: set it to %s", path, what)
}
