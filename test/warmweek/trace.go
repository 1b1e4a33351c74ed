package warmweek

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // Zone resolves the same on every host
)

// Request is one line of a trace: Executors executors of QueryService,
// asked for at At, each running for Duration once it starts.
type Request struct {
	At           time.Time
	QueryService string
	Executors    int
	Duration     time.Duration
}

// The trace's QueryServices.
const (
	Dashboards = "dashboards"
	Notebooks  = "notebooks"
	NightlyETL = "nightly-etl"
	AdHoc      = "adhoc"
)

// Zone is where the trace's users and jobs keep their hours.
const Zone = "America/New_York"

// Week is one week of a shipped trace: from Monday 00:00 in Zone, drawn
// with Seed.
type Week struct {
	Monday time.Time
	Seed   uint64
	// Measured is the week every policy is measured on; the weeks before
	// it are the history a learned level starts from.
	Measured bool
}

// Shipped are the weeks of examples/warm/trace.csv: three weeks of
// history, then the measured week, each drawn from the same shape with
// its own seed. None crosses a change of daylight saving time in Zone.
func Shipped() []Week {
	loc := zone()
	monday := func(day int) time.Time { return time.Date(2026, time.April, day, 0, 0, 0, 0, loc) }
	return []Week{
		{Monday: monday(6), Seed: 1},
		{Monday: monday(13), Seed: 2},
		{Monday: monday(20), Seed: 3},
		{Monday: monday(27), Seed: 4, Measured: true},
	}
}

func zone() *time.Location {
	loc, err := time.LoadLocation(Zone)
	if err != nil {
		panic(fmt.Sprintf("time zone %s: %v", Zone, err)) // time/tzdata is linked by warmpolicy
	}
	return loc
}

// stream is one QueryService's demand: Poisson arrivals at rate(day,
// hour) per hour of local time (day 0 is Monday), each asking for
// executors in [minExec, maxExec] for a duration in [minDur, maxDur],
// uniformly.
type stream struct {
	name             string
	id               uint64
	rate             func(day, hour int) float64
	minExec, maxExec int
	minDur, maxDur   time.Duration
}

// shape is the week the generator draws from; examples/warm/README.md
// explains each figure.
var shape = []stream{
	{
		// Dashboards refreshed and explored in working hours, busiest
		// mid-morning and mid-afternoon: 57 bursts a weekday.
		name: Dashboards, id: 1,
		rate: func(day, hour int) float64 {
			if day >= 5 {
				return 0
			}
			return map[int]float64{9: 4, 10: 8, 11: 8, 12: 5, 13: 8, 14: 8, 15: 8, 16: 5, 17: 4}[hour]
		},
		minExec: 2, maxExec: 6, minDur: 3 * time.Minute, maxDur: 12 * time.Minute,
	},
	{
		// Analysts' notebooks in working hours: fewer, smaller, longer.
		name: Notebooks, id: 2,
		rate: func(day, hour int) float64 {
			if day >= 5 || hour < 9 || hour >= 18 {
				return 0
			}
			return 2
		},
		minExec: 1, maxExec: 3, minDur: 10 * time.Minute, maxDur: 40 * time.Minute,
	},
	{
		// Ad-hoc queries at any hour of any day, more in the waking hours.
		name: AdHoc, id: 3,
		rate: func(day, hour int) float64 {
			if hour >= 7 && hour < 22 {
				return 0.5
			}
			return 0.2
		},
		minExec: 1, maxExec: 4, minDur: 5 * time.Minute, maxDur: 30 * time.Minute,
	},
}

// The nightly ETL: every day at 01:00 in Zone, started by its scheduler
// within etlJitter, etlExecutors executors for etlMin to etlMax.
const (
	etlExecutors = 24
	etlJitter    = 3 * time.Minute
	etlMin       = 100 * time.Minute
	etlMax       = 120 * time.Minute
	etlID        = 4
)

// draw is a source of uniform numbers from PCG-DXSM (math/rand/v2's PCG,
// whose Uint64 is fixed by its algorithm), converted here rather than by
// math/rand's distributions, so that a trace stays the same across Go
// releases.
type draw struct{ src *rand.PCG }

func newDraw(seed, stream uint64) draw { return draw{src: rand.NewPCG(seed, stream)} }

// unit is uniform in [0, 1).
func (d draw) unit() float64 { return float64(d.src.Uint64()>>11) / (1 << 53) }

// between is uniform in [lo, hi].
func (d draw) between(lo, hi int) int { return lo + int(d.unit()*float64(hi-lo+1)) }

// duration is uniform in [lo, hi], to the second.
func (d draw) duration(lo, hi time.Duration) time.Duration {
	return (lo + time.Duration(d.unit()*float64(hi-lo))).Round(time.Second)
}

// gap is exponential with rate per hour, in hours.
func (d draw) gap(rate float64) float64 { return -math.Log(1-d.unit()) / rate }

// Generate draws one week of demand from Monday 00:00 (in Zone), sorted
// by time, then QueryService. The same monday and seed give the same
// requests.
func Generate(monday time.Time, seed uint64) []Request {
	loc := zone()
	monday = monday.In(loc)
	var out []Request
	for _, s := range shape {
		d := newDraw(seed, s.id)
		for day := range 7 {
			for hour := range 24 {
				rate := s.rate(day, hour)
				if rate <= 0 {
					continue
				}
				start := time.Date(monday.Year(), monday.Month(), monday.Day()+day, hour, 0, 0, 0, loc)
				for at := d.gap(rate); at < 1; at += d.gap(rate) {
					out = append(out, Request{
						At:           start.Add(time.Duration(at * float64(time.Hour))).Truncate(time.Second),
						QueryService: s.name,
						Executors:    d.between(s.minExec, s.maxExec),
						Duration:     d.duration(s.minDur, s.maxDur),
					})
				}
			}
		}
	}
	d := newDraw(seed, etlID)
	for day := range 7 {
		one := time.Date(monday.Year(), monday.Month(), monday.Day()+day, 1, 0, 0, 0, loc)
		out = append(out, Request{
			At:           one.Add(d.duration(0, etlJitter)),
			QueryService: NightlyETL,
			Executors:    etlExecutors,
			Duration:     d.duration(etlMin, etlMax),
		})
	}
	slices.SortStableFunc(out, func(a, b Request) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.QueryService, b.QueryService)
	})
	return out
}

// ShippedTrace is every week of Shipped, generated.
func ShippedTrace() []Request {
	var out []Request
	for _, w := range Shipped() {
		out = append(out, Generate(w.Monday, w.Seed)...)
	}
	return out
}

const header = "at,queryservice,executors,seconds"

// WriteCSV writes a trace: a comment, then one line a request, its time
// in UTC (RFC 3339) and its duration in seconds.
func WriteCSV(w io.Writer, comment string, rs []Request) error {
	// A bufio.Writer keeps its first error and returns it from Flush.
	bw := bufio.NewWriter(w)
	for _, l := range strings.Split(strings.TrimSpace(comment), "\n") {
		_, _ = fmt.Fprintf(bw, "# %s\n", l)
	}
	_, _ = fmt.Fprintln(bw, header)
	for _, r := range rs {
		_, _ = fmt.Fprintf(bw, "%s,%s,%d,%d\n", r.At.UTC().Format(time.RFC3339), r.QueryService, r.Executors, int64(r.Duration/time.Second))
	}
	return bw.Flush()
}

// ReadCSV reads what WriteCSV wrote.
func ReadCSV(r io.Reader) ([]Request, error) {
	var out []Request
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		if strings.HasPrefix(l, "#") || l == header || l == "" {
			continue
		}
		f := strings.Split(l, ",")
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: want 4 fields (%s), got %d", line, header, len(f))
		}
		at, err := time.Parse(time.RFC3339, f[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("line %d: executors: %w", line, err)
		}
		secs, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: seconds: %w", line, err)
		}
		out = append(out, Request{At: at, QueryService: f[1], Executors: n, Duration: time.Duration(secs) * time.Second})
	}
	return out, sc.Err()
}

// TracePath is the shipped trace, from the repository's root.
const TracePath = "examples/warm/trace.csv"

// WriteShipped writes the shipped trace, as in TracePath.
func WriteShipped(w io.Writer) error {
	comment := `The demand trace of make bench-warm (examples/warm/README.md): executor
requests of four QueryServices of one pool, in UTC; the hours are kept in ` + Zone + `.
Written by go run ./test/cmd/warmtrace (package test/warmweek); do not edit.
Weeks (from Monday 00:00 ` + Zone + `), each drawn with its own seed:`
	for _, wk := range Shipped() {
		role := "history"
		if wk.Measured {
			role = "measured"
		}
		comment += fmt.Sprintf("\n  %s seed %d: %s", wk.Monday.Format("2006-01-02"), wk.Seed, role)
	}
	return WriteCSV(w, comment, ShippedTrace())
}
