package decision

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
)

// Nodes is the decision on the pool's nodes: their size, their
// architecture and the objects that provision them.
type Nodes struct {
	// Size is the sizing decision; nil when the pool was not sized.
	Size *sizing.Result
	Arch archChoice
	// NodePoolName and NodeClassName name the objects that provision the
	// nodes, for status.
	NodePoolName, NodeClassName string
}

// overhead is the per-node requests of the pool's DaemonSets: a warmup pod
// per image, and the storage agent.
func overhead(spec poolv1alpha1.PoolSpec, images int) []sizing.PodRequests {
	helper := sizing.Resources{CPU: k8sresource.MustParse("5m"), Memory: k8sresource.MustParse("16Mi")}
	out := make([]sizing.PodRequests, 0, images+1)
	for range images {
		out = append(out, sizing.PodRequests{Init: []sizing.Resources{helper, helper}, Containers: []sizing.Resources{helper}})
	}
	if sa := spec.StorageAgent; sa != nil && sa.Enabled {
		out = append(out, sizing.PodRequests{Containers: []sizing.Resources{storageResources(sa)}})
	}
	return out
}

// eksAddOnDaemonSets are the DaemonSet pods an EKS cluster's default add-ons
// run on every node, each tolerating every taint, with their default
// requests: kube-proxy 100m (the EKS kube-proxy add-on's DaemonSet), and
// aws-node, the Amazon VPC CNI, 25m for its aws-node container and 25m for
// aws-eks-nodeagent (amazon-vpc-cni-k8s config/master/aws-k8s-cni.yaml).
// Neither requests memory.
var eksAddOnDaemonSets = []v1beta1.NodeDaemonSet{
	{Name: "kube-proxy", CPU: "100m"},
	{Name: "aws-node", CPU: "50m"},
}

// clusterDaemonSets are the cluster's own DaemonSet pods on every pool
// node: sizing.nodeDaemonSets, else the defaults of the cluster's add-ons
// (EKS with Karpenter, or a kwok cluster that simulates it; EKS Auto Mode
// runs its networking outside pods).
func clusterDaemonSets(cfg *v1beta1.Input, d Detection, simulated sizing.Cloud) []v1beta1.NodeDaemonSet {
	if cfg != nil && cfg.Sizing != nil && cfg.Sizing.NodeDaemonSets != nil {
		return cfg.Sizing.NodeDaemonSets
	}
	if d.Method == methodNodeGroup && d.Cloud == cloudAWS {
		return eksAddOnDaemonSets // the same add-ons on an EKS managed node group
	}
	if d.Method == methodKarpenter && (d.Cloud == cloudAWS || d.Cloud == cloudKWOK && simulated == sizing.CloudAWS) {
		return eksAddOnDaemonSets
	}
	return nil
}

// vmMemoryOverhead is sizing.vmMemoryOverheadPercent as a share; ok is
// false when it is unset (the cloud's Karpenter provider default applies)
// or invalid (ValidateInput refuses it).
func vmMemoryOverhead(s *v1beta1.Sizing) (float64, bool) {
	if s == nil || s.VMMemoryOverheadPercent == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s.VMMemoryOverheadPercent, 64)
	if err != nil || v < 0 || v >= 1 {
		return 0, false
	}
	return v, true
}

// sizeInput gathers the sizing request, and decides the architecture of a
// pool sized from the catalog.
func sizeInput(in Input, f Facts, images int) (SizeRequest, archChoice) {
	si := SizeRequest{
		Input: sizing.Input{
			Cloud:            sizing.Cloud(f.Detection.Cloud),
			ExecutorsPerNode: f.PerNode,
			Previous:         in.Previous.DerivedInstanceType,
			ExecutorsHaveRun: f.ExecutorsHaveRun,
			Overhead:         sizing.Overhead{DaemonSets: overhead(in.Spec, images)},
			SpotNeighbours:   in.Config.Karpenter != nil && in.Config.Karpenter.SpotNeighbourGenerations,
			PinnedStandIns:   in.Config.Karpenter != nil && in.Config.Karpenter.PinnedTypeStandIns,
		},
		Method:           f.Detection.Method,
		InstanceFamilies: f.Tenant.InstanceFamilies, // tenancy (tenant.go)
	}
	if ic := in.Spec.InstanceConfig; ic != nil {
		si.InstanceType, si.InstanceFamily = ic.InstanceType, ic.InstanceFamily
		si.AutoUpgrade, si.Spot = ic.AutoUpgrade, ic.SpotEnabled
		si.SpotNeighbours = si.SpotNeighbours || ic.SpotNeighbourGenerations
		si.AllowMetal = ic.AllowMetal
	}
	if pct, ok := vmMemoryOverhead(in.Config.Sizing); ok && f.Detection.Cloud != cloudKWOK {
		// The simulated clouds' nodes offer what the provider's default
		// predicts (sizing.KWOKInstanceTypesJSON), so only real clouds
		// take the setting.
		si.Overhead.VMMemoryOverheadPercent = &pct
	}
	for _, d := range clusterDaemonSets(in.Config, f.Detection, in.KWOKCatalog) {
		if r, err := nodeDaemonSetRequests(d); err == nil { // ValidateInput refuses the others
			si.Overhead.DaemonSets = append(si.Overhead.DaemonSets, sizing.PodRequests{Containers: []sizing.Resources{r}})
		}
	}
	arch := architecture(in, f.Attached, string(si.Cloud), si.Previous, si.ExecutorsHaveRun)
	si.Arch = arch.Arch
	if r := in.Spec.InheritNodeConfigFrom; r != nil {
		si.Inherit = &sizing.Inherited{
			QueryService: RefNamespace(r.Namespace, in.Namespace) + "/" + r.Name,
			InstanceType: InheritedType(in, f.Tenant), // consent (tenancy.go)
		}
	}
	si.Executors = make([]sizing.Executor, 0, len(f.Attached))
	for _, a := range f.Attached {
		r := a.QS.Spec.Executor.Resources
		e := sizing.Executor{QueryService: a.Key()}
		if r.CPU != nil {
			e.CPU = r.CPU.DeepCopy()
		}
		if r.Memory != nil {
			e.Memory = r.Memory.DeepCopy()
		}
		si.Executors = append(si.Executors, e)
	}
	return si, arch
}

// decideNodes sizes the pool, then decides its Karpenter NodePool and
// NodeClass or its cloud node pool. A pool on existing nodes gets none,
// and is sized only to report compatibility when the Pool names a type.
func decideNodes(in Input, f Facts, images int) (Nodes, Outcome) {
	var (
		n Nodes
		o Outcome
	)
	if f.Static && len(in.Spec.NodeSelector) == 0 {
		msg := fmt.Sprintf("the cluster provisions nodes with %s, which burstpool does not manage for this pool: set spec.nodeSelector to pick the pool's nodes (or spec.provisioning.manageNodePool to create them)", f.Detection.Method)
		if strings.Contains(f.Detection.Source, "nodeGroups") {
			msg += "; " + f.Detection.Source // node groups that wait for their provider (nodeGroupCloud, detect.go)
		}
		o.Problem = pending("NodeSelectorRequired", msg)
		return n, o
	}
	si, arch := sizeInput(in, f, images)
	n.Arch = arch
	if f.Static {
		o.condition(CondProvisioned, metav1.ConditionTrue, "ExistingNodes", fmt.Sprintf(
			"pool pods run on existing nodes that match spec.nodeSelector and carry the pool's labels: label them with %s",
			nodeCommands(in.Pool, in.Namespace, selectorString(in.Spec.NodeSelector))))
		if si.InstanceType != "" {
			if res, err := in.Size(si); err == nil {
				n.Size = &res
			}
		}
		return n, o
	}
	if si.InstanceType == "" && si.Inherited().InstanceType == "" && len(si.Executors) == 0 && si.Previous == "" && si.InstanceFamily == "" {
		o.Problem = pending("NoInstanceType", "no QueryService is attached and spec.instanceConfig names no instance type: attach a QueryService or set spec.instanceConfig.instanceType")
		o.preserve(nodeObjects...)
		return n, o
	}
	if inh := si.Inherited(); inh.QueryService != "" && inh.InstanceType == "" && si.InstanceType == "" {
		o.Problem = pending("InheritedQueryServiceMissing", fmt.Sprintf("spec.inheritNodeConfigFrom names QueryService %s, which does not exist, sets no spec.executor.instanceType, does not name this pool in spec.executor.poolRef, or is in a namespace the settings do not let this pool attach from (tenancy.namespaces[].attachFrom)", inh.QueryService))
		o.preserve(nodeObjects...)
		return n, o
	}
	res, err := in.Size(si)
	if err != nil {
		o.Problem = failed("SizingFailed", fmt.Sprintf("cannot size pool %q: %v", in.Pool, err))
		o.preserve(append(slices.Clone(nodeObjects), objects.ComposedPlaceholder, objects.ComposedPlaceholderPriorityClass, objects.ComposedBuffer, objects.ComposedBufferTemplate)...)
		return n, o
	}
	n.Size = &res
	events := sizeEvents(in, f, res)
	if isKarpenter(f.Detection.Method) {
		n.NodePoolName, n.NodeClassName, o = decideKarpenter(in, f, si.Spot, res, images)
		if o.Problem == nil {
			events = append(events, archWarnings(in.Spec, arch, res)...)
		}
	} else if f.Detection.Method == methodNodeGroup {
		res = nodeGroupSize(f.Detection.Cloud, res, si.Spot) // nodegroup.go
		n.Size = &res
		n.NodePoolName, o = decideNodeGroup(in, f, res, si.Spot)
	} else {
		n.NodePoolName, o = decideCloudNodePool(in, f, res)
	}
	o.Results = append(events, o.Results...)
	return n, o
}

// archWarnings reports an architecture that a pinned type or family
// overrides, and attached QueryServices that declare another one.
func archWarnings(spec poolv1alpha1.PoolSpec, arch archChoice, res sizing.Result) []Result {
	var out []Result
	if ic := spec.InstanceConfig; ic != nil && ic.Architecture != "" && res.Arch != "" && ic.Architecture != res.Arch {
		out = append(out, Result{Warning: true, Reason: "ArchitectureOverridden", Message: fmt.Sprintf("spec.instanceConfig.architecture is %s but the pool's instance type %s is %s: the type decides; make them agree", ic.Architecture, res.InstanceType, res.Arch)})
	}
	if arch.Conflict != "" && arch.Arch == res.Arch {
		out = append(out, Result{Warning: true, Reason: "ArchitectureConflict", Message: fmt.Sprintf("the pool's nodes are %s (from %s); %s declare another architecture and may not run on them", res.Arch, arch.From, arch.Conflict)})
	}
	return out
}

// sizeEvents reports changes of the pool's instance type.
func sizeEvents(in Input, f Facts, res sizing.Result) []Result {
	var out []Result
	prev := in.Previous.DerivedInstanceType
	switch {
	case res.Upgraded && prev != res.InstanceType:
		out = append(out, Result{Reason: "InstanceTypeUpgraded", Message: fmt.Sprintf("the pool moves from %s to %s to fit its QueryServices (%s)", prev, res.InstanceType, res.DerivedFrom)})
	case prev != res.InstanceType:
		out = append(out, Result{Reason: "InstanceTypeDerived", Message: fmt.Sprintf("the pool's nodes are %s (from %s)", res.InstanceType, res.DerivedFrom)})
	default:
		return nil
	}
	epn := f.PerNode
	if res.PerNode > 0 && res.PerNode != int64(epn) && res.Kept == "" {
		advice := fmt.Sprintf("no %s instance type holds exactly %d; set spec.executorsPerNode to %d", f.Detection.Cloud, epn, res.PerNode)
		ic := in.Spec.InstanceConfig
		if ic != nil && ic.InstanceFamily != "" {
			advice = fmt.Sprintf("no %s size holds exactly %d; set spec.executorsPerNode to %d or choose another family", ic.InstanceFamily, epn, res.PerNode)
		}
		if (ic != nil && ic.InstanceType != "") || in.Spec.InheritNodeConfigFrom != nil {
			advice = fmt.Sprintf("the type is pinned; set spec.executorsPerNode to %d so executor slots match the nodes, or pin a type that holds %d", res.PerNode, epn)
		}
		out = append(out, Result{Warning: true, Reason: "ExecutorsPerNodeInexact", Message: fmt.Sprintf("one %s node holds %d executors of the largest compatible QueryService, not spec.executorsPerNode (%d): %s", res.InstanceType, res.PerNode, epn, advice)})
	}
	return out
}

// labelArgs are kubectl label's arguments that give a node the pool's
// identity labels.
func labelArgs(pool, ns string) string {
	return strings.ReplaceAll(selectorString(objects.Identity(pool, ns)), ",", " ")
}

// nodeCommands are the kubectl commands that make the existing nodes
// selected by sel the pool's: its identity labels, then its NoExecute
// identity taint, which evicts every pod on them that does not tolerate it
// (the pool's own pods do) and keeps off pods bound by spec.nodeName.
func nodeCommands(pool, ns, sel string) string {
	var taints []string
	for _, t := range cloudpool.IdentityTaints(pool, ns) {
		if t.Effect == corev1.TaintEffectNoExecute {
			taints = append(taints, t.ToString())
		}
	}
	return fmt.Sprintf("kubectl label nodes -l %s %s, then taint them (which evicts their pods that are not the pool's): kubectl taint nodes -l %s %s",
		sel, labelArgs(pool, ns), sel, strings.Join(taints, " "))
}

// nodeObjects are the objects that provision the pool's nodes.
var nodeObjects = []resource.Name{objects.ComposedNodePool, objects.ComposedNodeClass, objects.ComposedCloudPool, objects.ComposedCloudPoolDraining}
