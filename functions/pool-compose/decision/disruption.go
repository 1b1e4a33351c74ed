package decision

import (
	"maps"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// What keeps Karpenter and the Cluster Autoscaler from taking a pool node
// while executors run on it: the NodePool's disruption budgets and
// terminationGracePeriod, and the annotations executors carry.

// Annotations that keep a node under a running pod.
const (
	// AnnotationDoNotDisrupt on a pod keeps Karpenter from choosing its node
	// for drift or consolidation, and from evicting it while the node
	// drains until the NodePool's terminationGracePeriod runs out
	// (karpenter.sh/v1 pkg/apis/v1/labels.go DoNotDisruptAnnotationKey;
	// docs concepts/disruption, "Pod-Level Controls").
	AnnotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	// AnnotationSafeToEvict "false" on a pod keeps the Cluster Autoscaler
	// from removing its node when it scales down (cluster-autoscaler FAQ,
	// "What types of pods can prevent CA from removing a node?").
	AnnotationSafeToEvict = "cluster-autoscaler.kubernetes.io/safe-to-evict"
)

// executorAnnotations are the annotations a pool executor carries so that
// whatever scales the pool's nodes leaves its node alone while it runs:
// Karpenter's do-not-disrupt, and on clouds whose node pools a Cluster
// Autoscaler scales (LKE, DOKS, CoreWeave, node groups) safe-to-evict "false". Nil on
// existing nodes, which nothing scales. Placeholders never carry them: they
// hold warm slots that executors preempt, and a node that holds only
// placeholders must stay free to go.
func executorAnnotations(method string) map[string]string {
	switch method {
	case methodKarpenter, methodEKSAutoMode:
		return map[string]string{AnnotationDoNotDisrupt: "true"}
	case methodLKE, methodDOKS, methodCoreWeave, methodNodeGroup:
		return map[string]string{AnnotationSafeToEvict: "false"}
	}
	return nil
}

// warmSlotScheduling is where a pool's placeholders go: the pool's nodes
// and, on a spot pool that Karpenter provisions, on-demand capacity
// (karpenter.sh/capacity-type). Warm slots are the executors a burst
// starts on; on on-demand nodes no spot market that runs dry or
// interrupts takes them, and the executors that preempt placeholders run
// there. Executors beyond the warm slots go to spot.
func warmSlotScheduling(sched objects.Scheduling, method string, spot bool) objects.Scheduling {
	if !spot || !isKarpenter(method) || len(sched.NodeSelector) == 0 {
		return sched
	}
	sel := maps.Clone(sched.NodeSelector)
	sel[objects.LabelCapacityType] = objects.CapacityOnDemand
	return objects.Scheduling{NodeSelector: sel, Tolerations: sched.Tolerations}
}

// coreWeaveAutoscaled hands a CoreWeave pool's size to CKS's Cluster
// Autoscaler (CoreWeave, "Autoscale Node Pools": it moves targetNodes
// between minNodes and maxNodes): minNodes are the nodes of the warm
// slots, and targetNodes repeats what the observed pool has (minNodes
// while it is new), so burstpool never sets the count back against the
// autoscaler. The autoscaler removes only nodes whose pods may go:
// executors carry safe-to-evict "false" (executorAnnotations), and the
// pool scales down IdleOnly.
func coreWeaveAutoscaled(cin cloudpool.Input, obs *structpb.Struct) cloudpool.Input {
	cin.Autoscaling = true
	cin.TargetNodes = cin.MinNodes
	if obs != nil {
		if n := int32(observed.Number(observed.Field(obs, "spec", "targetNodes"))); n > 0 {
			cin.TargetNodes = n
		}
	}
	return cin
}
