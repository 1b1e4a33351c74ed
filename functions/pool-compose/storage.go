package main

import (
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/internal/sizing"
)

// decideStorageAgent decides the storage agent DaemonSet, which runs on
// every pool node with spec.storageAgent.enabled.
func decideStorageAgent(in Input, f Facts) Outcome {
	var o Outcome
	sa := in.Spec.StorageAgent
	if sa == nil || !sa.Enabled {
		return o
	}
	if len(f.Scheduling.NodeSelector) == 0 {
		o.preserve(rnStorageAgent)
		return o
	}
	u := StorageAgent(StorageAgentArgs{
		Pool: in.Pool, Namespace: in.Namespace, Image: sa.Image,
		Resources: storageResources(sa), Scheduling: f.Scheduling,
		PriorityClassName: agentPriorityClass(in),
	})
	o.desire(rnStorageAgent, u, daemonSetReady(in.Observed[rnStorageAgent]), true)
	return o
}

// storageResources are the storage agent's requests.
func storageResources(sa *poolv1alpha1.StorageAgent) sizing.Resources {
	r := sizing.Resources{CPU: storageAgentDefaults.CPU.DeepCopy(), Memory: storageAgentDefaults.Memory.DeepCopy()}
	if sa.CPU != nil {
		r.CPU = sa.CPU.DeepCopy()
	}
	if sa.Memory != nil {
		r.Memory = sa.Memory.DeepCopy()
	}
	return r
}
