package warmpolicy

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// busy is weeks of random demand in every slot: the most a history holds.
func busy(weeks int, seed uint64) *History {
	rng := rand.New(rand.NewPCG(seed, 1))
	h := &History{}
	for i := range weeks * SlotsPerWeek {
		s := rng.Int32N(40)
		h.Observe(monday.Add(time.Duration(i)*SlotLength+time.Minute), rng.Int32N(64), s, rng.Int32N(s+1))
	}
	return h
}

// BenchmarkRecommend is one learned level, on histories of the business
// pattern and of random demand in every slot, from one to four weeks:
// what the provider computes for each pool at every slot boundary and
// lead.
func BenchmarkRecommend(b *testing.B) {
	g := Goal{WarmShare: 0.9, Lead: 2 * time.Minute, MaxExecutors: 64, DollarsPerSlotHour: 1.16}
	for _, weeks := range []int{1, 2, 4} {
		for _, kind := range []string{"pattern", "random"} {
			h := learned(weeks)
			if kind == "random" {
				h = busy(weeks, uint64(weeks))
			}
			t := monday.Add(time.Duration(weeks)*7*24*time.Hour + 10*time.Hour)
			b.Run(fmt.Sprintf("%s/weeks=%d", kind, weeks), func(b *testing.B) {
				var r Recommendation
				for b.Loop() {
					r = h.Recommend(t, g)
				}
				if r.Weeks != weeks || r.Executors < 0 || r.Executors > g.MaxExecutors {
					b.Fatalf("Recommend: %+v, from %d weeks", r, weeks)
				}
			})
		}
	}
}

// BenchmarkEncodeDecode is a full history's round trip through the
// PoolCapacity status, as the provider writes and a restarted one reads it.
func BenchmarkEncodeDecode(b *testing.B) {
	h := busy(Weeks, 9)
	var n int
	for b.Loop() {
		s := h.Encode()
		n = len(s)
		if _, err := Decode(s); err != nil {
			b.Fatal(err)
		}
	}
	if n > MaxEncodedBytes {
		b.Fatalf("Encode: %d bytes", n)
	}
	b.ReportMetric(float64(n), "encoded-bytes")
}

// BenchmarkObserve is one observation, as the provider records one at
// every reconcile of a pool.
func BenchmarkObserve(b *testing.B) {
	h := busy(Weeks, 3)
	t := monday.Add(Weeks * 7 * 24 * time.Hour)
	i := 0
	for b.Loop() {
		h.Observe(t.Add(time.Duration(i)*time.Second), int32(i%50), int32(i%3), 0)
		i++
	}
	if h.Weeks() == 0 {
		b.Fatal("nothing observed")
	}
}
