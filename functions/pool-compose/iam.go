package main

// Node IAM on AWS: with aws.nodeIAM.enabled (or a pool's
// spec.provisioning.composeNodeIAM), each AWS Karpenter pool composes its
// own node role, one policy attachment per policy and an EKS access entry
// with Upbound's provider-aws family (v1.23.0), and its NodePool waits
// until all of them are Ready. One role per pool, not per cluster: a role
// shared by several pools would need one owner, and deleting that owner
// would take the role from the other pools' running nodes.
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
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/sizing"
)

// CondNodeIAM reports whether the pool's composed node IAM objects are
// Ready; only pools that compose node IAM have it.
const CondNodeIAM = "NodeIAMReady"

// Composed-resource names of the node IAM objects. A policy attachment is
// named after a hash of its policy ARN, so reordering the list keeps it.
const (
	rnNodeRole        resource.Name = "node-iam-role"
	rnNodeAccessEntry resource.Name = "node-iam-access-entry"
	rnNodePolicy                    = "node-iam-policy-"
	rnNodeIAMUsage                  = "node-iam-usage-"
)

// API versions and kinds of the node IAM objects.
const (
	iamAPIVersion   = "iam.aws.upbound.io/v1beta1"
	eksAPIVersion   = "eks.aws.upbound.io/v1beta1"
	usageAPIVersion = "protection.crossplane.io/v1beta1"
	kindRole        = "Role"
	kindAttachment  = "RolePolicyAttachment"
	kindAccessEntry = "AccessEntry"
	kindUsage       = "ClusterUsage"

	// annotationExternalName is the name a managed resource has in the
	// cloud.
	annotationExternalName = "crossplane.io/external-name"
	// annotationNodeRole carries the node role on NodeClasses without a
	// role field (the KWOKNodeClass of the simulated AWS).
	annotationNodeRole = "e6data.io/node-role"
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

// maxRoleName is the longest IAM role name AWS accepts.
const maxRoleName = 64

// policyARN matches the ARN of an IAM managed policy, AWS's own or an
// account's, in any partition.
var policyARN = regexp.MustCompile(`^arn:aws(-[a-z]+)*:iam::(aws|[0-9]{12}):policy/([\w+=,.@-]+/)*[\w+=,.@-]{1,128}$`)

// NodeIAMOn tells whether a pool composes node IAM: its own
// composeNodeIAM when set, else the cluster setting.
func NodeIAMOn(setting *v1beta1.NodeIAM, pool *poolv1alpha1.Provisioning) bool {
	if pool != nil && pool.ComposeNodeIAM != nil {
		return *pool.ComposeNodeIAM
	}
	return setting != nil && setting.Enabled
}

// NodeIAMApplies tells whether node IAM is composed on a cluster: AWS with
// Karpenter, or the local control plane's simulated AWS (kwok sized from
// the AWS catalog).
func NodeIAMApplies(det Detection, kwokCatalog sizing.Cloud) bool {
	if det.Method != methodKarpenter {
		return false
	}
	return det.Cloud == cloudAWS || (det.Cloud == cloudKWOK && kwokCatalog == sizing.CloudAWS)
}

// NodeRoleName is the IAM name of a new node role of pool ns/pool:
// {clusterName}.{ns}.{pool}-node, cut and suffixed with a hash of the three
// when longer than IAM allows (uniqueName). Neither an EKS cluster name nor
// a namespace holds a dot, so two pools' names never collide: a role is
// the account's, and pools of one name in two namespaces (a remote pool's
// among them) must not share one.
func NodeRoleName(cluster, ns, pool string) string {
	n := cluster + "." + ns + "." + pool + "-node"
	if len(n) <= maxRoleName {
		return n
	}
	return objects.UniqueName(n, maxRoleName, cluster, ns, pool)
}

// iamName is the name of a new node IAM object of pool ns/pool: the
// namespace, a dot (which no namespace holds) and the pool's name with
// suffix, so pools of one name in two namespaces never share one.
func iamName(ns, pool, suffix string) string {
	return ns + "." + pool + suffix
}

// ValidateNodeIAM checks the node IAM settings: every policy ARN must be
// an IAM policy ARN.
func ValidateNodeIAM(n *v1beta1.NodeIAM) []SettingError {
	if n == nil {
		return nil
	}
	var errs []SettingError
	check := func(path, arn string) {
		if !policyARN.MatchString(arn) {
			errs = append(errs, SettingError{Path: path, Message: fmt.Sprintf("%q is not an IAM policy ARN such as %s", arn, DefaultNodePolicyARNs[0])})
		}
	}
	for i, a := range n.PolicyARNs {
		check(fmt.Sprintf("aws.nodeIAM.policyARNs[%d]", i), a)
	}
	for i, a := range n.ExtraPolicyARNs {
		check(fmt.Sprintf("aws.nodeIAM.extraPolicyARNs[%d]", i), a)
	}
	if b := n.PermissionsBoundary; b != "" {
		check("aws.nodeIAM.permissionsBoundary", b)
	}
	return errs
}

// NodeIAMSettings adjusts the missing settings of a pool that composes
// node IAM (on): the role is composed, so aws.role is not missing, but the
// role's name and the access entry need clusterName and
// provisioning.region.
func NodeIAMSettings(on bool, c *v1beta1.Input, errs []SettingError) []SettingError {
	if !on {
		return errs
	}
	errs = slices.DeleteFunc(slices.Clone(errs), func(e SettingError) bool { return e.Path == "aws.role" })
	why := "is required to compose node IAM (aws.nodeIAM): "
	if c.ClusterName == "" && !slices.ContainsFunc(errs, func(e SettingError) bool { return e.Path == "clusterName" }) {
		errs = append(errs, SettingError{Path: "clusterName", Message: why + "it names the node role and the EKS cluster of its access entry"})
	}
	if c.Provisioning == nil || c.Provisioning.Region == "" {
		errs = append(errs, SettingError{Path: "provisioning.region", Message: why + "the EKS access entry is made in the cluster's region"})
	}
	return errs
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
	labels := objects.Identity(a.Pool, a.Namespace)
	tags := func() map[string]any {
		t := objects.StringMap(a.Settings.Tags)
		t[qsv1alpha1.LabelPool] = a.Pool
		return t
	}
	roleMR := objects.KeptName(a.Observed, rnNodeRole, iamName(a.Namespace, a.Pool, "-node-role"))
	withProvider := func(u *unstructured.Unstructured, forProvider map[string]any) *unstructured.Unstructured {
		spec := map[string]any{"forProvider": forProvider}
		if p := a.Settings.ProviderConfigName; p != "" {
			spec["providerConfigRef"] = map[string]any{"name": p}
		}
		u.Object["spec"] = spec
		return u
	}

	role := objects.New(iamAPIVersion, kindRole, roleMR, "", labels)
	role.SetAnnotations(map[string]string{annotationExternalName: a.Role})
	fp := map[string]any{
		"assumeRolePolicy": ec2AssumeRolePolicy,
		"description":      fmt.Sprintf("Nodes of burstpool pool %s in cluster %s", qualified(a.Namespace, a.Pool), a.ClusterName),
		"tags":             tags(),
	}
	if b := a.Settings.PermissionsBoundary; b != "" {
		fp["permissionsBoundary"] = b
	}
	out := []NamedObject{{rnNodeRole, withProvider(role, fp)}}

	for _, arn := range NodePolicyARNs(a.Settings) {
		h := arnHash(arn)
		n := resource.Name(rnNodePolicy + h)
		att := objects.New(iamAPIVersion, kindAttachment, objects.KeptName(a.Observed, n, iamName(a.Namespace, a.Pool, "-node-policy-"+h)), "", labels)
		out = append(out, NamedObject{n, withProvider(att, map[string]any{
			"policyArn": arn,
			"roleRef":   map[string]any{"name": roleMR},
		})})
	}

	entry := objects.New(eksAPIVersion, kindAccessEntry, objects.KeptName(a.Observed, rnNodeAccessEntry, iamName(a.Namespace, a.Pool, "-node-access")), "", labels)
	out = append(out, NamedObject{rnNodeAccessEntry, withProvider(entry, map[string]any{
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
		n := resource.Name(rnNodeIAMUsage + suffix)
		u := objects.New(usageAPIVersion, kindUsage, objects.KeptName(observed, n, iamName(ns, pool, "-node-iam-"+suffix)), "", objects.Identity(pool, ns))
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

// IAMWaiting says, for each node IAM object that is not Ready, what it
// waits for, in words: not created yet, or the provider's Synced=False or
// Ready=False message. Empty when every object is Ready.
func IAMWaiting(iam []NamedObject, obs map[resource.Name]*structpb.Struct) []string {
	var out []string
	for _, o := range iam {
		what := o.Object.GetKind() + " " + o.Object.GetName()
		ob := obs[o.Name]
		if ob == nil {
			out = append(out, what+" is not created yet")
			continue
		}
		synced, ready := observed.Condition(ob, "Synced"), observed.Condition(ob, "Ready")
		switch {
		case ready.Status == metav1.ConditionTrue:
			continue
		case synced.Status == metav1.ConditionFalse:
			out = append(out, what+": Synced=False: "+conditionWords(synced))
		case ready.Status != "":
			out = append(out, what+": Ready="+string(ready.Status)+": "+conditionWords(ready))
		default:
			out = append(out, what+" has no Ready condition yet: is provider-aws ("+providerOf(o.Object)+") installed and running?")
		}
	}
	return out
}

// providerOf names the family provider that reconciles a node IAM object.
func providerOf(u *unstructured.Unstructured) string {
	if u.GetKind() == kindAccessEntry {
		return "provider-aws-eks"
	}
	return "provider-aws-iam"
}

// NodeIAMDecision is what a pool composing node IAM does with its nodes.
type NodeIAMDecision struct {
	// ComposeNodes emits the NodePool and NodeClass; false keeps the pool
	// Pending with Condition's message.
	ComposeNodes bool
	// Role is the NodeClass's role: the composed one once Ready; before,
	// the role an existing NodeClass has ("" keeps the settings' role).
	Role string
	// Usages emits the usages that keep the IAM objects while the NodePool
	// exists.
	Usages    bool
	Condition Condition
}

// NodeIAMState is what DecideNodeIAM reads: the role, what its objects
// wait for, and what the pool has already.
type NodeIAMState struct {
	Role    string
	Waiting []string
	// NodePoolExists, NodeClassRole and UsagesExist describe the observed
	// NodePool, the observed NodeClass's spec.role (or its role
	// annotation), and whether usages were composed before.
	NodePoolExists bool
	NodeClassRole  string
	UsagesExist    bool
}

// DecideNodeIAM decides a pool's nodes from its node IAM: a new NodePool
// waits until every IAM object is Ready; an existing NodePool is never
// withdrawn, and an existing NodeClass keeps its role until the new one is
// Ready.
func DecideNodeIAM(st NodeIAMState) NodeIAMDecision {
	if len(st.Waiting) == 0 {
		return NodeIAMDecision{ComposeNodes: true, Role: st.Role, Usages: true, Condition: Condition{
			Type: CondNodeIAM, Status: metav1.ConditionTrue, Reason: "Ready",
			Message: fmt.Sprintf("node IAM role %s, its policy attachments and its EKS access entry are Ready", st.Role),
		}}
	}
	d := NodeIAMDecision{Usages: st.UsagesExist, Condition: Condition{
		Type: CondNodeIAM, Status: metav1.ConditionFalse, Reason: "Waiting",
		Message: fmt.Sprintf("node IAM role %s is not usable yet: %s", st.Role, strings.Join(st.Waiting, "; ")),
	}}
	if !st.NodePoolExists {
		return d
	}
	d.ComposeNodes, d.Role = true, st.NodeClassRole
	return d
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
	a[annotationNodeRole] = role
	nc.SetAnnotations(a)
}

// observedNodeClassRole is the role an observed NodeClass names.
func observedNodeClassRole(o *structpb.Struct) string {
	if r := observed.String(o, "spec", "role"); r != "" {
		return r
	}
	return observed.String(o, "metadata", "annotations", annotationNodeRole)
}

// decideNodeIAM composes the pool's node IAM objects and decides from them
// whether its nodes may be composed; the decision is nil when the pool
// composes no node IAM.
func decideNodeIAM(in Input, f Facts) (*NodeIAMDecision, Outcome) {
	var o Outcome
	cfg := in.Config
	if !composesNodeIAM(in, f) {
		return nil, o
	}
	// A role that exists keeps its IAM name: renaming it replaces the
	// role in AWS.
	role := observed.String(in.Observed[rnNodeRole], "metadata", "annotations", annotationExternalName)
	if role == "" {
		role = NodeRoleName(cfg.ClusterName, in.Namespace, in.Pool)
	}
	args := NodeIAMArgs{Pool: in.Pool, Namespace: in.Namespace, ClusterName: cfg.ClusterName, Role: role, Observed: in.Observed}
	if cfg.AWS != nil && cfg.AWS.NodeIAM != nil {
		args.Settings = *cfg.AWS.NodeIAM
	}
	if cfg.Provisioning != nil {
		args.Region = cfg.Provisioning.Region
	}
	iam := NodeIAMObjects(args)
	for _, obj := range iam {
		o.desire(obj.Name, obj.Object, observed.Ready(in.Observed[obj.Name], false), true)
	}
	usagesExist := false
	for n := range in.Observed {
		usagesExist = usagesExist || strings.HasPrefix(string(n), rnNodeIAMUsage)
	}
	d := DecideNodeIAM(NodeIAMState{
		Role:           role,
		Waiting:        IAMWaiting(iam, in.Observed),
		NodePoolExists: in.Observed[objects.ComposedNodePool] != nil,
		NodeClassRole:  observedNodeClassRole(in.Observed[objects.ComposedNodeClass]),
		UsagesExist:    usagesExist,
	})
	if d.Usages {
		for _, u := range NodeIAMUsages(in.Pool, in.Namespace, in.Pool+objects.SuffixNodePool, iam, in.Observed) {
			o.desire(u.Name, u.Object, in.Observed[u.Name] != nil, true)
		}
	}
	o.condition(d.Condition.Type, d.Condition.Status, d.Condition.Reason, d.Condition.Message)
	if d.Condition.Status == metav1.ConditionFalse && in.PreviousConditions[CondNodeIAM] != d.Condition.Reason {
		o.event(true, "NodeIAMNotReady", d.Condition.Message)
	}
	if !d.ComposeNodes {
		o.Problem = pending("NodeIAMNotReady", d.Condition.Message)
	}
	return &d, o
}

// keepNodeIAM keeps the observed node IAM objects of a pool composing node
// IAM when they were not decided this time (its settings or sizing
// failed), so a transient problem never deletes its role.
func keepNodeIAM(in Input, f Facts) Outcome {
	var o Outcome
	if !composesNodeIAM(in, f) {
		return o
	}
	for _, n := range slices.Sorted(maps.Keys(in.Observed)) {
		if strings.HasPrefix(string(n), "node-iam-") {
			o.preserve(n)
		}
	}
	return o
}

// composesNodeIAM tells whether this pool composes node IAM on its cluster.
func composesNodeIAM(in Input, f Facts) bool {
	var setting *v1beta1.NodeIAM
	if a := in.Config.AWS; a != nil {
		setting = a.NodeIAM
	}
	return NodeIAMOn(setting, in.Spec.Provisioning) && NodeIAMApplies(f.Detection, in.KWOKCatalog)
}

// conditionWords is an observed condition's message, else its reason.
func conditionWords(c metav1.Condition) string {
	switch {
	case c.Message != "" && c.Reason != "":
		return c.Message + " (" + c.Reason + ")"
	case c.Message != "":
		return c.Message
	case c.Reason != "":
		return c.Reason
	}
	return "no message"
}

// arnHash is a short, stable name part for a policy ARN: eight letters
// (a to p, one per half byte of its hash). Letters only, because digits
// make YAML encoders order the composed resources unstably.
func arnHash(arn string) string {
	h := sha256.Sum256([]byte(arn))
	out := make([]byte, 0, 8)
	for _, b := range h[:4] {
		out = append(out, 'a'+b>>4, 'a'+b&0xf)
	}
	return string(out)
}
