package warmup

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkPlan measures one composition run's warmup work, Set then Retain,
// for a pool with 1000 attached QueryServices sharing a number of executor
// images, with a tenth as many images again lingering unwanted.
func BenchmarkPlan(b *testing.B) {
	const queryServices = 1000
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, images := range []int{1, 20, 200} {
		b.Run(fmt.Sprintf("images=%d", images), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, uint64(images)))
			refs := make([]string, images)
			for i := range refs {
				refs[i] = fmt.Sprintf("123456789012.dkr.ecr.us-east-1.amazonaws.com/e6data/executor:3.%d.%d", i, r.IntN(100))
			}
			qsImages := make(map[string]string, queryServices)
			for i := range queryServices {
				ref := refs[i%images] // every image is used at least once
				if i >= images {
					ref = refs[r.IntN(images)]
				}
				qsImages[fmt.Sprintf("tenant-%d/qs-%d", r.IntN(50), i)] = ref
			}
			cached := []string{refs[0]}

			// Observed: every wanted image plus images that left the set.
			var observed []Observed
			for _, ref := range refs {
				observed = append(observed, Observed{Name: ResourceName(ref), Image: Normalize(ref)})
			}
			old := images/10 + 1
			for i := range old {
				ref := fmt.Sprintf("ghcr.io/e6data/executor:old-%d", i)
				since := now.Add(-time.Duration(r.IntN(50)) * time.Minute)
				observed = append(observed, Observed{Name: ResourceName(ref), Image: ref, UnusedSince: &since})
			}
			r.Shuffle(len(observed), func(i, j int) { observed[i], observed[j] = observed[j], observed[i] })

			b.ReportAllocs()
			for b.Loop() {
				set := Set(cached, true, qsImages)
				p := Retain(now, time.Hour, set, observed)
				if len(set) != images || len(p.Keep) != images+old || len(p.Dropped) != 0 || p.RequeueAfter <= 0 {
					b.Fatalf("got %d images, plan keeps %d drops %d requeue %s; want %d images, %d kept",
						len(set), len(p.Keep), len(p.Dropped), p.RequeueAfter, images, images+old)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/queryServices, "ns/qs")
			b.ReportMetric(float64(images), "images")
		})
	}
}

// BenchmarkDaemonSet measures rendering one warmup DaemonSet.
func BenchmarkDaemonSet(b *testing.B) {
	in := DaemonSetInput{
		Pool: "analytics", Namespace: "burstpool-system",
		Image: "ghcr.io/e6data/executor:3.1.4", HelperImage: "ghcr.io/burstpool/warm:v0.1.0",
		PullSecrets: []string{"ghcr"}, NodeSelector: map[string]string{"e6data.io/pool": "analytics"},
	}
	b.ReportAllocs()
	for b.Loop() {
		if ds := DaemonSet(in); len(ds.Spec.Template.Spec.InitContainers) != 2 {
			b.Fatal("want two init containers")
		}
	}
}
