package warmpolicy

import (
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // time zones resolve in images that carry no zone database (the host's is preferred where there is one)

	"github.com/robfig/cron/v3"
)

// MaxWindow is the longest a window may stay open: a week.
const MaxWindow = 7 * 24 * time.Hour

// Window raises the warm level to Executors while it is open: it opens at
// every time Schedule (5-field cron, robfig/cron/v3 standard parser, no
// seconds, no CRON_TZ prefix) matches in TimeZone (IANA; "" = UTC) and stays
// open for Duration (0 < Duration <= 168h).
type Window struct {
	Name      string
	Schedule  string
	Duration  time.Duration
	Executors int32
	TimeZone  string
}

// Schedule is a set of compiled windows. The zero Schedule has no window.
type Schedule struct {
	windows []window
}

type window struct {
	name      string
	spec      *cron.SpecSchedule
	duration  time.Duration
	executors int32
}

// Compile checks and compiles windows; the error names the window (by Name
// or index) and says what to fix: invalid cron, unknown time zone,
// duration <= 0 or longer than a week, executors < 0.
func Compile(ws []Window) (Schedule, error) {
	s := Schedule{windows: make([]window, 0, len(ws))}
	for i, w := range ws {
		c, err := compile(i, w)
		if err != nil {
			id := fmt.Sprintf("window %d", i)
			if w.Name != "" {
				id = fmt.Sprintf("window %q", w.Name)
			}
			return Schedule{}, fmt.Errorf("%s: %w", id, err)
		}
		s.windows = append(s.windows, c)
	}
	return s, nil
}

// cronExample is a schedule the refusals show as the form to follow.
const cronExample = `"0 9 * * 1-5" (09:00 Monday to Friday)`

func compile(i int, w Window) (window, error) {
	spec := strings.TrimSpace(w.Schedule)
	switch {
	case spec == "":
		return window{}, fmt.Errorf("schedule is empty: set a 5-field cron expression (minute hour day-of-month month day-of-week), for example %s", cronExample)
	case strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ="):
		return window{}, fmt.Errorf("schedule %q sets its time zone inline: remove the prefix and set timeZone instead", w.Schedule)
	case strings.HasPrefix(spec, "@every"):
		return window{}, fmt.Errorf("schedule %q repeats an interval from no fixed time: use a 5-field cron expression, for example %s", w.Schedule, cronExample)
	}
	parsed, err := cron.ParseStandard(spec)
	if err != nil {
		return window{}, fmt.Errorf("schedule %q is not a 5-field cron expression (minute hour day-of-month month day-of-week): %v; for example %s", w.Schedule, err, cronExample)
	}
	cs, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return window{}, fmt.Errorf("schedule %q is not a 5-field cron expression: use one, for example %s", w.Schedule, cronExample)
	}
	loc := time.UTC
	if w.TimeZone != "" {
		if loc, err = location(w.TimeZone); err != nil || w.TimeZone == "Local" {
			return window{}, fmt.Errorf("time zone %q is not an IANA time zone name: use one such as Europe/Berlin or America/New_York, or leave it empty for UTC", w.TimeZone)
		}
	}
	// A copy, so that setting the zone touches nothing the parser shares.
	tz := *cs
	tz.Location = loc
	if tz.Next(time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return window{}, fmt.Errorf("schedule %q never matches a date (such as 30 February): choose a day that exists", w.Schedule)
	}
	switch {
	case w.Duration <= 0:
		return window{}, fmt.Errorf("duration %s is not positive: set how long the window stays open, for example 9h", w.Duration)
	case w.Duration > MaxWindow:
		return window{}, fmt.Errorf("duration %s is longer than a week (168h): shorten it, or use minExecutors for a level that always holds", w.Duration)
	case w.Executors < 0:
		return window{}, fmt.Errorf("executors %d is negative: set the warm executors while the window is open, 0 or more", w.Executors)
	}
	name := w.Name
	if name == "" {
		name = fmt.Sprintf("#%d", i)
	}
	return window{name: name, spec: &tz, duration: w.Duration, executors: w.Executors}, nil
}

// At is the scheduled level at t with lead: the largest Executors of the
// windows open at any instant in [t, t+lead] (a window counts from lead
// before it opens until it closes), the name of that window ("" if none),
// and Next: the earliest time after t at which the answer may change
// (a window's start-lead or end). Overlapping windows: the largest wins.
// DST: a start at a wall time that does not exist or repeats follows
// robfig/cron's behaviour; the duration is absolute time.
//
// Next is the zero time when the answer never changes (no window). Among
// open windows of equal Executors the first listed names the level; an
// unnamed window is named by its index ("#0"). At is pure.
func (s Schedule) At(t time.Time, lead time.Duration) (level int32, name string, next time.Time) {
	lead = max(0, lead)
	open := false
	for _, w := range s.windows {
		// The earliest start whose window has not closed by t: it opens
		// within [t-duration, t+lead] exactly when one is open then.
		first := w.spec.Next(t.Add(-w.duration))
		if !first.IsZero() && !first.After(t.Add(lead)) {
			if !open || w.executors > level {
				level, name, open = w.executors, w.name, true
			}
			next = earliest(next, first.Add(w.duration))
		}
		// The next start to come within lead of t.
		if n := w.spec.Next(t.Add(lead)); !n.IsZero() {
			next = earliest(next, n.Add(-lead))
		}
	}
	return level, name, next
}

// locations holds the zones location loaded, by name: time.LoadLocation
// reads and parses the zone's file on every call, and windows are
// compiled on every decision that is not served from the cache. Only
// zones that exist are kept, so it holds at most the database's names.
var locations sync.Map

// location is time.LoadLocation, loaded once per name for the process.
func location(name string) (*time.Location, error) {
	if l, ok := locations.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	locations.Store(name, l)
	return l, nil
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}
