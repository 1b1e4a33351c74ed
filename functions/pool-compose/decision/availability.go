package decision

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// settingsRead are the names of the EnvironmentConfigs whose data was
// merged, in merge order.
func (s Settings) settingsRead() []string {
	out := make([]string, 0, len(s.envs))
	for _, e := range s.envs {
		out = append(out, e.Name)
	}
	return out
}

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
