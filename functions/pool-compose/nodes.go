package main

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
)

// overhead is the per-node requests of the pool's DaemonSets.
func (s *state) overhead(images int) []PodRequests {
	helper := Resources{CPU: resource.MustParse("5m"), Memory: resource.MustParse("16Mi")}
	out := make([]PodRequests, 0, images+1)
	for range images {
		out = append(out, PodRequests{Init: []Resources{helper, helper}, Containers: []Resources{helper}})
	}
	if sa := s.in.Spec.StorageAgent; sa != nil && sa.Enabled {
		out = append(out, PodRequests{Containers: []Resources{storageResources(sa)}})
	}
	return out
}

// storageResources are the storage agent's requests.
func storageResources(sa *poolv1alpha1.StorageAgent) Resources {
	r := Resources{CPU: storageAgentDefaults.CPU.DeepCopy(), Memory: storageAgentDefaults.Memory.DeepCopy()}
	if sa.CPU != nil {
		r.CPU = sa.CPU.DeepCopy()
	}
	if sa.Memory != nil {
		r.Memory = sa.Memory.DeepCopy()
	}
	return r
}

// sizeInput gathers the sizing request.
func (s *state) sizeInput(images int) SizeInput {
	in := SizeInput{
		Cloud:            s.det.Cloud,
		ExecutorsPerNode: s.epn,
		Previous:         s.in.Previous.DerivedInstanceType,
		ExecutorsHaveRun: s.locked,
		Overhead:         s.overhead(images),
		SpotNeighbours:   s.in.Config.Karpenter != nil && s.in.Config.Karpenter.SpotNeighbourGenerations,
	}
	if ic := s.in.Spec.InstanceConfig; ic != nil {
		in.InstanceType, in.InstanceFamily = ic.InstanceType, ic.InstanceFamily
		in.AutoUpgrade, in.Spot = ic.AutoUpgrade, ic.SpotEnabled
		in.SpotNeighbours = in.SpotNeighbours || ic.SpotNeighbourGenerations
		in.AllowMetal = ic.AllowMetal
	}
	s.arch = s.architecture(in.Cloud, in.Previous, in.ExecutorsHaveRun)
	in.Arch = s.arch.Arch
	if r := s.in.Spec.InheritNodeConfigFrom; r != nil {
		key := refNamespace(r.Namespace, s.in.Namespace) + "/" + r.Name
		in.InheritQueryService = key
		for i := range s.in.QueryServices {
			q := &s.in.QueryServices[i]
			if q.Namespace+"/"+q.Name == key {
				in.InheritInstanceType = q.Spec.Executor.InstanceType
			}
		}
	}
	in.Executors = make([]ExecutorRequest, 0, len(s.attached()))
	for _, a := range s.attached() {
		r := a.QS.Spec.Executor.Resources
		e := ExecutorRequest{QueryService: a.Key()}
		if r.CPU != nil {
			e.CPU = r.CPU.DeepCopy()
		}
		if r.Memory != nil {
			e.Memory = r.Memory.DeepCopy()
		}
		in.Executors = append(in.Executors, e)
	}
	return in
}

// nodes sizes the pool and emits its NodePool and NodeClass, or its cloud
// node pool.
func (s *state) nodes() {
	static := s.static()
	if static && len(s.in.Spec.NodeSelector) == 0 {
		s.pending("NodeSelectorRequired", fmt.Sprintf("the cluster provisions nodes with %s, which burstpool does not manage for this pool: set spec.nodeSelector to pick the pool's nodes (or spec.provisioning.manageNodePool to create them)", s.det.Method))
		return
	}
	if static {
		s.condition(CondProvisioned, metav1.ConditionTrue, "ExistingNodes", fmt.Sprintf(
			"pool pods run on existing nodes that match spec.nodeSelector and carry the pool's labels: label them with kubectl label nodes -l %s %s",
			selectorString(s.in.Spec.NodeSelector), labelArgs(s.in.Pool, s.in.Namespace)))
		s.sizeForStatus()
		return
	}
	in := s.sizeInput(s.images)
	if in.InstanceType == "" && in.InheritInstanceType == "" && len(in.Executors) == 0 && in.Previous == "" && in.InstanceFamily == "" {
		s.pending("NoInstanceType", "no QueryService is attached and spec.instanceConfig names no instance type: attach a QueryService or set spec.instanceConfig.instanceType")
		s.preserve(rnNodePool, rnNodeClass, rnCloudPool, rnCloudPoolDraining)
		return
	}
	if in.InheritQueryService != "" && in.InheritInstanceType == "" && in.InstanceType == "" {
		s.pending("InheritedQueryServiceMissing", fmt.Sprintf("spec.inheritNodeConfigFrom names QueryService %s, which does not exist or sets no spec.executor.instanceType", in.InheritQueryService))
		s.preserve(rnNodePool, rnNodeClass, rnCloudPool, rnCloudPoolDraining)
		return
	}
	res, err := s.in.Size(in)
	if err != nil {
		s.fail("SizingFailed", fmt.Sprintf("cannot size pool %q: %v", s.in.Pool, err))
		s.preserve(rnNodePool, rnNodeClass, rnCloudPool, rnCloudPoolDraining, rnPlaceholder, rnPriorityClass)
		return
	}
	s.size = &res
	s.sizeEvents(res)
	nodes := ceilDiv64(int64(s.in.Spec.MaxExecutors), int64(s.epn))

	if isKarpenter(s.det.Method) {
		kind := nodeClassKindOf(s.det)
		cfg, iam := s.in.Config, s.nodeIAM() // node IAM (iam.go): nil when off
		if iam != nil && !iam.ComposeNodes {
			s.preserve(rnNodePool, rnNodeClass)
			return
		}
		if iam != nil {
			cfg = WithNodeRole(cfg, iam.Role)
		}
		nc, err := NodeClass(NodeClassArgs{
			Pool: s.in.Pool, Namespace: s.in.Namespace, ClusterName: s.in.Config.ClusterName,
			Kind: kind, LocalNVMe: res.LocalNVMe, Config: cfg,
			Kubelet: sizing.KubeletFor(sizing.Cloud(s.det.Cloud)),
		})
		if err != nil {
			s.fail("NodeClassIncomplete", err.Error())
			s.preserve(rnNodePool, rnNodeClass)
			return
		}
		if iam != nil {
			AnnotateNodeRole(nc, iam.Role)
		}
		types := []string{res.InstanceType}
		if in.Spot && len(res.SpotTypes) > 0 {
			types = res.SpotTypes
		}
		s.archWarnings(res)
		npa := NodePoolArgs{
			Pool: s.in.Pool, Namespace: s.in.Namespace, NodeClass: kind, Types: types, Arch: res.Arch,
			Spot: in.Spot, Taints: poolTaints(s.in.Pool, s.in.Namespace, s.sched.Tolerations), NodeSelector: s.in.Spec.NodeSelector,
			Nodes: nodes, Capacity: res.Capacity, Suspend: s.in.Spec.Suspend, Tuning: *s.in.Config.Karpenter,
		}
		npName := s.in.Pool + sfxNodePool
		s.emit(rnNodeClass, nc, conditionReady(s.in.Observed[rnNodeClass], kind.Kind == "KWOKNodeClass"))
		s.emitLazy(rnNodePool, "NodePool", npName, Lazy{Key: lazyKey("nodepool", npa), Build: func() *unstructured.Unstructured { return NodePool(npa) }},
			conditionReady(s.in.Observed[rnNodePool], false))
		s.out.Status.NodePoolName = npName
		s.out.Status.NodeClassName = nc.GetName()
		s.condition(CondProvisioned, metav1.ConditionTrue, "KarpenterNodePool", fmt.Sprintf("Karpenter launches %s nodes for the pool (NodePool %s)", strings.Join(types, ", "), npName))
		return
	}

	cfg := s.in.Config.Provisioning
	if cfg == nil {
		cfg = &v1beta1.Provisioning{}
	}
	clusterID := cfg.ClusterID
	if p := s.in.Spec.Provisioning; p != nil && p.ClusterID != "" {
		clusterID = p.ClusterID
	}
	minNodes := int32(0)
	if !s.in.Spec.Suspend {
		minNodes = int32(ceilDiv64(int64(s.in.Spec.MinExecutors), int64(s.epn)))
	}
	labels := ownLabels(s.in.Spec.NodeSelector)
	delete(labels, qsv1alpha1.LabelPool)
	delete(labels, qsv1alpha1.LabelPoolNamespace)
	cin := cloudpool.Input{
		Pool: s.in.Pool, Namespace: s.in.Namespace, Method: s.det.Method, ClusterID: clusterID,
		InstanceType: res.InstanceType, MinNodes: minNodes, MaxNodes: int32(nodes),
		Labels: labels, Taints: poolTaints(s.in.Pool, s.in.Namespace, s.sched.Tolerations)[len(identityTaints(s.in.Pool, s.in.Namespace)):],
		ProviderConfigName: cfg.ProviderConfigName, Region: cfg.Region, Namespaced: s.det.DOKSNamespaced,
	}
	if s.det.Method == cloudpool.MethodCoreWeave {
		s.coreweave(cin)
		return
	}
	cp, err := cloudpool.Build(cin)
	if err != nil {
		s.fail("CloudNodePoolIncomplete", err.Error())
		s.preserve(rnCloudPool)
		return
	}
	s.emit(rnCloudPool, cp, conditionReady(s.in.Observed[rnCloudPool], false))
	s.out.Status.NodePoolName = cp.GetName()
	s.condition(CondProvisioned, metav1.ConditionTrue, "CloudNodePool", fmt.Sprintf("%s node pool %s holds %d to %d %s nodes", s.det.Method, cp.GetName(), minNodes, nodes, res.InstanceType))
}

// ceilDiv64 is a / b rounded up, for a >= 0 and b >= 1; it cannot
// overflow.
func ceilDiv64(a, b int64) int64 {
	return a/b + min(a%b, 1)
}

// sizeForStatus checks compatibility for pools on existing nodes, when the
// Pool names their instance type.
func (s *state) sizeForStatus() {
	in := s.sizeInput(s.images)
	if in.InstanceType == "" {
		return
	}
	if res, err := s.in.Size(in); err == nil {
		s.size = &res
	}
}

// archWarnings reports an architecture that a pinned type or family
// overrides, and attached QueryServices that declare another one.
func (s *state) archWarnings(res SizeResult) {
	if ic := s.in.Spec.InstanceConfig; ic != nil && ic.Architecture != "" && res.Arch != "" && ic.Architecture != res.Arch {
		s.event(true, "ArchitectureOverridden", fmt.Sprintf("spec.instanceConfig.architecture is %s but the pool's instance type %s is %s: the type decides; make them agree", ic.Architecture, res.InstanceType, res.Arch))
	}
	if s.arch.Conflict != "" && s.arch.Arch == res.Arch {
		s.event(true, "ArchitectureConflict", fmt.Sprintf("the pool's nodes are %s (from %s); %s declare another architecture and may not run on them", res.Arch, s.arch.From, s.arch.Conflict))
	}
}

// sizeEvents reports changes of the pool's instance type.
func (s *state) sizeEvents(res SizeResult) {
	prev := s.in.Previous.DerivedInstanceType
	switch {
	case res.Upgraded && prev != res.InstanceType:
		s.event(false, "InstanceTypeUpgraded", fmt.Sprintf("the pool moves from %s to %s to fit its QueryServices (%s)", prev, res.InstanceType, res.DerivedFrom))
	case prev != res.InstanceType:
		s.event(false, "InstanceTypeDerived", fmt.Sprintf("the pool's nodes are %s (from %s)", res.InstanceType, res.DerivedFrom))
	default:
		return
	}
	if res.PerNode > 0 && res.PerNode != s.epn && res.Kept == "" {
		advice := fmt.Sprintf("no %s instance type holds exactly %d; set spec.executorsPerNode to %d", s.det.Cloud, s.epn, res.PerNode)
		ic := s.in.Spec.InstanceConfig
		if ic != nil && ic.InstanceFamily != "" {
			advice = fmt.Sprintf("no %s size holds exactly %d; set spec.executorsPerNode to %d or choose another family", ic.InstanceFamily, s.epn, res.PerNode)
		}
		if (ic != nil && ic.InstanceType != "") || s.in.Spec.InheritNodeConfigFrom != nil {
			advice = fmt.Sprintf("the type is pinned; set spec.executorsPerNode to %d so executor slots match the nodes, or pin a type that holds %d", res.PerNode, s.epn)
		}
		s.event(true, "ExecutorsPerNodeInexact", fmt.Sprintf("one %s node holds %d executors of the largest compatible QueryService, not spec.executorsPerNode (%d): %s", res.InstanceType, res.PerNode, s.epn, advice))
	}
}

// labelArgs are kubectl label's arguments that give a node the pool's
// identity labels.
func labelArgs(pool, ns string) string {
	return strings.ReplaceAll(selectorString(nodeIdentity(pool, ns)), ",", " ")
}
