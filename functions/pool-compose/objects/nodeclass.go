package objects

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
)

// NodeClassKind is a NodeClass's API group, version and kind.
type NodeClassKind struct {
	Group, Version, Kind string
}

// The NodeClasses of Karpenter's providers, and of EKS Auto Mode.
var (
	EC2NodeClass  = NodeClassKind{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"}
	EKSNodeClass  = NodeClassKind{Group: "eks.amazonaws.com", Version: "v1", Kind: "NodeClass"}
	GCENodeClass  = NodeClassKind{Group: "karpenter.k8s.gcp", Version: "v1alpha1", Kind: "GCENodeClass"}
	AKSNodeClass  = NodeClassKind{Group: "karpenter.azure.com", Version: "v1beta1", Kind: "AKSNodeClass"}
	KWOKNodeClass = NodeClassKind{Group: "karpenter.kwok.sh", Version: "v1alpha1", Kind: "KWOKNodeClass"}
)

// NodeClassArgs is everything a pool's NodeClass is made of.
type NodeClassArgs struct {
	Pool, Namespace string
	ClusterName     string
	Kind            NodeClassKind
	// LocalNVMe asks AWS for a RAID0 instance store over NVMe disks.
	LocalNVMe bool
	// Images is the number of warm images every node pulls.
	Images int
	Config *v1beta1.Input
	// Kubelet is what the sizing model assumes of the nodes' kubelet.
	Kubelet sizing.Kubelet
}

// NodeClass returns the pool's NodeClass, or an error that names the
// function input field a platform team must set.
func NodeClass(a NodeClassArgs) (*unstructured.Unstructured, error) {
	var (
		spec map[string]any
		err  error
	)
	switch a.Kind.Kind {
	case "EC2NodeClass":
		spec, err = ec2NodeClass(a)
	case "NodeClass":
		spec, err = eksNodeClass(a)
	case "GCENodeClass":
		spec = gceNodeClass(a)
	case "AKSNodeClass":
		spec = aksNodeClass(a)
	case "KWOKNodeClass":
		spec = map[string]any{}
	default:
		err = fmt.Errorf("no NodeClass of kind %q", a.Kind.Kind)
	}
	if err != nil {
		return nil, err
	}
	u := New(a.Kind.Group+"/"+a.Kind.Version, a.Kind.Kind, a.Pool+SuffixNodeClass, "", Identity(a.Pool, a.Namespace))
	u.Object["spec"] = spec
	return u, nil
}

// kubeletConfig is the kubelet block of an EC2NodeClass (spec.kubelet) or
// GCENodeClass (spec.kubeletConfiguration): the maxPods, memory
// kube-reserved (where it is the same on every size, and withReserved) and
// hard eviction threshold the sizing model assumes. CPU kube-reserved
// depends on the size, so it is left to Karpenter's per-type default, which
// the model reproduces.
func kubeletConfig(k sizing.Kubelet, withReserved bool) map[string]any {
	out := map[string]any{}
	if k.MaxPods > 0 {
		out["maxPods"] = int64(k.MaxPods)
	}
	if withReserved && k.KubeReservedMemory > 0 {
		out["kubeReserved"] = map[string]any{"memory": resource.NewQuantity(k.KubeReservedMemory, resource.BinarySI).String()}
	}
	if k.EvictionHardMemory > 0 {
		out["evictionHard"] = map[string]any{"memory.available": resource.NewQuantity(k.EvictionHardMemory, resource.BinarySI).String()}
	}
	return out
}

// WithNodeRole returns the settings with the AWS node role set to role, for
// the EC2NodeClass to name it; the settings themselves stay as they are.
func WithNodeRole(c *v1beta1.Input, role string) *v1beta1.Input {
	if role == "" {
		return c
	}
	out := *c
	aws := v1beta1.AWS{}
	if c.AWS != nil {
		aws = *c.AWS
	}
	aws.Role, aws.InstanceProfile = role, ""
	out.AWS = &aws
	return &out
}

// AnnotateNodeRole records the node role on a NodeClass that has no role
// field (the KWOKNodeClass).
func AnnotateNodeRole(nc *unstructured.Unstructured, role string) {
	if role == "" || nc.GetKind() == "EC2NodeClass" {
		return
	}
	a := nc.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationNodeRole] = role
	nc.SetAnnotations(a)
}
