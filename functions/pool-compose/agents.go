package main

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// agentPriority is the value of the PriorityClass the pool's node agents
// run at: above executors (which run above the placeholders' -10, at the
// default 0 or a class of their QueryService's), below the cluster's
// critical classes (system-cluster-critical is 2000000000) and within the
// 1000000000 user-defined classes may take.
const agentPriority = 1000000

// agentPriorityClass is the PriorityClass of the pool's node agents: the
// one warmup.priorityClassName names, else the pool's own.
func agentPriorityClass(in Input) string {
	if w := in.Config.Warmup; w != nil && w.PriorityClassName != "" {
		return w.PriorityClassName
	}
	return in.Pool + sfxNodeAgent
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
		o.preserve(rnAgentPriorityClass)
		return o
	}
	o.desire(rnAgentPriorityClass, AgentPriorityClass(agentPriorityClass(in), in.Pool, in.Namespace), in.Observed[rnAgentPriorityClass] != nil, false)
	return o
}

// AgentPriorityClass returns the PriorityClass of a pool's node agents.
func AgentPriorityClass(name, pool, ns string) *unstructured.Unstructured {
	return priorityClass(name, pool, ns, agentPriority, corev1.PreemptLowerPriority,
		"burstpool node agents (warmup, storage agent) of pool "+pool+"; they preempt executors on a full node.")
}
