package decision

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/sizing"
)

// decideCloudNodePool decides the cloud's node pool (LKE, DOKS, CoreWeave)
// of f.MinNodes to f.MaxNodes nodes of the sized type.
func decideCloudNodePool(in Input, f Facts, res sizing.Result) (string, Outcome) {
	cfg := in.Config.Provisioning
	if cfg == nil {
		cfg = &v1beta1.Provisioning{}
	}
	labels := ownLabels(in.Spec.NodeSelector)
	delete(labels, qsv1alpha1.LabelPool)
	delete(labels, qsv1alpha1.LabelPoolNamespace)
	cin := cloudpool.Input{
		Pool: in.Pool, Namespace: in.Namespace, Method: f.Detection.Method, ClusterID: clusterID(in),
		InstanceType: res.InstanceType, MinNodes: int32(f.MinNodes), MaxNodes: int32(f.MaxNodes),
		Labels: labels, Taints: objects.PoolTaints(in.Pool, in.Namespace, f.Scheduling.Tolerations)[len(cloudpool.IdentityTaints(in.Pool, in.Namespace)):],
		ProviderConfigName: cfg.ProviderConfigName, Region: cfg.Region, Namespaced: f.Detection.DOKSNamespaced,
	}
	if f.Detection.Method == cloudpool.MethodCoreWeave {
		return decideCoreWeave(in, f, cin)
	}
	var o Outcome
	cp, err := cloudpool.Build(cin)
	if err != nil {
		o.Problem = failed("CloudNodePoolIncomplete", err.Error())
		o.preserve(objects.ComposedCloudPool)
		return "", o
	}
	o.desire(objects.ComposedCloudPool, cp, observed.Ready(in.Observed[objects.ComposedCloudPool], false), true)
	o.condition(CondProvisioned, metav1.ConditionTrue, "CloudNodePool", fmt.Sprintf("%s node pool %s holds %d to %d %s nodes", f.Detection.Method, cp.GetName(), f.MinNodes, f.MaxNodes, res.InstanceType))
	return cp.GetName(), o
}
