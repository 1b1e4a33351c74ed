package decision

// Node IAM on AWS: with aws.nodeIAM.enabled (or a pool's
// spec.provisioning.composeNodeIAM), each AWS Karpenter pool composes its
// own node role, one policy attachment per policy and an EKS access entry
// with Upbound's provider-aws family (v1.23.0), and its NodePool waits
// until all of them are Ready. One role per pool, not per cluster: a role
// shared by several pools would need one owner, and deleting that owner
// would take the role from the other pools' running nodes.
//
// Package objects builds the objects themselves (awsiam.go).

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/sizing"
)

// CondNodeIAM reports whether the pool's composed node IAM objects are
// Ready; only pools that compose node IAM have it.
const CondNodeIAM = "NodeIAMReady"

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

// ValidateNodeIAM checks the node IAM settings: every policy ARN must be
// an IAM policy ARN.
func ValidateNodeIAM(n *v1beta1.NodeIAM) []SettingError {
	if n == nil {
		return nil
	}
	var errs []SettingError
	check := func(path, arn string) {
		if !objects.PolicyARN.MatchString(arn) {
			errs = append(errs, SettingError{Path: path, Message: fmt.Sprintf("%q is not an IAM policy ARN such as %s", arn, objects.DefaultNodePolicyARNs[0])})
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

// IAMWaiting says, for each node IAM object that is not Ready, what it
// waits for, in words: not created yet, or the provider's Synced=False or
// Ready=False message. Empty when every object is Ready.
func IAMWaiting(iam []objects.NamedObject, obs map[resource.Name]*structpb.Struct) []string {
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
			out = append(out, what+" has no Ready condition yet: is provider-aws ("+objects.ProviderOf(o.Object)+") installed and running?")
		}
	}
	return out
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

// NodeIAMState is what gateNodeIAM reads: the role, what its objects
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

// gateNodeIAM decides a pool's nodes from its node IAM: a new NodePool
// waits until every IAM object is Ready; an existing NodePool is never
// withdrawn, and an existing NodeClass keeps its role until the new one is
// Ready.
func gateNodeIAM(st NodeIAMState) NodeIAMDecision {
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

// observedNodeClassRole is the role an observed NodeClass names.
func observedNodeClassRole(o *structpb.Struct) string {
	if r := observed.String(o, "spec", "role"); r != "" {
		return r
	}
	return observed.String(o, "metadata", "annotations", objects.AnnotationNodeRole)
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
	role := observed.String(in.Observed[objects.ComposedNodeRole], "metadata", "annotations", objects.AnnotationExternalName)
	if role == "" {
		role = objects.NodeRoleName(cfg.ClusterName, in.Namespace, in.Pool)
	}
	args := objects.NodeIAMArgs{Pool: in.Pool, Namespace: in.Namespace, ClusterName: cfg.ClusterName, Role: role, Observed: in.Observed}
	if cfg.AWS != nil && cfg.AWS.NodeIAM != nil {
		args.Settings = *cfg.AWS.NodeIAM
	}
	if cfg.Provisioning != nil {
		args.Region = cfg.Provisioning.Region
	}
	iam := objects.NodeIAMObjects(args)
	for _, obj := range iam {
		o.desire(obj.Name, obj.Object, observed.Ready(in.Observed[obj.Name], false), true)
	}
	usagesExist := false
	for n := range in.Observed {
		usagesExist = usagesExist || strings.HasPrefix(string(n), objects.ComposedNodeIAMUsagePrefix)
	}
	d := gateNodeIAM(NodeIAMState{
		Role:           role,
		Waiting:        IAMWaiting(iam, in.Observed),
		NodePoolExists: in.Observed[objects.ComposedNodePool] != nil,
		NodeClassRole:  observedNodeClassRole(in.Observed[objects.ComposedNodeClass]),
		UsagesExist:    usagesExist,
	})
	if d.Usages {
		for _, u := range objects.NodeIAMUsages(in.Pool, in.Namespace, in.Pool+objects.SuffixNodePool, iam, in.Observed) {
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
