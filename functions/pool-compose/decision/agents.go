package decision

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// agentPriorityClass is the PriorityClass of the pool's node agents: the
// one warmup.priorityClassName names, else the pool's own.
func agentPriorityClass(in Input) string {
	if w := in.Config.Warmup; w != nil && w.PriorityClassName != "" {
		return w.PriorityClassName
	}
	return in.Pool + objects.SuffixNodeAgent
}

// decideAgentPriority decides the pool's node-agent PriorityClass while
// agents run (warmups warmup DaemonSets, or the storage agent), unless the
// settings name an existing one. Warmup and storage-agent pods run on
// every pool node, and executors may fill a node before its agents land (a
// QueryService with a new image attaches after the node was packed): an
// agent that cannot land leaves the node's images cold, or its storage
// unmounted, for every executor that comes after, which costs more than the
// one executor it preempts. Sizing reserves the agents' requests on every
// node, so they preempt only when the warm set grew after a node filled.
func decideAgentPriority(in Input, f Facts, warmups int) Outcome {
	var o Outcome
	if w := in.Config.Warmup; w != nil && w.PriorityClassName != "" {
		return o
	}
	if sa := in.Spec.StorageAgent; warmups == 0 && (sa == nil || !sa.Enabled) {
		return o // no agent runs at it
	}
	if len(f.Scheduling.NodeSelector) == 0 {
		o.preserve(objects.ComposedAgentPriorityClass)
		return o
	}
	name, pool, ns := agentPriorityClass(in), in.Pool, in.Namespace
	o.desireLazy(objects.ComposedAgentPriorityClass, "PriorityClass", name, Lazy{Key: lazyKey("agentpriority", []string{name, pool, ns}), Build: func() *unstructured.Unstructured { return objects.AgentPriorityClass(name, pool, ns) }},
		in.Observed[objects.ComposedAgentPriorityClass] != nil, false)
	return o
}
