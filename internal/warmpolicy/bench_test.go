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
// pattern and of random demand in every slot, from one to four weeks,
// without a cap that binds and with maxSlots 8 (which binds at the busiest
// slots, so Recommend plans without it too, to tell): what the provider
// computes for each pool at every slot boundary and lead.
func BenchmarkRecommend(b *testing.B) {
	for _, maxSlots := range []int32{0, 8} {
		g := Goal{WarmShare: 0.9, Lead: 2 * time.Minute, MaxExecutors: 64, MaxSlots: maxSlots, DollarsPerSlotHour: 1.16, PriceKnown: true}
		for _, weeks := range []int{1, 2, 4} {
			for _, kind := range []string{"pattern", "random"} {
				h := learned(weeks)
				if kind == "random" {
					h = busy(weeks, uint64(weeks))
				}
				t := monday.Add(time.Duration(weeks)*7*24*time.Hour + 10*time.Hour)
				name := fmt.Sprintf("%s/weeks=%d", kind, weeks)
				if maxSlots > 0 {
					name += fmt.Sprintf("/maxSlots=%d", maxSlots)
				}
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					var r Recommendation
					for b.Loop() {
						r = h.Recommend(t, g)
					}
					if r.Weeks != weeks || r.Executors < 0 || r.Executors > g.MaxExecutors || (maxSlots > 0 && r.Executors > maxSlots) {
						b.Fatalf("Recommend: %+v, from %d weeks", r, weeks)
					}
				})
			}
		}
	}
}

// encodeLadder is histories from the quietest the provider writes to the
// longest: the business pattern for a week and for four, and random
// demand in every slot of four weeks.
func encodeLadder() []struct {
	name string
	h    *History
} {
	return []struct {
		name string
		h    *History
	}{{"pattern/weeks=1", learned(1)}, {"pattern/weeks=4", learned(4)}, {"random/weeks=4", busy(Weeks, 9)}}
}

// BenchmarkEncode is one encoding of a history, as the provider writes it
// into the PoolCapacity status (at most once a minute a pool).
func BenchmarkEncode(b *testing.B) {
	for _, c := range encodeLadder() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var s string
			for b.Loop() {
				s = c.h.Encode()
				if len(s) > MaxEncodedBytes {
					b.Fatalf("Encode: %d bytes", len(s))
				}
			}
			if back, err := Decode(s); err != nil || *back != *c.h {
				b.Fatalf("Decode(Encode(h)) is not h: %v", err)
			}
			b.ReportMetric(float64(len(s)), "encoded-bytes")
		})
	}
}

// BenchmarkDecode is one decoding of an encoded history, as a provider
// that starts, or becomes the leader, reads each pool's from its status.
func BenchmarkDecode(b *testing.B) {
	for _, c := range encodeLadder() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			s := c.h.Encode()
			var h *History
			for b.Loop() {
				var err error
				if h, err = Decode(s); err != nil {
					b.Fatal(err)
				}
			}
			if *h != *c.h {
				b.Fatal("Decode(Encode(h)) is not h")
			}
		})
	}
}

// BenchmarkObserve is one observation, as the provider records one at
// every reconcile of a pool.
func BenchmarkObserve(b *testing.B) {
	b.ReportAllocs()
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
