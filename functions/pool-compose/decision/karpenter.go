package decision

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/sizing"
)

// decideKarpenter decides the pool's Karpenter NodePool, which launches up
// to f.MaxNodes nodes of the sized types, and its NodeClass.
func decideKarpenter(in Input, f Facts, spot bool, res sizing.Result, images int) (nodePool, nodeClass string, o Outcome) {
	kind := nodeClassKindOf(f.Detection)
	cfg := in.Config
	iam, o := decideNodeIAM(in, f) // node IAM (iam.go): nil when off
	if iam != nil && !iam.ComposeNodes {
		o.preserve(objects.ComposedNodePool, objects.ComposedNodeClass)
		return "", "", o
	}
	if iam != nil {
		cfg = objects.WithNodeRole(cfg, iam.Role)
	}
	nc, err := objects.NodeClass(objects.NodeClassArgs{
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
		objects.AnnotateNodeRole(nc, iam.Role)
	}
	types := []string{res.InstanceType}
	if spot && len(res.SpotTypes) > 0 {
		types = res.SpotTypes
	}
	npa := objects.NodePoolArgs{
		Pool: in.Pool, Namespace: in.Namespace, NodeClass: kind, Types: types, Arch: res.Arch,
		Spot: spot, Taints: objects.PoolTaints(in.Pool, in.Namespace, f.Scheduling.Tolerations), NodeSelector: in.Spec.NodeSelector,
		Limits: nodePoolLimits(f.MaxNodes, res.LargestOffered, in.Spec.Suspend), Tuning: *in.Config.Karpenter,
		StartupTaint: warmingTaint(in.Pool, images, in.Config.Warmup),
		DriftBudgets: driftBudgets(in.Config.Karpenter.DriftWindows, in.Pool, in.Namespace), // drift windows (drift.go)
	}
	npName := in.Pool + objects.SuffixNodePool
	if msg := interruptionQueueMissing(kind, spot, in.Config.Karpenter.InterruptionQueue); msg != "" {
		o.event(true, "NoInterruptionQueue", msg)
	}
	if msg := autoModeTagsLeftOut(kind, in.Config.EKSAutoMode, in.Settings); msg != "" {
		o.event(true, "EKSAutoModeTagsNotApplied", msg)
	}
	// A KWOKNodeClass is Ready by its CRD's default; one that reports a
	// Ready condition is ready only when it is True.
	ncObs := in.Observed[objects.ComposedNodeClass]
	o.desire(objects.ComposedNodeClass, nc, observed.Ready(ncObs, kind.Kind == "KWOKNodeClass" && observed.Condition(ncObs, "Ready").Status == ""), true)
	o.desireLazy(objects.ComposedNodePool, "NodePool", npName, Lazy{Key: lazyKey("nodepool", npa), Build: func() *unstructured.Unstructured { return objects.NodePool(npa) }},
		observed.Ready(in.Observed[objects.ComposedNodePool], false), true)
	o.condition(CondProvisioned, metav1.ConditionTrue, "KarpenterNodePool", fmt.Sprintf("Karpenter launches %s nodes for the pool (NodePool %s)", strings.Join(types, ", "), npName))
	o.Conditions = append(o.Conditions, spotCondition(in, spot, types)) // spot.go
	return npName, nc.GetName(), o
}

// nodeClassKinds maps a cloud (or EKS Auto Mode) to its NodeClass.
var nodeClassKinds = map[string]objects.NodeClassKind{
	cloudAWS:          objects.EC2NodeClass,
	methodEKSAutoMode: objects.EKSNodeClass,
	cloudGCP:          objects.GCENodeClass,
	cloudAzure:        objects.AKSNodeClass,
	cloudKWOK:         objects.KWOKNodeClass,
}

// nodeClassKindOf returns the NodeClass of a Karpenter pool.
func nodeClassKindOf(d Detection) objects.NodeClassKind {
	if d.Method == methodEKSAutoMode {
		return nodeClassKinds[methodEKSAutoMode]
	}
	return nodeClassKinds[d.Cloud]
}

// warmingTaint is the startup taint of a Karpenter pool's nodes,
// e6data.io/warming={pool}:NoSchedule, while the pool warms images and
// warmup.openAfter is not zero: warmup pods tolerate it, executors and
// placeholders do not, and the capacity provider removes it once the
// node's images are warm or openAfter has passed (taints.go of package
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

// interruptionQueueMissing says why a spot pool's nodes go without warning,
// "" when they do not: Karpenter's AWS provider drains a spot node ahead of
// its interruption only when it reads the cluster's interruption queue
// (karpenter-provider-aws docs, concepts/disruption, "Interruption"), and
// the settings name none. EKS Auto Mode handles interruptions itself.
func interruptionQueueMissing(kind objects.NodeClassKind, spot bool, queue string) string {
	if !spot || queue != "" || kind != nodeClassKinds[cloudAWS] {
		return ""
	}
	return "the pool launches spot nodes, and karpenter.interruptionQueue names no interruption queue: configure Karpenter's settings.interruptionQueue (an SQS queue with the EventBridge rules of Karpenter's install guide) and name it in the burstpool EnvironmentConfig, or spot interruptions end executors without a drain"
}

// autoModeTagsLeftOut says why the settings' eksAutoMode.tags are not on
// an Auto Mode pool's NodeClass, "" when they are or there are none: the
// cluster role may not apply tags unless eksAutoMode.clusterRoleTags says
// it may (objects.eksNodeClass).
func autoModeTagsLeftOut(kind objects.NodeClassKind, s *v1beta1.EKSAutoMode, where Settings) string {
	if kind != nodeClassKinds[methodEKSAutoMode] || s == nil || s.ClusterRoleTags || len(s.Tags) == 0 {
		return ""
	}
	return fmt.Sprintf("%s are not applied: EKS Auto Mode's managed policies do not let the cluster IAM role tag the instances it launches, so the pool's NodeClass carries no tags; attach the tagging permissions of docs/install.md (\"EKS Auto Mode\") to the cluster role, then set %s to true",
		where.where("eksAutoMode.tags"), where.where("eksAutoMode.clusterRoleTags"))
}

// nodePoolLimits are a NodePool's spec.limits: nodes nodes, and the CPU
// and memory of nodes nodes of capacity each (when capacity is known and
// the product fits an int64). A suspended pool's limits are zero, so
// Karpenter launches nothing.
func nodePoolLimits(nodes int64, capacity sizing.Resources, suspend bool) map[string]string {
	if suspend {
		return map[string]string{"cpu": "0", "memory": "0", "nodes": "0"}
	}
	limits := map[string]string{"nodes": fmt.Sprint(nodes)}
	cpu, okCPU := times(capacity.CPU, nodes)
	mem, okMem := times(capacity.Memory, nodes)
	// Beyond int64 (maxExecutors near the int32 limit) the node limit
	// alone bounds the pool.
	if !capacity.CPU.IsZero() && !capacity.Memory.IsZero() && okCPU && okMem {
		limits["cpu"] = cpu.String()
		limits["memory"] = mem.String()
	}
	return limits
}

// times multiplies a quantity by n (n >= 0); ok is false when the product
// does not fit an int64.
func times(q resource.Quantity, n int64) (*resource.Quantity, bool) {
	v := q.MilliValue()
	if q.Format == resource.BinarySI {
		v = q.Value()
	}
	if v < 0 || n < 0 || (n > 0 && v > math.MaxInt64/n) {
		return nil, false
	}
	if q.Format == resource.BinarySI {
		return resource.NewQuantity(v*n, resource.BinarySI), true
	}
	return resource.NewMilliQuantity(v*n, q.Format), true
}
