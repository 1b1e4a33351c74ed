package warmpolicy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// utc is a time of 2026 in UTC.
func utc(month time.Month, day, hour, minute int) time.Time {
	return time.Date(2026, month, day, hour, minute, 0, 0, time.UTC)
}

func TestAt(t *testing.T) {
	businessBerlin := Window{Name: "business-hours", Schedule: "0 9 * * 1-5", Duration: 9 * time.Hour, Executors: 10, TimeZone: "Europe/Berlin"}
	type args struct {
		windows []Window
		t       time.Time
		lead    time.Duration
	}
	type want struct {
		level  int32
		window string
		next   time.Time
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NoWindows": {
			reason: "Without windows the level is 0 and never changes.",
			args:   args{t: utc(3, 2, 8, 0)},
			want:   want{},
		},
		"OpenInItsTimeZone": {
			reason: "09:00 in Berlin is 08:00 UTC in winter (CET): the window is open until 18:00 CET, 17:00 UTC.",
			args:   args{windows: []Window{businessBerlin}, t: utc(3, 2, 8, 0)},
			want:   want{level: 10, window: "business-hours", next: utc(3, 2, 17, 0)},
		},
		"ClosedBeforeTheLead": {
			reason: "Half an hour before the window opens, with a lead of 15 minutes, no window counts; the answer changes 15 minutes before it opens.",
			args:   args{windows: []Window{businessBerlin}, t: utc(3, 2, 7, 30), lead: 15 * time.Minute},
			want:   want{next: utc(3, 2, 7, 45)},
		},
		"CountsFromTheLead": {
			reason: "Ten minutes before the window opens, with a lead of 15 minutes, the window counts already, until it closes.",
			args:   args{windows: []Window{businessBerlin}, t: utc(3, 2, 7, 50), lead: 15 * time.Minute},
			want:   want{level: 10, window: "business-hours", next: utc(3, 2, 17, 0)},
		},
		"ClosesAtItsEnd": {
			reason: "At its end the window is closed (the interval is half-open); it next counts from the lead before Tuesday's start.",
			args:   args{windows: []Window{businessBerlin}, t: utc(3, 2, 17, 0), lead: 15 * time.Minute},
			want:   want{next: utc(3, 3, 7, 45)},
		},
		"ClosedAtTheWeekend": {
			reason: "On Saturday no weekday window counts; the next is Monday's, less the lead.",
			args:   args{windows: []Window{businessBerlin}, t: utc(3, 7, 12, 0), lead: 10 * time.Minute},
			want:   want{next: utc(3, 9, 7, 50)},
		},
		"InNewYork": {
			reason: "09:00 in New York is 14:00 UTC in winter (EST).",
			args:   args{windows: []Window{{Name: "ny", Schedule: "0 9 * * 1-5", Duration: 8 * time.Hour, Executors: 4, TimeZone: "America/New_York"}}, t: utc(2, 2, 14, 0)},
			want:   want{level: 4, window: "ny", next: utc(2, 2, 22, 0)},
		},
		"EmptyTimeZoneIsUTC": {
			reason: "A window without a time zone runs in UTC.",
			args:   args{windows: []Window{{Name: "utc", Schedule: "0 9 * * *", Duration: time.Hour, Executors: 3}}, t: utc(3, 2, 9, 30)},
			want:   want{level: 3, window: "utc", next: utc(3, 2, 10, 0)},
		},
		"OverlapLargestWins": {
			reason: "Inside both windows the larger level counts and names its window; the answer changes when the larger one closes.",
			args: args{windows: []Window{
				{Name: "day", Schedule: "0 9 * * *", Duration: 9 * time.Hour, Executors: 5},
				{Name: "lunch", Schedule: "0 12 * * *", Duration: 2 * time.Hour, Executors: 20},
			}, t: utc(3, 2, 12, 30)},
			want: want{level: 20, window: "lunch", next: utc(3, 2, 14, 0)},
		},
		"OverlapSmallerRemains": {
			reason: "Once the larger window closed, the smaller one still open counts.",
			args: args{windows: []Window{
				{Name: "day", Schedule: "0 9 * * *", Duration: 9 * time.Hour, Executors: 5},
				{Name: "lunch", Schedule: "0 12 * * *", Duration: 2 * time.Hour, Executors: 20},
			}, t: utc(3, 2, 14, 0)},
			want: want{level: 5, window: "day", next: utc(3, 2, 18, 0)},
		},
		"OverlapEqualFirstListedNames": {
			reason: "Of two open windows of equal level the first listed names it.",
			args: args{windows: []Window{
				{Name: "a", Schedule: "0 9 * * *", Duration: 2 * time.Hour, Executors: 5},
				{Name: "b", Schedule: "0 10 * * *", Duration: 2 * time.Hour, Executors: 5},
			}, t: utc(3, 2, 10, 30)},
			want: want{level: 5, window: "a", next: utc(3, 2, 11, 0)},
		},
		"SpansMidnight": {
			reason: "A window opened at 22:00 for 4 hours is open at 01:00 the next day and closes at 02:00.",
			args:   args{windows: []Window{{Name: "etl", Schedule: "0 22 * * *", Duration: 4 * time.Hour, Executors: 30}}, t: utc(3, 3, 1, 0)},
			want:   want{level: 30, window: "etl", next: utc(3, 3, 2, 0)},
		},
		"SpansTheWeeksEnd": {
			reason: "A window opened on Sunday 20:00 for 12 hours is open on Monday 07:00 and closes at 08:00.",
			args:   args{windows: []Window{{Name: "monday-prep", Schedule: "0 20 * * 0", Duration: 12 * time.Hour, Executors: 8}}, t: utc(3, 2, 7, 0)},
			want:   want{level: 8, window: "monday-prep", next: utc(3, 2, 8, 0)},
		},
		"AWholeWeekAlwaysCounts": {
			reason: "A window of 168h that opens every Monday is always open; the answer may change when one occurrence hands over to the next.",
			args:   args{windows: []Window{{Name: "always", Schedule: "0 0 * * 1", Duration: 168 * time.Hour, Executors: 2}}, t: utc(3, 5, 12, 0)},
			want:   want{level: 2, window: "always", next: utc(3, 9, 0, 0)},
		},
		"UnnamedIsNamedByIndex": {
			reason: "A window without a name is named by its index.",
			args:   args{windows: []Window{{Name: "x", Schedule: "0 1 * * *", Duration: time.Hour, Executors: 1}, {Schedule: "0 9 * * *", Duration: time.Hour, Executors: 3}}, t: utc(3, 2, 9, 0)},
			want:   want{level: 3, window: "#1", next: utc(3, 2, 10, 0)},
		},
		"OpenAtZero": {
			reason: "A window of 0 executors still names itself while open.",
			args:   args{windows: []Window{{Name: "quiet", Schedule: "0 9 * * *", Duration: time.Hour}}, t: utc(3, 2, 9, 0)},
			want:   want{window: "quiet", next: utc(3, 2, 10, 0)},
		},

		// Daylight saving, Europe/Berlin: on 29 March 2026 02:00 CET
		// becomes 03:00 CEST; on 25 October 2026 03:00 CEST becomes 02:00
		// CET, so 02:30 happens twice. robfig/cron v3.0.1 skips a start
		// whose wall time does not exist and starts at both instants of
		// one that repeats (spec.go, SpecSchedule.Next, which moves by
		// wall-clock hours).
		"BerlinSpringForwardSkipsTheStart": {
			reason: "02:30 does not exist in Berlin on 29 March 2026: the window does not open that night, and next opens at 02:30 CEST on 30 March (00:30 UTC).",
			args:   args{windows: []Window{{Name: "night", Schedule: "30 2 * * *", Duration: time.Hour, Executors: 6, TimeZone: "Europe/Berlin"}}, t: utc(3, 29, 0, 45)},
			want:   want{next: utc(3, 30, 0, 30)},
		},
		"BerlinSpringForwardDurationIsAbsolute": {
			reason: "A window opened at 00:00 CET on 29 March for 6 hours closes 6 real hours later, at 07:00 CEST (05:00 UTC).",
			args:   args{windows: []Window{{Name: "night", Schedule: "0 0 * * *", Duration: 6 * time.Hour, Executors: 6, TimeZone: "Europe/Berlin"}}, t: utc(3, 29, 4, 30)},
			want:   want{level: 6, window: "night", next: utc(3, 29, 5, 0)},
		},
		"BerlinFallBackFirstStart": {
			reason: "On 25 October 2026 02:30 happens first in CEST (00:30 UTC): the window is open and may change at its end, 01:30 UTC.",
			args:   args{windows: []Window{{Name: "night", Schedule: "30 2 * * *", Duration: time.Hour, Executors: 6, TimeZone: "Europe/Berlin"}}, t: utc(10, 25, 0, 45)},
			want:   want{level: 6, window: "night", next: utc(10, 25, 1, 30)},
		},
		"BerlinFallBackSecondStart": {
			reason: "02:30 happens again in CET (01:30 UTC): the window opens a second time and closes at 02:30 UTC.",
			args:   args{windows: []Window{{Name: "night", Schedule: "30 2 * * *", Duration: time.Hour, Executors: 6, TimeZone: "Europe/Berlin"}}, t: utc(10, 25, 1, 45)},
			want:   want{level: 6, window: "night", next: utc(10, 25, 2, 30)},
		},

		// Daylight saving, America/New_York: on 8 March 2026 02:00 EST
		// becomes 03:00 EDT; on 1 November 2026 02:00 EDT becomes 01:00
		// EST, so 01:30 happens twice and 02:30 once.
		"NewYorkSpringForwardSkipsTheStart": {
			reason: "02:30 does not exist in New York on 8 March 2026: the window next opens at 02:30 EDT on 9 March (06:30 UTC).",
			args:   args{windows: []Window{{Name: "night", Schedule: "30 2 * * *", Duration: time.Hour, Executors: 6, TimeZone: "America/New_York"}}, t: utc(3, 8, 7, 0)},
			want:   want{next: utc(3, 9, 6, 30)},
		},
		"NewYorkFallBackOnce": {
			reason: "02:30 happens once in New York on 1 November 2026, in EST (07:30 UTC).",
			args:   args{windows: []Window{{Name: "night", Schedule: "30 2 * * *", Duration: time.Hour, Executors: 6, TimeZone: "America/New_York"}}, t: utc(11, 1, 7, 45)},
			want:   want{level: 6, window: "night", next: utc(11, 1, 8, 30)},
		},
		"NewYorkFallBackRepeatedStart": {
			reason: "01:30 happens twice in New York on 1 November 2026 (05:30 and 06:30 UTC): a window of 30 minutes opens at both.",
			args:   args{windows: []Window{{Name: "night", Schedule: "30 1 * * *", Duration: 30 * time.Minute, Executors: 6, TimeZone: "America/New_York"}}, t: utc(11, 1, 6, 40)},
			want:   want{level: 6, window: "night", next: utc(11, 1, 7, 0)},
		},
		"NewYorkFallBackBetweenStarts": {
			reason: "Between the two 01:30s the window is closed and opens again at 06:30 UTC.",
			args:   args{windows: []Window{{Name: "night", Schedule: "30 1 * * *", Duration: 30 * time.Minute, Executors: 6, TimeZone: "America/New_York"}}, t: utc(11, 1, 6, 10)},
			want:   want{next: utc(11, 1, 6, 30)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Compile(tc.args.windows)
			if err != nil {
				t.Fatalf("\n%s\nCompile(...): %v", tc.reason, err)
			}
			var got want
			got.level, got.window, got.next = s.At(tc.args.t, tc.args.lead)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmp.Comparer(time.Time.Equal)); diff != "" {
				t.Errorf("\n%s\nAt(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestAtNextIsExact walks a week of windows by Next and checks that the
// answer holds unchanged between one Next and the one after: no change is
// missed.
func TestAtNextIsExact(t *testing.T) {
	s, err := Compile([]Window{
		{Name: "business", Schedule: "0 9 * * 1-5", Duration: 9 * time.Hour, Executors: 10, TimeZone: "Europe/Berlin"},
		{Name: "etl", Schedule: "0 1 * * *", Duration: 2 * time.Hour, Executors: 40, TimeZone: "America/New_York"},
		{Name: "lunch", Schedule: "30 11 * * 1-5", Duration: 90 * time.Minute, Executors: 16, TimeZone: "Europe/Berlin"},
	})
	if err != nil {
		t.Fatal(err)
	}
	const lead = 7 * time.Minute
	from := utc(3, 23, 0, 0) // spans Berlin's spring-forward
	at := from
	for at.Before(from.Add(8 * 24 * time.Hour)) {
		level, name, next := s.At(at, lead)
		if !next.After(at) {
			t.Fatalf("At(%s): next %s is not after it", at, next)
		}
		for m := at.Add(time.Minute); m.Before(next); m = m.Add(time.Minute) {
			if l, n, _ := s.At(m, lead); l != level || n != name {
				t.Fatalf("At(%s) = %d %q until %s, but At(%s) = %d %q", at, level, name, next, m, l, n)
			}
		}
		at = next
	}
}

func TestCompile(t *testing.T) {
	cases := map[string]struct {
		reason  string
		windows []Window
		want    string
	}{
		"Valid": {
			reason:  "Windows in UTC and IANA zones compile.",
			windows: []Window{{Name: "a", Schedule: "0 9 * * 1-5", Duration: 9 * time.Hour, Executors: 4, TimeZone: "Europe/Berlin"}, {Name: "b", Schedule: "@daily", Duration: time.Hour}},
		},
		"EmptySchedule": {
			reason:  "An empty schedule says to write one.",
			windows: []Window{{Name: "a", Duration: time.Hour}},
			want:    `window "a": schedule is empty: set a 5-field cron expression (minute hour day-of-month month day-of-week), for example "0 9 * * 1-5" (09:00 Monday to Friday)`,
		},
		"FourFields": {
			reason:  "A schedule that is not 5-field cron names the fields.",
			windows: []Window{{Name: "a", Schedule: "0 9 * *", Duration: time.Hour}},
			want:    `window "a": schedule "0 9 * *" is not a 5-field cron expression (minute hour day-of-month month day-of-week): expected exactly 5 fields, found 4: [0 9 * *]; for example "0 9 * * 1-5" (09:00 Monday to Friday)`,
		},
		"SixFields": {
			reason:  "Seconds are refused.",
			windows: []Window{{Name: "a", Schedule: "0 0 9 * * *", Duration: time.Hour}},
			want:    `window "a": schedule "0 0 9 * * *" is not a 5-field cron expression (minute hour day-of-month month day-of-week): expected exactly 5 fields, found 6: [0 0 9 * * *]; for example "0 9 * * 1-5" (09:00 Monday to Friday)`,
		},
		"MinuteOutOfRange": {
			reason:  "A field out of range is refused with cron's reason.",
			windows: []Window{{Name: "a", Schedule: "61 9 * * *", Duration: time.Hour}},
			want:    `window "a": schedule "61 9 * * *" is not a 5-field cron expression (minute hour day-of-month month day-of-week): end of range (61) above maximum (59): 61; for example "0 9 * * 1-5" (09:00 Monday to Friday)`,
		},
		"InlineTimeZone": {
			reason:  "A CRON_TZ prefix is refused in favour of timeZone.",
			windows: []Window{{Name: "a", Schedule: "CRON_TZ=Europe/Berlin 0 9 * * *", Duration: time.Hour}},
			want:    `window "a": schedule "CRON_TZ=Europe/Berlin 0 9 * * *" sets its time zone inline: remove the prefix and set timeZone instead`,
		},
		"Every": {
			reason:  "An interval has no fixed start and is refused.",
			windows: []Window{{Name: "a", Schedule: "@every 1h", Duration: time.Hour}},
			want:    `window "a": schedule "@every 1h" repeats an interval from no fixed time: use a 5-field cron expression, for example "0 9 * * 1-5" (09:00 Monday to Friday)`,
		},
		"NeverMatches": {
			reason:  "A date that does not exist is refused.",
			windows: []Window{{Name: "a", Schedule: "0 0 30 2 *", Duration: time.Hour}},
			want:    `window "a": schedule "0 0 30 2 *" never matches a date (such as 30 February): choose a day that exists`,
		},
		"UnknownTimeZone": {
			reason:  "A time zone that is not an IANA name is refused with examples.",
			windows: []Window{{Name: "a", Schedule: "0 9 * * *", Duration: time.Hour, TimeZone: "Mars/Olympus"}},
			want:    `window "a": time zone "Mars/Olympus" is not an IANA time zone name: use one such as Europe/Berlin or America/New_York, or leave it empty for UTC`,
		},
		"LocalTimeZone": {
			reason:  "Local would follow the host's zone and is refused.",
			windows: []Window{{Name: "a", Schedule: "0 9 * * *", Duration: time.Hour, TimeZone: "Local"}},
			want:    `window "a": time zone "Local" is not an IANA time zone name: use one such as Europe/Berlin or America/New_York, or leave it empty for UTC`,
		},
		"ZeroDuration": {
			reason:  "A window must stay open for some time.",
			windows: []Window{{Name: "a", Schedule: "0 9 * * *"}},
			want:    `window "a": duration 0s is not positive: set how long the window stays open, for example 9h`,
		},
		"NegativeDuration": {
			reason:  "A negative duration is refused.",
			windows: []Window{{Name: "a", Schedule: "0 9 * * *", Duration: -time.Hour}},
			want:    `window "a": duration -1h0m0s is not positive: set how long the window stays open, for example 9h`,
		},
		"LongerThanAWeek": {
			reason:  "A window longer than a week is refused.",
			windows: []Window{{Name: "a", Schedule: "0 9 * * *", Duration: 169 * time.Hour}},
			want:    `window "a": duration 169h0m0s is longer than a week (168h): shorten it, or use minExecutors for a level that always holds`,
		},
		"NegativeExecutors": {
			reason:  "Negative executors are refused.",
			windows: []Window{{Name: "a", Schedule: "0 9 * * *", Duration: time.Hour, Executors: -1}},
			want:    `window "a": executors -1 is negative: set the warm executors while the window is open, 0 or more`,
		},
		"UnnamedByIndex": {
			reason:  "A window without a name is named by its index.",
			windows: []Window{{Name: "ok", Schedule: "0 9 * * *", Duration: time.Hour}, {Schedule: "0 9 * * *", Duration: time.Hour, Executors: -2}},
			want:    `window 1: executors -2 is negative: set the warm executors while the window is open, 0 or more`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Compile(tc.windows)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nCompile(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
