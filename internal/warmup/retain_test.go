package warmup

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestRetain(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	const (
		a = "ghcr.io/e6/exec:a"
		b = "ghcr.io/e6/exec:b"
		c = "ghcr.io/e6/exec:c"
	)
	qs := []Source{{Kind: SourceQueryService, Name: "ns/q"}}
	img := func(ref string) Image { return Image{Ref: ref, Sources: qs} }

	type args struct {
		now       time.Time
		retention time.Duration
		wanted    []Image
		observed  []Observed
	}
	cases := map[string]struct {
		reason string
		args   args
		want   Plan
	}{
		"Nothing": {
			reason: "Nothing wanted and nothing observed is an empty plan.",
			args:   args{now: now, retention: time.Hour},
			want:   Plan{},
		},
		"NewImages": {
			reason: "Wanted images not yet observed get their resource name, sorted by name.",
			args:   args{now: now, retention: time.Hour, wanted: []Image{img(a), img(b)}},
			want: Plan{Keep: sortedEntries(
				Entry{Image: img(a), Name: ResourceName(a)},
				Entry{Image: img(b), Name: ResourceName(b)},
			)},
		},
		"ObservedNameKept": {
			reason: "A wanted image that is observed keeps the observed name, matched by normalized reference.",
			args: args{now: now, retention: time.Hour,
				wanted:   []Image{{Ref: "nginx"}},
				observed: []Observed{{Name: "old-name", Image: "docker.io/library/nginx:latest"}},
			},
			want: Plan{Keep: []Entry{{Image: Image{Ref: "docker.io/library/nginx:latest"}, Name: "old-name"}}},
		},
		"NewlyUnwanted": {
			reason: "An observed image that left the set is kept, stamped with now, and the caller runs again when retention ends.",
			args: args{now: now.Add(1500 * time.Millisecond), retention: time.Hour,
				observed: []Observed{{Name: "x", Image: a}},
			},
			want: Plan{
				Keep:         []Entry{{Image: Image{Ref: a}, Name: "x", UnusedSince: at(time.Second)}},
				RequeueAfter: time.Hour - 500*time.Millisecond,
			},
		},
		"StillRetained": {
			reason: "An unwanted image keeps its first UnusedSince until retention has passed.",
			args: args{now: now, retention: time.Hour,
				observed: []Observed{{Name: "x", Image: a, UnusedSince: at(-40 * time.Minute)}},
			},
			want: Plan{
				Keep:         []Entry{{Image: Image{Ref: a}, Name: "x", UnusedSince: at(-40 * time.Minute)}},
				RequeueAfter: 20 * time.Minute,
			},
		},
		"Expired": {
			reason: "An unwanted image is dropped once retention has passed, exactly at the boundary.",
			args: args{now: now, retention: time.Hour,
				observed: []Observed{{Name: "x", Image: a, UnusedSince: at(-time.Hour)}},
			},
			want: Plan{Dropped: []string{"x"}},
		},
		"ZeroRetention": {
			reason: "Without retention an unwanted image is dropped at once.",
			args: args{now: now, retention: 0,
				observed: []Observed{{Name: "x", Image: a}},
			},
			want: Plan{Dropped: []string{"x"}},
		},
		"FutureStamp": {
			reason: "A stamp after now (clock skew) counts as now, so the wait never exceeds retention.",
			args: args{now: now, retention: time.Hour,
				observed: []Observed{{Name: "x", Image: a, UnusedSince: at(time.Hour)}},
			},
			want: Plan{
				Keep:         []Entry{{Image: Image{Ref: a}, Name: "x", UnusedSince: at(0)}},
				RequeueAfter: time.Hour,
			},
		},
		"WantedAgain": {
			reason: "An image wanted again loses its UnusedSince and takes its sources.",
			args: args{now: now, retention: time.Hour,
				wanted:   []Image{img(a)},
				observed: []Observed{{Name: "x", Image: a, UnusedSince: at(-50 * time.Minute)}},
			},
			want: Plan{Keep: []Entry{{Image: img(a), Name: "x"}}},
		},
		"EarliestRequeue": {
			reason: "RequeueAfter is the shortest time left among kept unwanted images; expired ones are dropped.",
			args: args{now: now, retention: time.Hour,
				wanted: []Image{img(c)},
				observed: []Observed{
					{Name: "z", Image: a, UnusedSince: at(-10 * time.Minute)},
					{Name: "y", Image: b, UnusedSince: at(-45 * time.Minute)},
					{Name: "w", Image: "ghcr.io/e6/exec:d", UnusedSince: at(-2 * time.Hour)},
				},
			},
			want: Plan{
				Keep: sortedEntries(
					Entry{Image: Image{Ref: b}, Name: "y", UnusedSince: at(-45 * time.Minute)},
					Entry{Image: Image{Ref: a}, Name: "z", UnusedSince: at(-10 * time.Minute)},
					Entry{Image: img(c), Name: ResourceName(c)},
				),
				Dropped:      []string{"w"},
				RequeueAfter: 15 * time.Minute,
			},
		},
		"Duplicates": {
			reason: "Of several DaemonSets of one image the first by name is kept; the rest, and one without an image, are dropped.",
			args: args{now: now, retention: time.Hour,
				wanted:   []Image{img(a), img(a)},
				observed: []Observed{{Name: "q", Image: a}, {Name: "p", Image: a}, {Name: "r"}},
			},
			want: Plan{
				Keep:    []Entry{{Image: img(a), Name: "p"}},
				Dropped: []string{"q", "r"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			observed := append([]Observed(nil), tc.args.observed...)
			got := Retain(tc.args.now, tc.args.retention, tc.args.wanted, tc.args.observed)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nRetain(...): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(observed, tc.args.observed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nRetain(...) modified observed: -before, +after:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRetainLifecycle runs Retain repeatedly as a composition function
// would, feeding each plan back as the next observation, and checks that an
// unwanted image is dropped on time and not before.
func TestRetainLifecycle(t *testing.T) {
	const ref = "ghcr.io/e6/exec:1"
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	retention := 30 * time.Minute

	observe := func(p Plan) []Observed {
		var out []Observed
		for _, e := range p.Keep {
			out = append(out, Observed{Name: e.Name, Image: e.Image.Ref, UnusedSince: e.UnusedSince})
		}
		return out
	}

	p := Retain(start, retention, Set(nil, true, map[string]string{"ns/q": ref}), nil)
	now := start.Add(time.Minute)
	p = Retain(now, retention, nil, observe(p)) // the QueryService went away
	if p.RequeueAfter != retention {
		t.Fatalf("after the image left: RequeueAfter %s, want %s", p.RequeueAfter, retention)
	}
	for now = now.Add(p.RequeueAfter / 2); ; now = now.Add(p.RequeueAfter) {
		p = Retain(now, retention, nil, observe(p))
		if len(p.Dropped) > 0 {
			break
		}
		if len(p.Keep) != 1 || p.RequeueAfter <= 0 {
			t.Fatalf("at %s: want the image kept with a requeue, got %+v", now, p)
		}
	}
	if want := start.Add(time.Minute + retention); !now.Equal(want) {
		t.Errorf("dropped at %s, want %s", now, want)
	}
	if len(p.Keep) != 0 || p.RequeueAfter != 0 {
		t.Errorf("after the drop: want an empty plan, got %+v", p)
	}
}

func TestParseObserved(t *testing.T) {
	since := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		reason      string
		annotations map[string]string
		want        Observed
		wantErr     bool
	}{
		"Wanted": {
			reason:      "Without a stamp UnusedSince is nil.",
			annotations: map[string]string{AnnotationImage: "nginx"},
			want:        Observed{Name: "ds", Image: "nginx"},
		},
		"Unused": {
			reason:      "The stamp is parsed as RFC 3339.",
			annotations: map[string]string{AnnotationImage: "nginx", AnnotationUnusedSince: "2026-05-01T12:00:00Z"},
			want:        Observed{Name: "ds", Image: "nginx", UnusedSince: &since},
		},
		"BadStamp": {
			reason:      "A malformed stamp is an error and leaves UnusedSince nil.",
			annotations: map[string]string{AnnotationImage: "nginx", AnnotationUnusedSince: "yesterday"},
			want:        Observed{Name: "ds", Image: "nginx"},
			wantErr:     true,
		},
		"NoAnnotations": {
			reason: "A DaemonSet without annotations has no image.",
			want:   Observed{Name: "ds"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseObserved("ds", tc.annotations)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParseObserved(...): -want, +got:\n%s", tc.reason, diff)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("%s\nParseObserved(...): error %v, want error %t", tc.reason, err, tc.wantErr)
			}
		})
	}
}

// sortedEntries returns es sorted by Name, for expectations written in
// another order.
func sortedEntries(es ...Entry) []Entry {
	out := slices.Clone(es)
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}
