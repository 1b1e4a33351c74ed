package decision

import (
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// daemonSetReady tells whether an observed DaemonSet runs a ready pod on
// every node it should.
func daemonSetReady(o *structpb.Struct) bool {
	ds := observedDaemonSet(o)
	if ds == nil {
		return false
	}
	st := ds.Status
	return st.ObservedGeneration >= ds.Generation && st.NumberReady >= st.DesiredNumberScheduled
}

// nodePoolNodes is the number of nodes an observed Karpenter NodePool
// reports.
func nodePoolNodes(o *structpb.Struct) int64 {
	if n := observed.Number(observed.Field(o, "status", "nodes")); n > 0 {
		return n
	}
	return observed.Number(observed.Field(o, "status", "resources", "nodes"))
}

// observedDaemonSet reads the generation and rollout status of an observed
// DaemonSet; nil when it is not observed.
func observedDaemonSet(u *structpb.Struct) *appsv1.DaemonSet {
	if u == nil {
		return nil
	}
	ds := &appsv1.DaemonSet{}
	ds.Generation = observed.Number(observed.Field(u, "metadata", "generation"))
	ds.Status.ObservedGeneration = observed.Number(observed.Field(u, "status", "observedGeneration"))
	ds.Status.DesiredNumberScheduled = int32(observed.Number(observed.Field(u, "status", "desiredNumberScheduled")))
	ds.Status.NumberReady = int32(observed.Number(observed.Field(u, "status", "numberReady")))
	return ds
}
