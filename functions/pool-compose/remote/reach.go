package remote

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// Condition type and reasons of a remote pool's connection.
const (
	CondWorkloadReachable      = "WorkloadClusterReachable"
	ReasonReachable            = "WorkloadClusterReachable"
	ReasonUnreachable          = "WorkloadClusterUnreachable"
	ReasonNotApplied           = "WorkloadObjectsNotApplied"
	ReasonNameTaken            = "NameTaken"
	msgExternalDoesNotExist    = "external resource does not exist"
	reasonCapacityUnreachable  = "ClusterUnreachable"
	defaultManagementClusterID = "management"
)

// Reachability is the WorkloadClusterReachable condition of a remote pool
// from its observed Objects and PoolCapacity: False, quoting their errors,
// while the provider cannot reach the cluster (WorkloadClusterUnreachable)
// or an Object cannot be applied (WorkloadObjectsNotApplied).
func Reachability(obs map[resource.Name]*structpb.Struct, pc string) decision.Condition {
	where := fmt.Sprintf("workload cluster %s (provider-kubernetes ProviderConfig %s)", pc, pc)
	var capErr string
	if c := observed.Condition(obs[objects.ComposedRemoteCapacity], "Ready"); c.Status == "False" && c.Reason == reasonCapacityUnreachable {
		capErr = c.Message
	} else if c := observed.Condition(obs[objects.ComposedRemoteCapacity], "Synced"); c.Status == "False" {
		// The summary of the workload cluster could not be read.
		capErr = c.Message
	}
	var objErrs []string
	for _, n := range slices.Sorted(maps.Keys(obs)) {
		o := obs[n]
		if !IsObject(n) || observed.String(o, "kind") != ObjectKind {
			continue
		}
		c := observed.Condition(o, "Synced")
		if c.Status != "False" || strings.Contains(c.Message, msgExternalDoesNotExist) {
			continue
		}
		objErrs = append(objErrs, fmt.Sprintf("Object %s: %s", observed.String(o, "metadata", "name"), c.Message))
	}
	if capErr == "" && len(objErrs) == 0 {
		return decision.Condition{Type: CondWorkloadReachable, Status: metav1.ConditionTrue, Reason: ReasonReachable}
	}
	const maxQuoted = 3
	quoted := objErrs
	if len(quoted) > maxQuoted {
		quoted = append(slices.Clone(quoted[:maxQuoted]), fmt.Sprintf("and %d more Objects", len(objErrs)-maxQuoted))
	}
	if capErr != "" {
		quoted = append([]string{"PoolCapacity: " + capErr}, quoted...)
	}
	reason, what := ReasonNotApplied, "cannot apply the pool's objects to the "+where
	if capErr != "" || unreachable(objErrs) {
		reason, what = ReasonUnreachable, "cannot reach the "+where
	}
	return decision.Condition{Type: CondWorkloadReachable, Status: metav1.ConditionFalse, Reason: reason,
		Message: what + "; nothing composed is removed meanwhile: " + strings.Join(quoted, "; ")}
}

// unreachable tells whether Object errors are connection errors rather
// than refusals of the remote API server.
func unreachable(errs []string) bool {
	for _, e := range errs {
		for _, s := range []string{"connection refused", "no such host", "i/o timeout", "dial tcp", "connect:", "cannot get credentials", "cannot create new REST config", "EOF", "context deadline exceeded", "Client.Timeout"} {
			if strings.Contains(e, s) {
				return true
			}
		}
	}
	return false
}
