package main

import (
	"testing"
	"time"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// TestFollow: while Crossplane's watch circuit of the XPool is open (it
// drops the PoolCapacity's events, crossplane core v2.4 internal/circuit),
// the function asks to be called again every FollowInterval, so executor
// changes reach the Pool within about that; otherwise, an idle pool among
// them, it keeps the default TTL of a minute.
func TestFollow(t *testing.T) {
	base := scenario{XR: xpool("burst", "pools", basicSpec), QueryServices: allQS, CRDs: kwokCRDs}
	observed := observe(t, base.run(t), healthy(4, 4))
	responsive := func(status, reason string, since time.Time) string {
		return "  phase: Active\n  conditions:\n  - type: Responsive\n    status: \"" + status + "\"\n    reason: " + reason +
			"\n    lastTransitionTime: \"" + since.Format(time.RFC3339) + "\"\n"
	}
	cases := map[string]struct {
		reason string
		status string
		want   time.Duration
	}{
		"NoCondition": {
			reason: "Crossplane said nothing of its watch circuit: the default TTL.",
			status: "  phase: Active\n",
			want:   time.Minute,
		},
		"Closed": {
			reason: "The circuit is closed: the PoolCapacity's events arrive, the default TTL.",
			status: responsive("True", "WatchCircuitClosed", now.Add(-time.Minute)),
			want:   time.Minute,
		},
		"JustOpened": {
			reason: "The circuit opened a minute ago: Crossplane lets one event through in 30 s, so the pool follows its counts every FollowInterval.",
			status: responsive("False", "WatchCircuitOpen", now.Add(-time.Minute)),
			want:   decision.FollowInterval,
		},
		"OpenLongAgo": {
			reason: "The circuit opened longer ago than its cooldown (the condition is only stale): the default TTL, so an idle pool is not polled.",
			status: responsive("False", "WatchCircuitOpen", now.Add(-time.Hour)),
			want:   time.Minute,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sc := base
			sc.XR = withStatus(base.XR, tc.status)
			sc.Observed = observed
			if got := sc.run(t).GetMeta().GetTtl().AsDuration(); got != tc.want {
				t.Errorf("%s\nTTL = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
