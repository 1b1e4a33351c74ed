package objects

// The node IAM objects of an AWS pool: its node role, one policy
// attachment per policy, its EKS access entry and the ClusterUsages that
// keep them while its NodePool exists, for Upbound's provider-aws family
// (v1.23.0).
//
// The objects are built unstructured and checked against provider-aws's
// CRDs (test/crds/upstream, test/harness/schemacheck) instead of built from its
// Go API types (apis/iam/v1beta1, apis/eks/v1beta1). Measured with Go 1.26
// on two shared cores: a program that only names one iam Role and one eks
// AccessEntry builds to 59.3 MB from 865 packages in 4m02s (848 MB peak
// RSS), pulling in upjet, the Terraform plugin SDK and crossplane-runtime
// v1.17; the same program on unstructured objects is 10.9 MB from 267
// packages, 16s (207 MB). With this module's controller-runtime v0.23.1 the
// typed program does not build at all: crossplane-runtime v1.17.0, which
// provider-aws v1.23.0 requires, lacks the Apply method controller-runtime
// v0.23's SubResourceWriter has.

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// Composed-resource names of the node IAM objects. A policy attachment is
// named after a hash of its policy ARN, so reordering the list keeps it.
const (
	ComposedNodeRole           resource.Name = "node-iam-role"
	ComposedNodeAccessEntry    resource.Name = "node-iam-access-entry"
	ComposedNodePolicyPrefix                 = "node-iam-policy-"
	ComposedNodeIAMUsagePrefix               = "node-iam-usage-"
)

// API versions and kinds of the node IAM objects.
const (
	iamAPIVersion   = "iam.aws.upbound.io/v1beta1"
	eksAPIVersion   = "eks.aws.upbound.io/v1beta1"
	UsageAPIVersion = "protection.crossplane.io/v1beta1"
	kindRole        = "Role"
	KindAttachment  = "RolePolicyAttachment"
	KindAccessEntry = "AccessEntry"
	KindUsage       = "ClusterUsage"

	// AnnotationExternalName is the name a managed resource has in the
	// cloud.
	AnnotationExternalName = "crossplane.io/external-name"
	// AnnotationNodeRole carries the node role on NodeClasses without a
	// role field (the KWOKNodeClass of the simulated AWS).
	AnnotationNodeRole = "e6data.io/node-role"
)

// DefaultNodePolicyARNs are the policies a Karpenter node on EKS needs.
var DefaultNodePolicyARNs = []string{
	"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
	"arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
	"arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
	"arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
}

// ec2AssumeRolePolicy lets EC2 instances assume the node role.
const ec2AssumeRolePolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

// MaxRoleName is the longest IAM role name AWS accepts.
const MaxRoleName = 64

// PolicyARN matches the ARN of an IAM managed policy, AWS's own or an
// account's, in any partition.
var PolicyARN = regexp.MustCompile(`^arn:aws(-[a-z]+)*:iam::(aws|[0-9]{12}):policy/([\w+=,.@-]+/)*[\w+=,.@-]{1,128}$`)

// NodeRoleName is the IAM name of a new node role of pool ns/pool:
// {clusterName}.{ns}.{pool}-node, cut and suffixed with a hash of the three
// when longer than IAM allows (uniqueName). Neither an EKS cluster name nor
// a namespace holds a dot, so two pools' names never collide: a role is
// the account's, and pools of one name in two namespaces (a remote pool's
// among them) must not share one.
func NodeRoleName(cluster, ns, pool string) string {
	n := cluster + "." + ns + "." + pool + "-node"
	if len(n) <= MaxRoleName {
		return n
	}
	return UniqueName(n, MaxRoleName, cluster, ns, pool)
}

// iamName is the name of a new node IAM object of pool ns/pool: the
// namespace, a dot (which no namespace holds) and the pool's name with
// suffix, so pools of one name in two namespaces never share one.
func iamName(ns, pool, suffix string) string {
	return ns + "." + pool + suffix
}

// NodeIAMArgs is everything a pool's node IAM objects are made of.
type NodeIAMArgs struct {
	Pool, Namespace     string
	ClusterName, Region string
	Settings            v1beta1.NodeIAM
	// Role is the IAM name of the node role.
	Role string
	// Observed are the pool's observed objects: one that exists keeps
	// its name (keptName).
	Observed map[resource.Name]*structpb.Struct
}

// NamedObject is a composed object by its composed-resource name.
type NamedObject struct {
	Name   resource.Name
	Object *unstructured.Unstructured
}

// NodePolicyARNs are the policies a pool's node role gets: the settings'
// list (or the defaults) and the extras, each once.
func NodePolicyARNs(n v1beta1.NodeIAM) []string {
	base := n.PolicyARNs
	if len(base) == 0 {
		base = DefaultNodePolicyARNs
	}
	var out []string
	for _, a := range append(slices.Clone(base), n.ExtraPolicyARNs...) {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// NodeIAMObjects are a pool's node role, its policy attachments and its
// EKS access entry, in that order.
func NodeIAMObjects(a NodeIAMArgs) []NamedObject {
	labels := Identity(a.Pool, a.Namespace)
	tags := func() map[string]any {
		t := StringMap(a.Settings.Tags)
		t[qsv1alpha1.LabelPool] = a.Pool
		return t
	}
	roleMR := KeptName(a.Observed, ComposedNodeRole, iamName(a.Namespace, a.Pool, "-node-role"))
	withProvider := func(u *unstructured.Unstructured, forProvider map[string]any) *unstructured.Unstructured {
		spec := map[string]any{"forProvider": forProvider}
		if p := a.Settings.ProviderConfigName; p != "" {
			spec["providerConfigRef"] = map[string]any{"name": p}
		}
		u.Object["spec"] = spec
		return u
	}

	role := New(iamAPIVersion, kindRole, roleMR, "", labels)
	role.SetAnnotations(map[string]string{AnnotationExternalName: a.Role})
	fp := map[string]any{
		"assumeRolePolicy": ec2AssumeRolePolicy,
		"description":      fmt.Sprintf("Nodes of burstpool pool %s in cluster %s", Qualified(a.Namespace, a.Pool), a.ClusterName),
		"tags":             tags(),
	}
	if b := a.Settings.PermissionsBoundary; b != "" {
		fp["permissionsBoundary"] = b
	}
	out := []NamedObject{{ComposedNodeRole, withProvider(role, fp)}}

	for _, arn := range NodePolicyARNs(a.Settings) {
		h := ARNHash(arn)
		n := resource.Name(ComposedNodePolicyPrefix + h)
		att := New(iamAPIVersion, KindAttachment, KeptName(a.Observed, n, iamName(a.Namespace, a.Pool, "-node-policy-"+h)), "", labels)
		out = append(out, NamedObject{n, withProvider(att, map[string]any{
			"policyArn": arn,
			"roleRef":   map[string]any{"name": roleMR},
		})})
	}

	entry := New(eksAPIVersion, KindAccessEntry, KeptName(a.Observed, ComposedNodeAccessEntry, iamName(a.Namespace, a.Pool, "-node-access")), "", labels)
	out = append(out, NamedObject{ComposedNodeAccessEntry, withProvider(entry, map[string]any{
		"clusterName":             a.ClusterName,
		"region":                  a.Region,
		"type":                    "EC2_LINUX",
		"principalArnFromRoleRef": map[string]any{"name": roleMR},
		"tags":                    tags(),
	})})
	return out
}

// NodeIAMUsages are the ClusterUsages that keep each node IAM object while
// the pool's NodePool exists: Crossplane refuses to delete an object in
// use, and replays the deletion once the NodePool (and, with foreground
// deletion, its nodes) is gone. A usage in observed keeps its name.
func NodeIAMUsages(pool, ns, nodePool string, iam []NamedObject, observed map[resource.Name]*structpb.Struct) []NamedObject {
	out := make([]NamedObject, 0, len(iam))
	for _, o := range iam {
		suffix := strings.TrimPrefix(string(o.Name), "node-iam-")
		n := resource.Name(ComposedNodeIAMUsagePrefix + suffix)
		u := New(UsageAPIVersion, KindUsage, KeptName(observed, n, iamName(ns, pool, "-node-iam-"+suffix)), "", Identity(pool, ns))
		u.Object["spec"] = map[string]any{
			"of": map[string]any{
				"apiVersion":  o.Object.GetAPIVersion(),
				"kind":        o.Object.GetKind(),
				"resourceRef": map[string]any{"name": o.Object.GetName()},
			},
			"by": map[string]any{
				"apiVersion":  "karpenter.sh/v1",
				"kind":        "NodePool",
				"resourceRef": map[string]any{"name": nodePool},
			},
			"replayDeletion": true,
		}
		out = append(out, NamedObject{n, u})
	}
	return out
}

// ProviderOf names the family provider that reconciles a node IAM object.
func ProviderOf(u *unstructured.Unstructured) string {
	if u.GetKind() == KindAccessEntry {
		return "provider-aws-eks"
	}
	return "provider-aws-iam"
}

// ARNHash is a short, stable name part for a policy ARN: eight letters
// (a to p, one per half byte of its hash). Letters only, because digits
// make YAML encoders order the composed resources unstably.
func ARNHash(arn string) string {
	h := sha256.Sum256([]byte(arn))
	out := make([]byte, 0, 8)
	for _, b := range h[:4] {
		out = append(out, 'a'+b>>4, 'a'+b&0xf)
	}
	return string(out)
}
