package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// TestDriftWindowsComposeScheduledBudgets replays a platform that wants new
// node images on its pools within a week, not at expiry (720h plus the
// grace period): a drift window in the settings gives the pool's NodePool
// a scheduled Drifted budget while it is open and 0 for the rest of the
// week (Karpenter takes the fewest disruptions of the active budgets,
// sigs.k8s.io/karpenter@v1.14.1 pkg/apis/v1/nodepool.go,
// GetAllowedDisruptionsByReason), with Underutilized still 0; a window
// Karpenter could not run is refused, naming the field; a window for
// other pools leaves the pool's budgets as they were. Every NodePool
// passes Karpenter's CRD schema (its budgets' schedule and duration
// patterns).
func TestDriftWindowsComposeScheduledBudgets(t *testing.T) {
	reg, err := schemacheck.Upstream()
	if err != nil {
		t.Fatalf("cannot load the upstream schemas (see test/harness/schemacheck): %v", err)
	}
	spec := "  maxExecutors: 8\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n  instanceConfig: {instanceType: r7gd.4xlarge}\n"
	budget := func(nodes string, reasons []any, schedule, duration string) any {
		b := map[string]any{"nodes": nodes, "reasons": reasons}
		if schedule != "" {
			b["schedule"], b["duration"] = schedule, duration
		}
		return b
	}
	empty := budget("100%", []any{"Empty"}, "", "")
	cases := map[string]struct {
		reason   string
		settings string
		want     []any
		pending  string
	}{
		"NoWindow": {
			reason: "Without a window drift stays 0 always.",
			want:   []any{empty, budget("0", []any{"Drifted", "Underutilized"}, "", "")},
		},
		"SundayWindow": {
			reason:   "A Sunday 02:00 window of 4h for every pool: Drifted 1 while open, 0 from Sunday 06:00 for 164h.",
			settings: "  karpenter:\n    driftWindows:\n    - {schedule: \"0 2 * * sun\", duration: 4h, nodes: \"1\"}\n",
			want: []any{empty, budget("0", []any{"Underutilized"}, "", ""),
				budget("1", []any{"Drifted"}, "0 2 * * sun", "4h"), budget("0", []any{"Drifted"}, "0 6 * * 0", "164h")},
		},
		"WindowOfOtherPools": {
			reason:   "A window for the pools of team-* namespaces does not apply to a pool of pools.",
			settings: "  karpenter:\n    driftWindows:\n    - {schedule: \"0 2 * * sun\", duration: 4h, namespaces: [\"team-*\"]}\n",
			want:     []any{empty, budget("0", []any{"Drifted", "Underutilized"}, "", "")},
		},
		"MonthlyRefused": {
			reason:   "A monthly schedule cannot be closed with weekly budgets: the pool is Pending, naming the field and the form that works.",
			settings: "  karpenter:\n    driftWindows:\n    - {schedule: \"0 2 1 * *\", duration: 4h}\n",
			pending:  `EnvironmentConfig burstpool field data.karpenter.driftWindows[0].schedule "0 2 1 * *" is not a weekly schedule`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{Input: shippedInput(t), Environment: disruptionEnvironment(clusterSettings + tc.settings),
				XR: xpool("burst", "pools", spec), QueryServices: allQS, CRDs: awsCRDs, Catalog: true}.run(t)
			st := status(rsp)
			if tc.pending != "" {
				if msg, _ := st["message"].(string); st["phase"] != "Pending" || !strings.Contains(msg, tc.pending) {
					t.Errorf("%s\nphase %v (%q), want Pending saying %q", tc.reason, st["phase"], msg, tc.pending)
				}
				return
			}
			np := desired(rsp, "nodepool")
			if np == nil {
				t.Fatalf("%s\nno NodePool: %v", tc.reason, results(rsp))
			}
			if err := reg.Validate(np); err != nil {
				t.Errorf("%s\nthe NodePool is invalid: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, disruptionOf(np).Budgets); diff != "" {
				t.Errorf("%s\nspec.disruption.budgets: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
