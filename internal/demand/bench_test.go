package demand

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/warmpolicy"
)

// fullHistory is the status of a pool observed for four weeks with a
// different peak and starts in every slot: the longest encoding, and a
// plan over every slot.
func fullHistory(end time.Time) v1alpha1.PoolCapacityObservation {
	h := &warmpolicy.History{}
	start := end.Add(-warmpolicy.Weeks * week)
	i := 0
	for now := start; now.Before(end); now = now.Add(warmpolicy.SlotLength) {
		h.Observe(now, int32(i%200), int32(i%37), int32(i%5))
		i++
	}
	o := observed(0, 0, 0)
	o.Demand = &v1alpha1.DemandHistory{Encoded: h.Encode(), Since: metav1.NewTime(start), Weeks: warmpolicy.Weeks}
	return o
}

// week is the length of a week.
const week = 7 * 24 * time.Hour

// heapOf is the live heap, after a collection.
func heapOf() uint64 {
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.HeapAlloc
}

// memoryPerPool is what the provider keeps in memory per pool, in bytes,
// measured over n pools with full histories.
func memoryPerPool(t testing.TB, n int) float64 {
	t.Helper()
	now := at(28, 10, 0)
	status := fullHistory(now)
	mems := make([]*Memory, n)
	before := heapOf()
	for i := range mems {
		m, out := Record(nil, Input{Spec: testSpec, Prev: status, Next: status, Now: now})
		if out.Reset != "" {
			t.Fatal(out.Reset)
		}
		mems[i] = m
	}
	after := heapOf()
	runtime.KeepAlive(mems)
	return float64(after-before) / float64(n)
}

// TestMemoryBound checks what the provider keeps per pool against the
// bound docs/capacity.md states: at most 16 KiB, so that a thousand pools
// hold at most 16 MiB of the provider's 300 MB.
func TestMemoryBound(t *testing.T) {
	const bound = 16 << 10
	if got := memoryPerPool(t, 1000); got > bound {
		t.Errorf("the provider keeps %.0f bytes per pool, more than %d", got, bound)
	}
}

// BenchmarkRecord measures one reconcile's Record of a pool with four
// weeks of history: one that changes nothing (most reconciles), one that
// writes the history with the status (a burst), one after a restart
// (decoded from status), and one that computes the learned level again.
func BenchmarkRecord(b *testing.B) {
	now := at(28, 10, 0)
	status := fullHistory(now)
	ask := learned(v1alpha1.LearnedGoal{TargetWarmPercent: 90, Lead: metav1.Duration{Duration: 5 * time.Minute}})
	cases := []struct {
		name string
		spec v1alpha1.PoolCapacityParameters
		// step returns the memory and the input of the i-th reconcile,
		// and checks its output.
		warm  bool
		check func(b *testing.B, m *Memory, in Input, out Output)
		next  func(i int) (v1alpha1.PoolCapacityObservation, time.Time)
	}{
		{name: "Unchanged", spec: testSpec, warm: true,
			next: func(i int) (v1alpha1.PoolCapacityObservation, time.Time) {
				return status, now.Add(time.Duration(i%60) * time.Second)
			},
			check: func(b *testing.B, _ *Memory, in Input, out Output) {
				if out.Demand != in.Prev.Demand {
					b.Fatal("a reconcile that changed nothing wrote the history")
				}
			}},
		{name: "Written", spec: testSpec, warm: true,
			next: func(i int) (v1alpha1.PoolCapacityObservation, time.Time) {
				return observed(int32(300+i), 0, 0), now.Add(time.Duration(i%60) * time.Second)
			},
			check: func(b *testing.B, _ *Memory, in Input, out Output) {
				if out.Demand == in.Prev.Demand {
					b.Fatal("a new peak with the status was not written")
				}
			}},
		{name: "Restarted", spec: testSpec,
			next: func(int) (v1alpha1.PoolCapacityObservation, time.Time) { return status, now },
			check: func(b *testing.B, m *Memory, _ Input, out Output) {
				if out.Reset != "" || m.since.IsZero() {
					b.Fatal("the history was not decoded")
				}
			}},
		{name: "Recommended", spec: ask, warm: true,
			next: func(i int) (v1alpha1.PoolCapacityObservation, time.Time) {
				return status, now.Add(time.Duration(1+i%4) * warmpolicy.SlotLength)
			},
			check: func(b *testing.B, _ *Memory, _ Input, out Output) {
				if out.Recommendation == nil {
					b.Fatal("no recommendation")
				}
			}},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			// The status as the first reconcile wrote it.
			var m *Memory
			prev := status
			if bc.warm {
				var out Output
				m, out = Record(nil, Input{Spec: bc.spec, Prev: status, Next: status, Now: now})
				prev.Demand, prev.WarmRecommendation = out.Demand, out.Recommendation
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				next, t := bc.next(i)
				next.Demand, next.WarmRecommendation = prev.Demand, prev.WarmRecommendation
				in := Input{Spec: bc.spec, Prev: prev, Next: next, Now: t}
				mem := m
				if !bc.warm {
					mem = nil
				}
				var out Output
				mem, out = Record(mem, in)
				bc.check(b, mem, in, out)
				if bc.warm {
					m = mem
				}
			}
		})
	}
}

// BenchmarkMemory reports what the provider keeps in memory per pool
// with a full history, on a ladder of pools.
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("%dPools", n), func(b *testing.B) {
			var per float64
			for range b.N {
				per = memoryPerPool(b, n)
			}
			b.ReportMetric(per, "bytes/pool")
		})
	}
}
