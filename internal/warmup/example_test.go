package warmup_test

import (
	"fmt"
	"time"

	"github.com/burstpool/burstpool/internal/warmup"
)

// A composition function run: compute the warm set, decide what to keep from
// what was observed, and render one DaemonSet per kept entry under its name.
func ExampleRetain() {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	unusedSince := now.Add(-45 * time.Minute)

	wanted := warmup.Set([]string{"busybox:1.36"}, true, map[string]string{
		"team-a/orders": "ghcr.io/e6data/executor:3.1",
		"team-b/events": "ghcr.io/e6data/executor:3.1",
	})
	observed := []warmup.Observed{
		{Name: warmup.ResourceName("ghcr.io/e6data/executor:3.0"), Image: "ghcr.io/e6data/executor:3.0", UnusedSince: &unusedSince},
	}
	plan := warmup.Retain(now, time.Hour, wanted, observed)

	for _, e := range plan.Keep {
		ds := warmup.DaemonSet(warmup.DaemonSetInput{
			Pool: "analytics", Namespace: "burstpool-system", Image: e.Image.Ref,
			HelperImage: "ghcr.io/burstpool/warm:v0.1.0", UnusedSince: e.UnusedSince,
		})
		fmt.Printf("%s %s %q unused=%t\n", e.Name, ds.Name, warmup.SourceText(e.Image.Sources), e.UnusedSince != nil)
	}
	fmt.Println("requeue after", plan.RequeueAfter)
	// Output:
	// warmup-46e8672987 analytics-warmup-46e8672987 "" unused=true
	// warmup-52955a7348 analytics-warmup-52955a7348 "QueryServices team-a/orders, team-b/events" unused=false
	// warmup-d55432289a analytics-warmup-d55432289a "cachedImages" unused=false
	// requeue after 15m0s
}
