package decision

import (
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// TestAssembly: how Compute adds the decisions' outcomes up. The first
// problem stands unless a failure follows a pending one; the problem that
// counts sets NodesProvisioned before the outcome's own conditions.
func TestAssembly(t *testing.T) {
	cond := func(reason string) Condition {
		return Condition{Type: CondProvisioned, Status: metav1.ConditionFalse, Reason: reason, Message: reason + " message"}
	}
	pend := func(reason string) Outcome { return Outcome{Problem: pending(reason, reason+" message")} }
	fail := func(reason string) Outcome { return Outcome{Problem: failed(reason, reason+" message")} }
	object := func(kind string, ready bool) Outcome {
		var o Outcome
		o.desire(resource.Name(kind), objects.New("v1", kind, "burst-"+kind, "", nil), ready, true)
		return o
	}
	type want struct {
		Problem      *Problem
		Conditions   []Condition
		Waiting      []string
		Ready        map[resource.Name]resource.Ready
		Preserve     []resource.Name
		RequeueAfter time.Duration
	}
	cases := map[string]struct {
		reason   string
		outcomes []Outcome
		want     want
	}{
		"None": {
			reason: "No outcome: no problem, nothing desired.",
			want:   want{},
		},
		"FirstPendingStands": {
			reason:   "Two things wait for a person: the pool names the first.",
			outcomes: []Outcome{pend("NodeSelectorRequired"), pend("NoInstanceType")},
			want:     want{Problem: pending("NodeSelectorRequired", "NodeSelectorRequired message"), Conditions: []Condition{cond("NodeSelectorRequired")}},
		},
		"FailedBeatsPending": {
			reason:   "A failure after a pending problem makes the pool Failed; its condition is set after the pending one, so it is the one the claim shows.",
			outcomes: []Outcome{pend("SettingsMissing"), fail("SizingFailed")},
			want:     want{Problem: failed("SizingFailed", "SizingFailed message"), Conditions: []Condition{cond("SettingsMissing"), cond("SizingFailed")}},
		},
		"FirstFailureStands": {
			reason:   "Of two failures the first stands.",
			outcomes: []Outcome{fail("InvalidSelector"), fail("NameTaken")},
			want:     want{Problem: failed("InvalidSelector", "InvalidSelector message"), Conditions: []Condition{cond("InvalidSelector")}},
		},
		"PendingAfterFailure": {
			reason:   "A pending problem does not hide a failure.",
			outcomes: []Outcome{fail("ProvisioningUnsupported"), pend("SettingsMissing")},
			want:     want{Problem: failed("ProvisioningUnsupported", "ProvisioningUnsupported message"), Conditions: []Condition{cond("ProvisioningUnsupported")}},
		},
		"ProblemBeforeOwnConditions": {
			reason: "An outcome's problem sets NodesProvisioned before the conditions it reports itself.",
			outcomes: []Outcome{{
				Problem:    pending("SettingsMissing", "SettingsMissing message"),
				Conditions: []Condition{{Type: CondCapacityKnown, Status: metav1.ConditionTrue, Reason: "Observed"}},
			}},
			want: want{
				Problem:    pending("SettingsMissing", "SettingsMissing message"),
				Conditions: []Condition{cond("SettingsMissing"), {Type: CondCapacityKnown, Status: metav1.ConditionTrue, Reason: "Observed"}},
			},
		},
		"WaitingInOrder": {
			reason:   "The pool waits for the objects that are not ready, in the order they were decided.",
			outcomes: []Outcome{object("NodeClass", false), object("NodePool", true), object("PoolCapacity", false)},
			want: want{
				Waiting: []string{"NodeClass burst-NodeClass", "PoolCapacity burst-PoolCapacity"},
				Ready:   map[resource.Name]resource.Ready{"NodeClass": resource.ReadyFalse, "NodePool": resource.ReadyTrue, "PoolCapacity": resource.ReadyFalse},
			},
		},
		"PreserveAndRequeue": {
			reason:   "Names to keep add up; the soonest requeue wins.",
			outcomes: []Outcome{{Preserve: []resource.Name{objects.ComposedCapacity}, RequeueAfter: 10 * time.Minute}, {Preserve: []resource.Name{objects.ComposedStorageAgent}, RequeueAfter: 5 * time.Minute}},
			want:     want{Preserve: []resource.Name{objects.ComposedCapacity, objects.ComposedStorageAgent}, RequeueAfter: 5 * time.Minute},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := newAssembly()
			for _, o := range tc.outcomes {
				a.add(o)
			}
			got := want{Problem: a.problem, Conditions: a.Conditions, Waiting: a.waiting, Ready: a.Ready, Preserve: a.Preserve, RequeueAfter: a.RequeueAfter}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nassembly (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
