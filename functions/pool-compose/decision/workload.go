package decision

import (
	"fmt"
	"maps"

	"github.com/crossplane/function-sdk-go/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// ReasonWaitingForWorkload is the Provisioned reason of a remote pool whose
// workload cluster has sent no summary yet.
const ReasonWaitingForWorkload = "WaitingForWorkloadCluster"

// AwaitWorkload composes only the PoolCapacity, which brings the
// workload cluster's first summary (remote.Compose keeps everything else, and
// remote.Wrap points the PoolCapacity at the cluster): the pool is
// Pending until the summary arrives.
func AwaitWorkload(in Input, pc, capacityName string) Output {
	out := Output{Desired: map[resource.Name]*unstructured.Unstructured{}, Lazy: map[resource.Name]Lazy{}, Ready: map[resource.Name]resource.Ready{}}
	sel := maps.Clone(in.Spec.NodeSelector)
	if sel == nil {
		sel = map[string]string{}
	}
	maps.Copy(sel, objects.Identity(in.Pool, in.Namespace))
	f := specFacts(in.Spec)
	f.Scheduling = objects.Scheduling{NodeSelector: sel}
	a := capacityArgs(in, f, nil).CountOnly()
	out.Desired[objects.ComposedCapacity] = objects.PoolCapacity(a)
	out.Ready[objects.ComposedCapacity] = resource.ReadyFalse
	msg := fmt.Sprintf("waiting for the capacity provider's first summary of workload cluster %s (provider-kubernetes ProviderConfig %s) in PoolCapacity %s", pc, pc, capacityName)
	out.Status = in.Previous
	out.Status.Phase, out.Status.Message = poolv1alpha1.PhasePending, msg
	out.Conditions = []Condition{{Type: CondProvisioned, Status: metav1.ConditionFalse, Reason: ReasonWaitingForWorkload, Message: msg}}
	return out
}
