package warmweek

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/internal/warmpolicy"
	"github.com/burstpool/burstpool/test/burst"
)

// The replayed pool: executors of 8 CPU and 60 GiB on r7gd.4xlarge, one a
// node, as make bench-burst bursts them; maxExecutors well above the
// trace's peak.
const (
	instanceType = "r7gd.4xlarge"
	perNode      = 1
	maxExecutors = 64
	// consolidateAfter is what burstpool composes into the pool's
	// NodePool unless the settings say otherwise
	// (functions/pool-compose/decision/defaults.go,
	// defaultConsolidateAfter), under consolidationPolicy WhenEmpty.
	consolidateAfter = 5 * time.Minute
	// targetWarm is the learned policy's target share of warm starts.
	targetWarm = 0.9
)

// cloud is make bench-burst's simulated cloud: its node launch, its
// executor image's pull at its throughput, and its measured warm start.
func cloud() Cloud {
	c := burst.Cloud{Throughput: burst.DefaultPullMiBPerSecond << 20, DefaultImageSize: burst.DefaultExecutorImageMiB << 20}
	return Cloud{Launch: burst.DefaultLaunch, Pull: c.Pull(""), WarmStart: burst.MeasuredWarmStart}
}

// slotPrice is the on-demand price of instanceType in burstpool's AWS
// catalog (internal/sizing/catalogs/aws.yaml, us-east-1) over perNode.
func slotPrice(tb testing.TB) float64 {
	c, err := sizing.SharedCatalog(sizing.CloudAWS)
	if err != nil {
		tb.Fatal(err)
	}
	it, ok := c.Lookup(instanceType)
	if !ok {
		tb.Fatalf("%s is not in the AWS catalog", instanceType)
	}
	return it.PricePerHour / perNode
}

// lead is how far ahead the scheduled and learned levels rise: the cold
// start, to the next minute.
func lead() time.Duration {
	return cloud().ColdStart().Truncate(time.Minute) + time.Minute
}

// Windows are what a platform team would write from the history weeks of
// the trace (examples/warm/README.md): the working day at 20, between the
// 99th and the 99.9th percentile of interactive executors running at once
// in working hours, and the nightly ETL's start at
// its size (its executors hold the level once they run).
var Windows = []warmpolicy.Window{
	{Name: "business-hours", Schedule: "0 9 * * 1-5", Duration: 9 * time.Hour, Executors: 20, TimeZone: Zone},
	{Name: "nightly-etl", Schedule: "0 1 * * *", Duration: 15 * time.Minute, Executors: 24, TimeZone: Zone},
}

// replay is the shipped trace and its weeks.
type replay struct {
	trace             []Request
	history, measured time.Time
	end               time.Time
	peak              int
	mean              float64
	measuredExecutors int
}

func load(tb testing.TB) replay {
	f, err := os.Open(filepath.Join("..", "..", TracePath))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only
	trace, err := ReadCSV(f)
	if err != nil {
		tb.Fatalf("%s: %v", TracePath, err)
	}
	weeks := Shipped()
	r := replay{trace: trace, history: weeks[0].Monday}
	for _, w := range weeks {
		if w.Measured {
			r.measured, r.end = w.Monday, w.Monday.AddDate(0, 0, 7)
		}
	}
	// What the platform team knows: the weeks before the measured one.
	r.peak, r.mean = Concurrency(trace, r.history, r.measured)
	for _, q := range trace {
		if !q.At.Before(r.measured) && q.At.Before(r.end) {
			r.measuredExecutors += q.Executors
		}
	}
	return r
}

// policies are the replayed policies, in the table's order.
func policies(tb testing.TB, r replay, price float64) []func() Policy {
	scheduled := func() Policy {
		p, err := NewScheduled(Windows, 0, maxExecutors, lead())
		if err != nil {
			tb.Fatal(err)
		}
		return p
	}
	return []func() Policy{
		func() Policy { return &Static{Label: "none", MaxExecutors: maxExecutors} },
		func() Policy {
			return &Static{Label: "static-peak", MinExecutors: int32(r.peak), MaxExecutors: maxExecutors}
		},
		func() Policy {
			return &Static{Label: "static-mean", MinExecutors: int32(math.Ceil(r.mean)), MaxExecutors: maxExecutors}
		},
		scheduled,
		func() Policy {
			return &Learned{MaxExecutors: maxExecutors, Goal: warmpolicy.Goal{
				WarmShare: targetWarm, Lead: lead(), MaxExecutors: maxExecutors, DollarsPerSlotHour: price, PriceKnown: true,
			}}
		},
	}
}

var (
	resultsMu sync.Mutex
	results   = map[string]Result{}
)

// BenchmarkReplayWeek replays the shipped trace, its history weeks and its
// measured week, under each policy, and reports for the measured week:
// the warm slots' cost, the share of executors started on an existing
// node, and p50/p90 time to Running.
func BenchmarkReplayWeek(b *testing.B) {
	r := load(b)
	price := slotPrice(b)
	for _, mk := range policies(b, r, price) {
		b.Run(mk().Name(), func(b *testing.B) {
			var res Result
			for b.Loop() {
				var err error
				if res, err = Replay(r.trace, r.measured, r.end, mk(), cloud(), Pool{
					MaxExecutors: maxExecutors, PerNode: perNode, ConsolidateAfter: consolidateAfter, SlotDollarsPerHour: price,
				}); err != nil {
					b.Fatal(err)
				}
				check(b, r, res)
			}
			b.ReportMetric(res.WarmDollars, "warm-$/week")
			b.ReportMetric(100*res.WarmShare(), "warm-%")
			b.ReportMetric(burst.Percentile(res.ToRunning, 50).Seconds(), "p50-s")
			b.ReportMetric(burst.Percentile(res.ToRunning, 90).Seconds(), "p90-s")
			resultsMu.Lock()
			results[res.Policy] = res
			resultsMu.Unlock()
		})
	}
}

// check fails b when res does not account for the measured week.
func check(b *testing.B, r replay, res Result) {
	b.Helper()
	if res.Executors != r.measuredExecutors || len(res.ToRunning) != res.Executors {
		b.Fatalf("%s: %d executors started (%d times), the measured week asks for %d", res.Policy, res.Executors, len(res.ToRunning), r.measuredExecutors)
	}
	c := cloud()
	for _, d := range res.ToRunning {
		if d < c.WarmStart || d > c.ColdStart() {
			b.Fatalf("%s: an executor ran after %s, outside [%s, %s]", res.Policy, d, c.WarmStart, c.ColdStart())
		}
	}
	if res.WarmSlotHours < 0 || res.NodeHours*perNode < res.WarmSlotHours {
		b.Fatalf("%s: %.1f warm slot-hours on %.1f node-hours", res.Policy, res.WarmSlotHours, res.NodeHours)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if len(results) > 0 {
		table(os.Stdout)
	}
	os.Exit(code)
}

// table prints the results in the policies' order, with cost as a share
// of static-peak's.
func table(f *os.File) {
	order := []string{"none", "static-peak", "static-mean", "scheduled", "learned"}
	peak := results["static-peak"].WarmDollars
	w := tabwriter.NewWriter(f, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprintln(w, "policy\tmax level\twarm slot-h\twarm $/week\t/ static-peak\tnode $/week\twarm starts\tp50 to Running\tp90 to Running\t")
	for _, name := range order {
		res, ok := results[name]
		if !ok {
			continue
		}
		ratio := "-"
		if peak > 0 {
			ratio = fmt.Sprintf("%.2f", res.WarmDollars/peak)
		}
		_, _ = fmt.Fprintf(w, "%s\t%d\t%.0f\t%.0f\t%s\t%.0f\t%.1f%%\t%.1fs\t%.1fs\t\n", name, res.MaxLevel, res.WarmSlotHours, res.WarmDollars, ratio, res.NodeDollars,
			100*res.WarmShare(), burst.Percentile(res.ToRunning, 50).Seconds(), burst.Percentile(res.ToRunning, 90).Seconds())
	}
	_ = w.Flush()
}
