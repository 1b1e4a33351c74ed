package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// TestDriftBudgets checks the Drifted budgets of drift windows. Karpenter
// allows the fewest disruptions of the active budgets that name a reason
// (sigs.k8s.io/karpenter@v1.14.1 pkg/apis/v1/nodepool.go,
// GetAllowedDisruptionsByReason) and a scheduled budget is active from each
// hit of its cron (UTC) for its duration (Budget.IsActive), so a window is
// its own budget plus a 0 budget for every stretch of the week it does not
// cover.
func TestDriftBudgets(t *testing.T) {
	drifted := func(nodes, schedule, duration string) objects.DriftBudget {
		return objects.DriftBudget{Nodes: nodes, Schedule: schedule, Duration: duration}
	}
	cases := map[string]struct {
		reason  string
		windows []v1beta1.DriftWindow
		pool    [2]string
		want    []objects.DriftBudget
	}{
		"NoWindow": {
			reason: "Without windows the NodePool keeps drift at 0 always (no scheduled budgets).",
		},
		"WeeklyWindow": {
			reason:  "Sundays 02:00 for 4h: closed from Sunday 06:00 for the other 164h.",
			windows: []v1beta1.DriftWindow{{Schedule: "0 2 * * sun", Duration: "4h"}},
			want:    []objects.DriftBudget{drifted("10%", "0 2 * * sun", "4h"), drifted("0", "0 6 * * 0", "164h")},
		},
		"DailyWindow": {
			reason:  "Every day 01:30 for 90m: closed from 03:00 to 01:30 the next day, each day of the week.",
			windows: []v1beta1.DriftWindow{{Schedule: "30 1 * * *", Duration: "90m", Nodes: "2"}},
			want: []objects.DriftBudget{
				drifted("2", "30 1 * * *", "1h30m"),
				drifted("0", "0 3 * * 0", "22h30m"), drifted("0", "0 3 * * 1", "22h30m"), drifted("0", "0 3 * * 2", "22h30m"),
				drifted("0", "0 3 * * 3", "22h30m"), drifted("0", "0 3 * * 4", "22h30m"), drifted("0", "0 3 * * 5", "22h30m"),
				drifted("0", "0 3 * * 6", "22h30m"),
			},
		},
		"WeekdaysAcrossTheWeekend": {
			reason:  "Mon-Fri 22:00 for 4h, past midnight: Friday's window ends Saturday 02:00, and the stretch to Monday 22:00 is one budget of 68h.",
			windows: []v1beta1.DriftWindow{{Schedule: "0 22 * * mon-fri", Duration: "4h"}},
			want: []objects.DriftBudget{
				drifted("10%", "0 22 * * mon-fri", "4h"),
				drifted("0", "0 2 * * 2", "20h"), drifted("0", "0 2 * * 3", "20h"), drifted("0", "0 2 * * 4", "20h"),
				drifted("0", "0 2 * * 5", "20h"), drifted("0", "0 2 * * 6", "68h"),
			},
		},
		"SaturdayNightIntoSunday": {
			reason:  "Saturday 22:00 for 4h wraps into Sunday 02:00; the closed stretch runs to the next Saturday 22:00.",
			windows: []v1beta1.DriftWindow{{Schedule: "@weekly", Duration: "2h"}, {Schedule: "0 22 * * 6", Duration: "2h"}},
			want: []objects.DriftBudget{
				drifted("10%", "@weekly", "2h"), drifted("10%", "0 22 * * 6", "2h"),
				drifted("0", "0 2 * * 0", "164h"),
			},
		},
		"OtherNamespace": {
			reason:  "A window for team-* pools does not apply to a pool of e6-pools.",
			windows: []v1beta1.DriftWindow{{Schedule: "0 2 * * sun", Duration: "4h", Namespaces: []string{"team-*"}}},
		},
		"ThisPoolByName": {
			reason:  "A window for pools named burst-* applies to burst-pool in any namespace.",
			windows: []v1beta1.DriftWindow{{Schedule: "0 2 * * sun", Duration: "4h", Pools: []string{"burst-*"}}},
			want:    []objects.DriftBudget{drifted("10%", "0 2 * * sun", "4h"), drifted("0", "0 6 * * 0", "164h")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := driftBudgets(tc.windows, "burst-pool", "e6-pools")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ndriftBudgets(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestValidateDriftWindows refuses what Karpenter would refuse, or what
// burstpool cannot close outside the window, naming the field.
func TestValidateDriftWindows(t *testing.T) {
	cases := map[string]struct {
		reason  string
		windows []v1beta1.DriftWindow
		want    []SettingError
	}{
		"Valid": {
			reason:  "Names, ranges and lists of days, macros and hour-and-minute durations are fine.",
			windows: []v1beta1.DriftWindow{{Schedule: "0 2 * * sun,wed", Duration: "1h30m", Nodes: "1"}, {Schedule: "@daily", Duration: "30m", Nodes: "100%"}},
		},
		"MonthlyIsNotWeekly": {
			reason:  "A day of the month cannot be closed by weekly budgets.",
			windows: []v1beta1.DriftWindow{{Schedule: "0 2 1 * *", Duration: "4h"}},
			want:    []SettingError{{Path: "karpenter.driftWindows[0].schedule", Message: `"0 2 1 * *" is not a weekly schedule: a drift window opens at one minute and one hour (UTC) on some days of the week, for example "0 2 * * sun", "30 1 * * mon-fri", "0 3 * * *" or @weekly`}},
		},
		"EveryFiveMinutes": {
			reason:  "Steps are not one minute of one hour.",
			windows: []v1beta1.DriftWindow{{Schedule: "*/5 * * * *", Duration: "4h"}},
			want:    []SettingError{{Path: "karpenter.driftWindows[0].schedule", Message: `"*/5 * * * *" is not a weekly schedule: a drift window opens at one minute and one hour (UTC) on some days of the week, for example "0 2 * * sun", "30 1 * * mon-fri", "0 3 * * *" or @weekly`}},
		},
		"BadDayAndDuration": {
			reason:  "An unknown day, seconds in the duration and a node count that is not one are each named.",
			windows: []v1beta1.DriftWindow{{Schedule: "0 2 * * funday", Duration: "30s", Nodes: "ten"}},
			want: []SettingError{
				{Path: "karpenter.driftWindows[0].duration", Message: `"30s" is not a duration of hours and minutes such as 4h, 90m or 1h30m`},
				{Path: "karpenter.driftWindows[0].nodes", Message: `"ten" is not a node count or a percentage such as 1 or 10%`},
				{Path: "karpenter.driftWindows[0].schedule", Message: `"0 2 * * funday" is not a weekly schedule: a drift window opens at one minute and one hour (UTC) on some days of the week, for example "0 2 * * sun", "30 1 * * mon-fri", "0 3 * * *" or @weekly: "funday" is not a day of the week (0-7 or sun-sat)`},
			},
		},
		"AWeekLong": {
			reason:  "A window of a week never closes.",
			windows: []v1beta1.DriftWindow{{Schedule: "0 2 * * sun", Duration: "168h"}},
			want:    []SettingError{{Path: "karpenter.driftWindows[0].duration", Message: `"168h" is not between one minute and one week`}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ValidateDriftWindows(tc.windows)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nValidateDriftWindows(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
