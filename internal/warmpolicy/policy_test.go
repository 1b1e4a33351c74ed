package warmpolicy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecide(t *testing.T) {
	rec := &Recommendation{Executors: 12, Reason: "the history says so"}
	cases := map[string]struct {
		reason string
		in     LevelInput
		want   Level
	}{
		"StaticByDefault": {
			reason: "Without a policy the level is minExecutors, the reference's behaviour.",
			in:     LevelInput{MinExecutors: 4, MaxExecutors: 40, Scheduled: 20, Window: "w", Learned: rec},
			want:   Level{Executors: 4, Source: SourceMinExecutors, Reason: "static warm level: minExecutors (4)"},
		},
		"Static": {
			reason: "Static ignores windows and recommendations.",
			in:     LevelInput{Policy: Static, MinExecutors: 4, MaxExecutors: 40, Scheduled: 20, Window: "w", Learned: rec},
			want:   Level{Executors: 4, Source: SourceMinExecutors, Reason: "static warm level: minExecutors (4)"},
		},
		"UnknownIsStatic": {
			reason: "A policy the API would not admit counts as Static.",
			in:     LevelInput{Policy: "Greedy", MinExecutors: 4, MaxExecutors: 40, Scheduled: 20, Window: "w"},
			want:   Level{Executors: 4, Source: SourceMinExecutors, Reason: "static warm level: minExecutors (4)"},
		},
		"WindowRaises": {
			reason: "An open window above minExecutors sets the level.",
			in:     LevelInput{Policy: Scheduled, MinExecutors: 4, MaxExecutors: 40, Scheduled: 20, Window: "business-hours"},
			want:   Level{Executors: 20, Source: SourceWindow, Reason: `window "business-hours" is open or opens within the lead: 20 warm executors`},
		},
		"WindowBelowMin": {
			reason: "A window below minExecutors leaves minExecutors.",
			in:     LevelInput{Policy: Scheduled, MinExecutors: 4, MaxExecutors: 40, Scheduled: 2, Window: "quiet"},
			want:   Level{Executors: 4, Source: SourceMinExecutors, Reason: `window "quiet" asks for 2 warm executors, no more than minExecutors (4)`},
		},
		"NoWindowOpen": {
			reason: "With no window open the level is minExecutors.",
			in:     LevelInput{Policy: Scheduled, MinExecutors: 1, MaxExecutors: 40},
			want:   Level{Executors: 1, Source: SourceMinExecutors, Reason: "no warm window is open: the warm level is minExecutors (1)"},
		},
		"WindowAboveMaxExecutors": {
			reason: "A window is held to maxExecutors.",
			in:     LevelInput{Policy: Scheduled, MaxExecutors: 16, Scheduled: 20, Window: "w"},
			want:   Level{Executors: 16, Source: SourceWindow, Reason: `window "w" is open or opens within the lead: 20 warm executors; capped at maxExecutors (16)`},
		},
		"WindowAboveTheTenancyCap": {
			reason: "A window is held to the tenancy cap when it is below maxExecutors.",
			in:     LevelInput{Policy: Scheduled, MaxExecutors: 100, Cap: 10, Scheduled: 20, Window: "w"},
			want:   Level{Executors: 10, Source: SourceWindow, Reason: `window "w" is open or opens within the lead: 20 warm executors; capped at the tenancy cap (10)`},
		},
		"LearnedRaises": {
			reason: "A published recommendation above minExecutors sets the level and carries its reason.",
			in:     LevelInput{Policy: Learned, MinExecutors: 2, MaxExecutors: 40, Learned: rec},
			want:   Level{Executors: 12, Source: SourceLearned, Reason: "learned level 12: the history says so"},
		},
		"LearnedNotYet": {
			reason: "Until the provider publishes a recommendation the level is minExecutors.",
			in:     LevelInput{Policy: Learned, MinExecutors: 2, MaxExecutors: 40},
			want:   Level{Executors: 2, Source: SourceMinExecutors, Reason: "no learned warm level is published yet: the warm level is minExecutors (2)"},
		},
		"LearnedBelowMin": {
			reason: "A recommendation below minExecutors leaves minExecutors: minExecutors is a floor under every policy.",
			in:     LevelInput{Policy: Learned, MinExecutors: 20, MaxExecutors: 40, Learned: rec},
			want:   Level{Executors: 20, Source: SourceMinExecutors, Reason: "the learned level (12) is no more than minExecutors (20): the history says so"},
		},
		"LearnedCapped": {
			reason: "A recommendation is held to the caps, the tighter one named last.",
			in:     LevelInput{Policy: Learned, MaxExecutors: 10, Cap: 8, Learned: rec},
			want:   Level{Executors: 8, Source: SourceLearned, Reason: "learned level 12: the history says so; capped at maxExecutors (10); capped at the tenancy cap (8)"},
		},
		"MinAboveMax": {
			reason: "Even minExecutors is held to maxExecutors.",
			in:     LevelInput{MinExecutors: 50, MaxExecutors: 40},
			want:   Level{Executors: 40, Source: SourceMinExecutors, Reason: "static warm level: minExecutors (50); capped at maxExecutors (40)"},
		},
		"NegativeMin": {
			reason: "A negative minExecutors counts as 0.",
			in:     LevelInput{MinExecutors: -3, MaxExecutors: 40},
			want:   Level{Source: SourceMinExecutors, Reason: "static warm level: minExecutors (0)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.in)); diff != "" {
				t.Errorf("\n%s\nDecide(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
