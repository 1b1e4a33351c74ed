package decision

import (
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
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
		o.preserve(objects.ComposedStorageAgent)
		return o
	}
	u := objects.StorageAgent(objects.StorageAgentArgs{
		Pool: in.Pool, Namespace: in.Namespace, Image: sa.Image,
		Resources: storageResources(sa), Scheduling: f.Scheduling,
		PriorityClassName: agentPriorityClass(in),
	})
	o.desire(objects.ComposedStorageAgent, u, daemonSetReady(in.Observed[objects.ComposedStorageAgent]), true)
	return o
}

// storageResources are the storage agent's requests.
func storageResources(sa *poolv1alpha1.StorageAgent) sizing.Resources {
	r := sizing.Resources{CPU: objects.StorageAgentDefaults.CPU.DeepCopy(), Memory: objects.StorageAgentDefaults.Memory.DeepCopy()}
	if sa.CPU != nil {
		r.CPU = sa.CPU.DeepCopy()
	}
	if sa.Memory != nil {
		r.Memory = sa.Memory.DeepCopy()
	}
	return r
}
