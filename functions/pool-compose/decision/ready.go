package decision

import (
	"google.golang.org/protobuf/types/known/structpb"

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
