package e2e

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FaultTableEnv names the environment variable that, when set, names the
// file the fault table is written to (markdown) when a suite that records
// rows ends, so that docs/capacity.md can be refreshed from a run.
const FaultTableEnv = "BURSTPOOL_FAULT_TABLE"

// faultRow is one fault's line of the fault table: what a burst through
// the fault took, and what it lost. A zero duration is a figure not
// reached: the scenario failed before it.
type faultRow struct {
	// suite is the suite the fault ran in; its rows are logged when it
	// ends.
	suite string
	// Fault names the fault.
	Fault string
	// Held is how long the fault held.
	Held time.Duration
	// Running is the time from the burst (the executors scaled up) to all
	// of them Running.
	Running time.Duration
	// ExecutorsLost counts the executors that ran before the fault or once
	// the burst ran and no longer run (or run as another pod) after it;
	// -1 until counted.
	ExecutorsLost int
	// ComposedLost counts the objects the pool had composed before the
	// fault that are gone, or were replaced (another UID), after it; -1
	// until counted.
	ComposedLost int
	// Counted is the time from the fault's end, or the burst's executors
	// all Running when that came later, to the claim's status counting
	// what runs.
	Counted time.Duration
	// CountBound is the bound Counted is held to.
	CountBound time.Duration
	// Cost is how the PoolCapacity's cost stood after the fault:
	// advancing and attributing the burst's QueryService, or what was
	// wrong.
	Cost string
	// Proof is what shows the fault happened.
	Proof string
	// Note says what, outside burstpool, the burst waited on, when it
	// did.
	Note string
	// Failed records that the scenario failed.
	Failed bool
}

// newFaultRow adds the row of the fault name, whose claim must count what
// runs within countBound of its end, to the fault table, for the scenario
// t runs to fill in; the row says whether the scenario failed once it
// ends.
func newFaultRow(t *testing.T, name string, countBound time.Duration) *faultRow {
	t.Helper()
	r := &faultRow{suite: strings.SplitN(t.Name(), "/", 2)[0], Fault: name, CountBound: countBound, ExecutorsLost: -1, ComposedLost: -1}
	faultRows.add(r)
	t.Cleanup(func() { r.Failed = t.Failed() })
	return r
}

// faultTable gathers the rows of the fault scenarios of every suite in
// the test binary; it is safe for concurrent use.
type faultTable struct {
	mu   sync.Mutex
	rows []*faultRow
}

// faultRows is the test binary's fault table: TestFaults and
// TestRemoteClusters add to it.
var faultRows = &faultTable{}

// add adds r, which its scenario goes on filling in, to the table.
func (ft *faultTable) add(r *faultRow) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.rows = append(ft.rows, r)
}

// report logs the rows suite recorded as a markdown table and, when
// FaultTableEnv names a file, writes every row recorded so far there, the
// suites in name order. Called from a suite's cleanup, it runs once its
// scenarios have all ended.
func (ft *faultTable) report(t *testing.T, suite string) {
	t.Helper()
	ft.mu.Lock()
	defer ft.mu.Unlock()
	var own []faultRow
	all := make([]faultRow, 0, len(ft.rows))
	for _, r := range ft.rows {
		all = append(all, *r)
		if r.suite == suite {
			own = append(own, *r)
		}
	}
	if len(own) == 0 {
		return
	}
	t.Logf("fault table of %s:\n%s", suite, faultMarkdown(own))
	path := os.Getenv(FaultTableEnv)
	if path == "" {
		return
	}
	slices.SortStableFunc(all, func(a, b faultRow) int { return strings.Compare(a.suite, b.suite) })
	if err := os.WriteFile(path, []byte(faultMarkdown(all)), 0o644); err != nil { //nolint:gosec // a report meant to be read
		t.Errorf("cannot write the fault table to %s=%s: %v", FaultTableEnv, path, err)
	}
}

// faultMarkdown is rows as a markdown table.
func faultMarkdown(rows []faultRow) string {
	var b strings.Builder
	b.WriteString("| Fault | Held | Burst to all executors Running | Executors lost | Composed objects lost | Counted on the claim after | Cost after | What shows the fault happened |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		name := r.Fault
		if r.Failed {
			name += " (failed)"
		}
		counted := seconds(r.Counted)
		if r.Counted > 0 {
			counted += " (bound " + seconds(r.CountBound) + ")"
		}
		running := seconds(r.Running)
		if r.Note != "" {
			running += " (" + r.Note + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			name, seconds(r.Held), running, count(r.ExecutorsLost), count(r.ComposedLost), counted, orNotReached(r.Cost), orNotReached(r.Proof))
	}
	return b.String()
}

// seconds is d in seconds to a tenth, or "not reached" for zero.
func seconds(d time.Duration) string {
	if d <= 0 {
		return "not reached"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// count is n, or "not reached" while it is negative (not counted).
func count(n int) string {
	if n < 0 {
		return "not reached"
	}
	return strconv.Itoa(n)
}

func orNotReached(s string) string {
	if s == "" {
		return "not reached"
	}
	return s
}

// TestFaultMarkdown checks the fault table's markdown: one line a fault,
// figures in seconds, a figure not reached said so, a failed row marked.
func TestFaultMarkdown(t *testing.T) {
	head := "| Fault | Held | Burst to all executors Running | Executors lost | Composed objects lost | Counted on the claim after | Cost after | What shows the fault happened |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- |\n"
	cases := map[string]struct {
		reason string
		rows   []faultRow
		want   string
	}{
		"Measured": {
			reason: "every figure of a passed row, in seconds to a tenth, with the count's bound",
			rows: []faultRow{{Fault: "Karpenter restarted", Held: 10 * time.Second, Running: 23456 * time.Millisecond,
				Counted: 1200 * time.Millisecond, CountBound: statusBound, Cost: "advancing", Proof: "2 nodes launched after"}},
			want: head + "| Karpenter restarted | 10.0 s | 23.5 s | 0 | 0 | 1.2 s (bound 10.0 s) | advancing | 2 nodes launched after |\n",
		},
		"FailedEarly": {
			reason: "a scenario that failed before a figure leaves it not reached, and its row says it failed",
			rows:   []faultRow{{Fault: "API server restarted", Held: 5 * time.Second, ExecutorsLost: 1, ComposedLost: -1, Failed: true}},
			want:   head + "| API server restarted (failed) | 5.0 s | not reached | 1 | not reached | not reached | not reached | not reached |\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, faultMarkdown(tc.rows)); diff != "" {
				t.Errorf("%s\nfaultMarkdown: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
