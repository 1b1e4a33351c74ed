package burst

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// Result is one scenario's measurement.
type Result struct {
	Scenario string
	// Executors is how many executors the burst asked for; Warm is how
	// many warm slots the pool kept before it.
	Executors, Warm int
	// ToRunning is, per executor pod, the time from its creation to
	// Running.
	ToRunning []time.Duration
	// AllRunning is the time from the burst (the executor Deployment's
	// creation) until every executor runs.
	AllRunning time.Duration
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of ds;
// zero for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100 + 0.999999)
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

// Table writes the results as a table, with each figure's ratio to the
// first result (the cold case), under a line naming the modelled cloud.
func Table(w io.Writer, cloud Cloud, rs []Result) error {
	if _, err := fmt.Fprintf(w, "simulated cloud: %s\n", cloud); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\texecutors\twarm slots\tp50 to Running\tp90 to Running\tall Running\tp50 / cold\tp90 / cold\tall / cold\t")
	var cold Result
	for i, r := range rs {
		if i == 0 {
			cold = r
		}
		p50, p90 := Percentile(r.ToRunning, 50), Percentile(r.ToRunning, 90)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Scenario, r.Executors, r.Warm,
			secs(p50), secs(p90), secs(r.AllRunning),
			ratio(p50, Percentile(cold.ToRunning, 50)), ratio(p90, Percentile(cold.ToRunning, 90)), ratio(r.AllRunning, cold.AllRunning))
	}
	return tw.Flush()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func ratio(d, cold time.Duration) string {
	if cold <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(d)/float64(cold))
}
