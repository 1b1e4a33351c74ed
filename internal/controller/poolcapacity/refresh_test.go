package poolcapacity

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// TestWarmRefresh checks when a PoolCapacity is reconciled next: at its
// learned warm level's until when that comes before the poll, so that the
// level follows the history's slots on time.
func TestWarmRefresh(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 58, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	cases := map[string]struct {
		reason string
		rec    *v1alpha1.WarmRecommendation
		want   time.Duration
	}{
		"NoRecommendation": {
			reason: "A pool without a learned level is polled as usual.",
			want:   time.Minute,
		},
		"DueBeforeThePoll": {
			reason: "A level due in 20 s is asked again then.",
			rec:    &v1alpha1.WarmRecommendation{Until: metav1.NewTime(now.Add(20 * time.Second))},
			want:   20 * time.Second,
		},
		"DueAfterThePoll": {
			reason: "A level due after the poll waits for the poll.",
			rec:    &v1alpha1.WarmRecommendation{Until: metav1.NewTime(now.Add(10 * time.Minute))},
			want:   time.Minute,
		},
		"Overdue": {
			reason: "A level already due is asked again within a second, not at once over and over.",
			rec:    &v1alpha1.WarmRecommendation{Until: metav1.NewTime(now.Add(-time.Minute))},
			want:   time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.PoolCapacity{}
			cr.Status.AtProvider.WarmRecommendation = tc.rec
			if got := warmRefresh(clock)(cr, time.Minute); got != tc.want {
				t.Errorf("%s\nrequeue after %s, want %s", tc.reason, got, tc.want)
			}
		})
	}
}
