package warmweek

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestShippedTrace checks that examples/warm/trace.csv is what the
// generator writes, so the two cannot drift: go run ./test/cmd/warmtrace
// rewrites it.
func TestShippedTrace(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", TracePath))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := WriteShipped(&want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want.Bytes(), got) {
		t.Errorf("%s is not what the generator writes: run go run ./test/cmd/warmtrace from the repository's root", TracePath)
	}
	rs, err := ReadCSV(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ShippedTrace(), rs, cmp.Comparer(time.Time.Equal)); diff != "" {
		t.Errorf("ReadCSV(WriteCSV(trace)): -want, +got:\n%s", diff)
	}
}

// TestShape checks the generated weeks against the shape the README
// states: per week, dashboards and notebooks only on weekdays in working
// hours, the nightly ETL once a day at 01:00-01:03 with 24 executors,
// ad-hoc at any hour.
func TestShape(t *testing.T) {
	loc := zone()
	for _, w := range Shipped() {
		etl := 0
		for _, r := range Generate(w.Monday, w.Seed) {
			local := r.At.In(loc)
			weekend := local.Weekday() == time.Saturday || local.Weekday() == time.Sunday
			switch r.QueryService {
			case Dashboards, Notebooks:
				if weekend || local.Hour() < 9 || local.Hour() >= 18 {
					t.Errorf("week %s: %s at %s, outside working hours", w.Monday.Format(time.DateOnly), r.QueryService, local)
				}
			case NightlyETL:
				etl++
				if local.Hour() != 1 || local.Minute() > 3 || r.Executors != etlExecutors {
					t.Errorf("week %s: the ETL at %s with %d executors", w.Monday.Format(time.DateOnly), local, r.Executors)
				}
			case AdHoc:
			default:
				t.Errorf("unknown QueryService %q", r.QueryService)
			}
			if r.At.Before(w.Monday) || !r.At.Before(w.Monday.AddDate(0, 0, 7)) {
				t.Errorf("week %s: a request at %s, outside the week", w.Monday.Format(time.DateOnly), local)
			}
		}
		if etl != 7 {
			t.Errorf("week %s: %d ETL runs, want 7", w.Monday.Format(time.DateOnly), etl)
		}
	}
}
