package decision

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// CondSettings says whether the EnvironmentConfig that holds the cluster's
// settings was found, and whether the pool waits for it.
const CondSettings = "SettingsFound"

// Reasons of CondSettings. The pool's previous reason is its memory of
// which settings it was composed with: a pool composed from an
// EnvironmentConfig (Found) waits for it when it disappears (NotFound); a
// pool composed from the Composition's defaults (UsingDefaults) goes on.
const (
	reasonSettingsFound    = "Found"
	reasonSettingsNotFound = "SettingsNotFound"
	reasonSettingsDefaults = "UsingDefaults"
)

// settingsAvailability decides what a pool does when Crossplane finds no
// EnvironmentConfig of the selection (deleted, renamed or relabelled:
// Crossplane returns none; one it is not allowed to read fails the
// reconcile before the function runs, which changes nothing). Settings are where a pool's workload cluster, cluster
// ID and node IAM come from; composing such a pool from the Composition's
// defaults would turn it local and drop its cloud node pool, and Crossplane
// deletes what a function leaves out of desired state. So a pool that has
// composed objects from settings is Pending and keeps every one of them as
// observed; a pool with nothing composed, or composed from the defaults
// before, goes on from the defaults and says so on the claim.
func settingsAvailability(in Input) Outcome {
	var o Outcome
	if read := in.Settings.settingsRead(); len(read) > 0 {
		o.condition(CondSettings, metav1.ConditionTrue, reasonSettingsFound, "the cluster's settings are read from EnvironmentConfig "+strings.Join(read, ", "))
		return o
	}
	what := "EnvironmentConfig " + in.Settings.target
	prev := in.PreviousConditions[CondSettings]
	if len(in.Observed) > 0 && (prev == reasonSettingsFound || prev == reasonSettingsNotFound) {
		msg := fmt.Sprintf("%s, which holds the settings this pool was composed with, is not found (deleted, renamed or relabelled): "+
			"the pool keeps its %d composed objects as they are and changes nothing until it is back. Restore %s (kubectl get environmentconfigs), "+
			"or point the Composition's function input environmentConfig at its new name; to compose the pool from the Composition's defaults instead, create %s with empty data",
			what, len(in.Observed), what, what)
		o.condition(CondSettings, metav1.ConditionFalse, reasonSettingsNotFound, msg)
		o.Problem = pending(reasonSettingsNotFound, msg)
		return o
	}
	msg := fmt.Sprintf("%s is not found: the pool is composed from the Composition's defaults (no workload cluster, cluster ID or node IAM settings of the cluster). "+
		"Create %s to set them", what, what)
	o.condition(CondSettings, metav1.ConditionFalse, reasonSettingsDefaults, msg)
	return o
}

// RequiredSettings are the settings a pool's cloud and method need that
// neither the EnvironmentConfig nor the input sets, checked before anything
// is composed. manageNodePool tells whether the pool's cloud node pool is
// composed; clusterID is the pool's (or the settings') cluster ID.
func RequiredSettings(det Detection, manageNodePool bool, clusterID string, c *v1beta1.Input) []SettingError {
	// nodeAccess checks what every AWS NodeClass needs: a role, and how to
	// find subnets and security groups.
	nodeAccess := func(prefix, on string, hasRole bool, subnets, sgs []v1beta1.SelectorTerm) []SettingError {
		var errs []SettingError
		if !hasRole {
			errs = append(errs, SettingError{Path: prefix + ".role", Message: "is required on " + on + ": the IAM role pool nodes run with (burstpool does not create it)"})
		}
		if c.ClusterName == "" && (len(subnets) == 0 || len(sgs) == 0) {
			errs = append(errs, SettingError{Path: "clusterName", Message: "is required on " + on + " unless " + prefix + ".subnetSelectorTerms and " +
				prefix + ".securityGroupSelectorTerms are set: pool nodes find their subnets and security groups by the tag karpenter.sh/discovery={clusterName}"})
		}
		return errs
	}
	switch {
	case det.Cloud == cloudAWS && det.Method == methodKarpenter:
		a := c.AWS
		return nodeAccess("aws", "AWS with Karpenter", a.Role != "" || a.InstanceProfile != "", a.SubnetSelectorTerms, a.SecurityGroupSelectorTerms)
	case det.Method == methodEKSAutoMode:
		e := c.EKSAutoMode
		return nodeAccess("eksAutoMode", "EKS Auto Mode", e.Role != "", e.SubnetSelectorTerms, e.SecurityGroupSelectorTerms)
	case det.Method == methodNodeGroup:
		return nodeGroupSettings(det.Cloud, c) // detect.go
	case manageNodePool && (det.Method == methodLKE || det.Method == methodDOKS) && clusterID == "":
		return []SettingError{{Path: "provisioning.clusterId", Message: "is required to compose " + det.Method + " node pools (or set spec.provisioning.clusterId on the Pool)"}}
	}
	return nil
}

// settingsReason is the condition reason of a pool that waits for settings.
const (
	reasonSettingsInvalid = "SettingsInvalid"
	reasonSettingsMissing = "SettingsMissing"
)

// awaitSettings makes the pool Pending (the Outcome's Problem), keeping
// every composed object as it is, while the EnvironmentConfig it was
// composed with is not found (settingsAvailability), its settings are
// invalid or a setting its cloud needs is missing. A pool being deleted
// does not wait.
func awaitSettings(in Input, f Facts) Outcome {
	var o Outcome
	if in.Deleting {
		return o
	}
	if o = settingsAvailability(in); o.Problem != nil {
		if in.PreviousConditions[CondProvisioned] != o.Problem.Reason {
			o.event(true, o.Problem.Reason, o.Problem.Message)
		}
		o.preserve(slices.Sorted(maps.Keys(in.Observed))...)
		return o
	}
	reason, msg := reasonSettingsInvalid, in.SettingsProblem
	if msg == "" && f.Detection.Problem == "" {
		errs := RequiredSettings(f.Detection, manageNodePool(in) && !f.Static, clusterID(in), in.Config)
		errs = NodeIAMSettings(composesNodeIAM(in, f), in.Config, errs) // node IAM (iam.go)
		if len(errs) > 0 {
			reason, msg = reasonSettingsMissing, in.Settings.Problem(errs)
		}
	}
	if msg == "" {
		return o
	}
	o.Problem = pending(reason, msg)
	if in.PreviousConditions[CondProvisioned] != reason {
		o.event(true, reason, msg)
	}
	o.preserve(slices.Sorted(maps.Keys(in.Observed))...)
	return o
}

// clusterID is the pool's cluster ID: spec.provisioning's, else the
// settings'.
func clusterID(in Input) string {
	if p := in.Spec.Provisioning; p != nil && p.ClusterID != "" {
		return p.ClusterID
	}
	if p := in.Config.Provisioning; p != nil {
		return p.ClusterID
	}
	return ""
}
