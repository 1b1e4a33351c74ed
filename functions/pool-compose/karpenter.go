package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/sizing"
)

// Karpenter's capacity types.
const (
	capacitySpot     = "spot"
	capacityOnDemand = "on-demand"
)

// decideKarpenter decides the pool's Karpenter NodePool, which launches up
// to nodes nodes of the sized types, and its NodeClass.
func decideKarpenter(in Input, f Facts, spot bool, res sizing.Result, nodes int64, images int) (nodePool, nodeClass string, o Outcome) {
	kind := nodeClassKindOf(f.Detection)
	cfg := in.Config
	iam, o := decideNodeIAM(in, f) // node IAM (iam.go): nil when off
	if iam != nil && !iam.ComposeNodes {
		o.preserve(objects.ComposedNodePool, objects.ComposedNodeClass)
		return "", "", o
	}
	if iam != nil {
		cfg = WithNodeRole(cfg, iam.Role)
	}
	nc, err := NodeClass(NodeClassArgs{
		Pool: in.Pool, Namespace: in.Namespace, ClusterName: in.Config.ClusterName,
		Kind: kind, LocalNVMe: res.LocalNVMe, Images: images, Config: cfg,
		Kubelet: res.Kubelet,
	})
	if err != nil {
		o.Problem = failed("NodeClassIncomplete", err.Error())
		o.preserve(objects.ComposedNodePool, objects.ComposedNodeClass)
		return "", "", o
	}
	if iam != nil {
		AnnotateNodeRole(nc, iam.Role)
	}
	types := []string{res.InstanceType}
	if spot && len(res.SpotTypes) > 0 {
		types = res.SpotTypes
	}
	npa := NodePoolArgs{
		Pool: in.Pool, Namespace: in.Namespace, NodeClass: kind, Types: types, Arch: res.Arch,
		Spot: spot, Taints: poolTaints(in.Pool, in.Namespace, f.Scheduling.Tolerations), NodeSelector: in.Spec.NodeSelector,
		Limits: nodePoolLimits(nodes, res.LargestOffered, in.Spec.Suspend), Tuning: *in.Config.Karpenter,
		StartupTaint: warmingTaint(in.Pool, images, in.Config.Warmup),
	}
	npName := in.Pool + objects.SuffixNodePool
	if msg := interruptionQueueMissing(kind, spot, in.Config.Karpenter.InterruptionQueue); msg != "" {
		o.event(true, "NoInterruptionQueue", msg) // disruption.go
	}
	o.desire(objects.ComposedNodeClass, nc, observed.Ready(in.Observed[objects.ComposedNodeClass], kind.Kind == "KWOKNodeClass"), true)
	o.desireLazy(objects.ComposedNodePool, "NodePool", npName, Lazy{Key: lazyKey("nodepool", npa), Build: func() *unstructured.Unstructured { return NodePool(npa) }},
		observed.Ready(in.Observed[objects.ComposedNodePool], false), true)
	o.condition(CondProvisioned, metav1.ConditionTrue, "KarpenterNodePool", fmt.Sprintf("Karpenter launches %s nodes for the pool (NodePool %s)", strings.Join(types, ", "), npName))
	return npName, nc.GetName(), o
}

// NodeClassKind is a NodeClass's API group, version and kind.
type NodeClassKind struct {
	Group, Version, Kind string
}

// The NodeClasses of Karpenter's providers, and of EKS Auto Mode.
var (
	kindEC2NodeClass  = NodeClassKind{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"}
	kindEKSNodeClass  = NodeClassKind{Group: "eks.amazonaws.com", Version: "v1", Kind: "NodeClass"}
	kindGCENodeClass  = NodeClassKind{Group: "karpenter.k8s.gcp", Version: "v1alpha1", Kind: "GCENodeClass"}
	kindAKSNodeClass  = NodeClassKind{Group: "karpenter.azure.com", Version: "v1beta1", Kind: "AKSNodeClass"}
	kindKWOKNodeClass = NodeClassKind{Group: "karpenter.kwok.sh", Version: "v1alpha1", Kind: "KWOKNodeClass"}
)

// nodeClassKinds maps a cloud (or EKS Auto Mode) to its NodeClass.
var nodeClassKinds = map[string]NodeClassKind{
	cloudAWS:          kindEC2NodeClass,
	methodEKSAutoMode: kindEKSNodeClass,
	cloudGCP:          kindGCENodeClass,
	cloudAzure:        kindAKSNodeClass,
	cloudKWOK:         kindKWOKNodeClass,
}

// nodeClassKindOf returns the NodeClass of a Karpenter pool.
func nodeClassKindOf(d Detection) NodeClassKind {
	if d.Method == methodEKSAutoMode {
		return nodeClassKinds[methodEKSAutoMode]
	}
	return nodeClassKinds[d.Cloud]
}

// A spot type set of at least spotMinValuesFrom types asks Karpenter for
// spotMinValues distinct types in every launch (the requirement's
// minValues).
const (
	spotMinValuesFrom = 3
	spotMinValues     = 2
)

// NodePoolArgs is everything a pool's Karpenter NodePool is made of.
type NodePoolArgs struct {
	Pool, Namespace string
	NodeClass       NodeClassKind
	Types           []string
	Arch            string
	Spot            bool
	// Taints are the pool taint followed by spec.tolerations as taints.
	Taints []corev1.Taint
	// StartupTaint, when set, is the NodePool's one startup taint
	// (warmingTaint).
	StartupTaint *corev1.Taint
	// NodeSelector labels from spec.nodeSelector become single-value
	// requirements, so the pool's nodes carry them.
	NodeSelector map[string]string
	// Limits are the NodePool's spec.limits (nodePoolLimits).
	Limits map[string]string
	Tuning v1beta1.Karpenter
}

// NodePool returns the pool's karpenter.sh/v1 NodePool.
func NodePool(a NodePoolArgs) *unstructured.Unstructured {
	types := requirement(objects.LabelInstanceType, a.Types...)
	if len(a.Types) >= spotMinValuesFrom {
		// Wide enough to ask Karpenter to keep a choice of types in every
		// launch, so one type's spot shortage does not stall the pool.
		types["minValues"] = int64(spotMinValues)
	}
	reqs := []any{types}
	autoMode := a.NodeClass == kindEKSNodeClass
	if !autoMode { // EKS Auto Mode does not support the kubernetes.io/os requirement
		reqs = append(reqs, requirement(objects.LabelOS, "linux"))
	}
	if a.Arch != "" {
		reqs = append(reqs, requirement(objects.LabelArch, a.Arch))
	}
	if a.Spot {
		reqs = append(reqs, requirement(objects.LabelCapacityType, capacitySpot, capacityOnDemand))
	} else {
		reqs = append(reqs, requirement(objects.LabelCapacityType, capacityOnDemand))
	}
	for _, k := range slices.Sorted(maps.Keys(a.NodeSelector)) {
		if k == qsv1alpha1.LabelPool || k == qsv1alpha1.LabelPoolNamespace {
			continue
		}
		reqs = append(reqs, requirement(k, a.NodeSelector[k]))
	}

	tmplSpec := map[string]any{
		"nodeClassRef": map[string]any{
			"group": a.NodeClass.Group,
			"kind":  a.NodeClass.Kind,
			"name":  a.Pool + objects.SuffixNodeClass,
		},
		"requirements": reqs,
		"taints":       cloudpool.TaintList(a.Taints),
	}
	if a.StartupTaint != nil {
		tmplSpec["startupTaints"] = cloudpool.TaintList([]corev1.Taint{*a.StartupTaint})
	}
	// Expiry drains a node whatever its budgets; executors that carry
	// do-not-disrupt keep running for the grace period (disruption.go).
	expire, grace := lifespan(autoMode, a.Tuning.ExpireAfter, a.Tuning.TerminationGracePeriod)
	if expire != "" {
		tmplSpec["expireAfter"] = expire
	}
	if grace != "" {
		tmplSpec["terminationGracePeriod"] = grace
	}
	spec := map[string]any{
		"template": map[string]any{
			"metadata": map[string]any{"labels": objects.StringMap(objects.Identity(a.Pool, a.Namespace))},
			"spec":     tmplSpec,
		},
		"limits": objects.StringMap(a.Limits),
		"disruption": map[string]any{
			"consolidationPolicy": "WhenEmpty",
			"consolidateAfter":    a.Tuning.ConsolidateAfter,
			// Empty nodes go; drift never drains a node, since it would
			// drain one that runs executors (disruptionBudgets).
			"budgets": disruptionBudgets(),
		},
	}
	if a.Tuning.Weight > 0 {
		spec["weight"] = int64(a.Tuning.Weight)
	}
	u := objects.New("karpenter.sh/v1", "NodePool", a.Pool+objects.SuffixNodePool, "", objects.Identity(a.Pool, a.Namespace))
	u.Object["spec"] = spec
	return u
}

// requirement is a NodeSelectorRequirement with operator In.
func requirement(key string, values ...string) map[string]any {
	vs := make([]any, 0, len(values))
	for _, v := range values {
		vs = append(vs, v)
	}
	return map[string]any{"key": key, "operator": "In", "values": vs}
}

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
	u := objects.New(a.Kind.Group+"/"+a.Kind.Version, a.Kind.Kind, a.Pool+objects.SuffixNodeClass, "", objects.Identity(a.Pool, a.Namespace))
	u.Object["spec"] = spec
	return u, nil
}

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
			m["tags"] = objects.StringMap(t.Tags)
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
	t := objects.StringMap(extra)
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
// selector terms, ephemeralStorage and tags.
func eksNodeClass(a NodeClassArgs) (map[string]any, error) {
	eks := a.Config.EKSAutoMode
	if eks == nil || eks.Role == "" {
		return nil, fmt.Errorf("set eksAutoMode.role in the EnvironmentConfig: EKS Auto Mode nodes need an IAM role")
	}
	subnets, sgs, err := networkTerms(eks.NodeNetwork, a.ClusterName, "eksAutoMode")
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"role":                       eks.Role,
		"subnetSelectorTerms":        subnets,
		"securityGroupSelectorTerms": sgs,
		"ephemeralStorage":           map[string]any{"size": eks.EphemeralStorageSize},
		"tags":                       tagsOf(a.Pool, eks.Tags),
	}, nil
}

// gceNodeClass is the spec of a karpenter.k8s.gcp/v1alpha1 GCENodeClass.
func gceNodeClass(a NodeClassArgs) map[string]any {
	gcp := a.Config.GCP
	// The GCENodeClass's CEL: a family needs a channel or a version, and
	// channel is only supported for family ContainerOptimizedOS; Ubuntu
	// images follow the latest version.
	term := map[string]any{"family": gcp.ImageFamily, "version": "latest"}
	if gcp.ImageFamily == defaultGCPImageFamily {
		term = map[string]any{"family": gcp.ImageFamily, "channel": gcp.ImageChannel}
	}
	spec := map[string]any{"imageSelectorTerms": []any{term}}
	if gcp.ServiceAccount != "" {
		spec["serviceAccount"] = gcp.ServiceAccount
	}
	if k := kubeletConfig(a.Kubelet, false); len(k) > 0 {
		spec["kubeletConfiguration"] = k
	}
	return spec
}

// aksNodeClass is the spec of a karpenter.azure.com/v1beta1 AKSNodeClass.
func aksNodeClass(a NodeClassArgs) map[string]any {
	az := a.Config.Azure
	spec := map[string]any{
		"imageFamily": az.ImageFamily,
		"tags":        map[string]any{"e6data-pool": a.Pool},
	}
	if az.VNETSubnetID != "" {
		spec["vnetSubnetID"] = az.VNETSubnetID
	}
	if az.OSDiskSizeGB > 0 {
		spec["osDiskSizeGB"] = int64(az.OSDiskSizeGB)
	}
	// AKS itself reserves memory and evicts at 750Mi, as the model
	// assumes; maxPods is the cluster's (its network plugin's default)
	// unless the settings name one.
	if az.MaxPods > 0 {
		spec["maxPods"] = int64(az.MaxPods)
	}
	return spec
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

// poolTaints are the pool taint and spec.tolerations turned into taints: a
// toleration without a key (which tolerates everything) has no taint, and
// one without an effect taints NoSchedule.
func poolTaints(pool, ns string, tols []corev1.Toleration) []corev1.Taint {
	out := cloudpool.IdentityTaints(pool, ns)
	seen := map[string]bool{}
	for _, t := range out {
		seen[t.Key+":"+string(t.Effect)] = true
	}
	for _, t := range tols {
		if t.Key == "" {
			continue
		}
		eff := t.Effect
		if eff == "" {
			eff = corev1.TaintEffectNoSchedule
		}
		id := t.Key + ":" + string(eff)
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: eff})
	}
	return out
}

// warmingTaint is the startup taint of a Karpenter pool's nodes,
// e6data.io/warming={pool}:NoSchedule, while the pool warms images and
// warmup.openAfter is not zero: warmup pods tolerate it, executors and
// placeholders do not, and the capacity provider removes it once the
// node's images are warm or openAfter has passed (startup.go of package
// internal/capacity). Karpenter launches nodes for pods that do not
// tolerate a startup taint (sigs.k8s.io/karpenter@v1.14.1
// pkg/apis/v1/nodepool.go, StartupTaints: "ignored for provisioning
// purposes"), counts an in-flight node's room for them without it
// (pkg/controllers/state/statenode.go, Taints), and marks the NodeClaim
// Initialized only once it is gone
// (pkg/controllers/nodeclaim/lifecycle/initialization.go,
// StartupTaintsRemoved); consolidation considers initialized nodes only
// (pkg/controllers/disruption/helpers.go), so openAfter also bounds how
// long a node stays out of consolidation.
func warmingTaint(pool string, images int, w *v1beta1.Warmup) *corev1.Taint {
	if d, err := openAfter(w); images == 0 || err != nil || d == 0 {
		return nil
	}
	return &corev1.Taint{Key: qsv1alpha1.TaintWarming, Value: pool, Effect: corev1.TaintEffectNoSchedule}
}
