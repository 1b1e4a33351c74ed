package poolcapacity

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestStaleCondition checks that a pool whose cluster has not been observed
// within the bound says so, rather than looking quiet.
func TestStaleCondition(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		lastSync time.Time
		want     corev1.ConditionStatus
	}{
		"Current":     {lastSync: now.Add(-time.Minute), want: corev1.ConditionFalse},
		"Behind":      {lastSync: now.Add(-10 * time.Minute), want: corev1.ConditionTrue},
		"NeverSynced": {want: corev1.ConditionTrue},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := staleCondition(tc.lastSync, now, DefaultStaleAfter)
			if c.Type != TypeStale || c.Status != tc.want {
				t.Errorf("Stale = %s (%s: %s), want %s", c.Status, c.Reason, c.Message, tc.want)
			}
		})
	}
}
