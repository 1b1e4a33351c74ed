package warmup

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBound(t *testing.T) {
	cached := Source{Kind: SourceCachedImages}
	qs := func(n string) Source { return Source{Kind: SourceQueryService, Name: n} }
	images := []Image{
		{Ref: "a:1", Sources: []Source{qs("ns/a")}},
		{Ref: "b:1", Sources: []Source{qs("ns/b"), qs("ns/c")}},
		{Ref: "c:1", Sources: []Source{cached}},
		{Ref: "d:1", Sources: []Source{qs("ns/d")}},
	}
	cases := map[string]struct {
		reason   string
		limit    int
		wantKept []string
		wantLeft []string
	}{
		"WithinLimit": {
			reason:   "A set within the limit is kept whole.",
			limit:    4,
			wantKept: []string{"a:1", "b:1", "c:1", "d:1"},
		},
		"CachedThenMostUsed": {
			reason:   "The pool's cachedImages come first, then the image of the most QueryServices, then by reference.",
			limit:    3,
			wantKept: []string{"a:1", "b:1", "c:1"},
			wantLeft: []string{"d:1"},
		},
		"Two": {
			reason:   "Two slots keep the cached image and the shared one.",
			limit:    2,
			wantKept: []string{"b:1", "c:1"},
			wantLeft: []string{"a:1", "d:1"},
		},
		"Zero": {
			reason:   "A limit of 0 warms nothing.",
			limit:    0,
			wantKept: []string{},
			wantLeft: []string{"c:1", "b:1", "a:1", "d:1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kept, left := Bound(images, tc.limit)
			refs := []string{}
			for _, k := range kept {
				refs = append(refs, k.Ref)
			}
			if diff := cmp.Diff(tc.wantKept, refs); diff != "" {
				t.Errorf("%s\nkept: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantLeft, left); diff != "" {
				t.Errorf("%s\nleft: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCap(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	older, newer := t0.Add(-time.Hour), t0.Add(-time.Minute)
	p := Plan{
		Keep: []Entry{
			{Name: "warmup-a", Image: Image{Ref: "a:1"}},
			{Name: "warmup-b", Image: Image{Ref: "b:1"}, UnusedSince: &older},
			{Name: "warmup-c", Image: Image{Ref: "c:1"}, UnusedSince: &newer},
		},
		Dropped: []string{"warmup-z"},
	}
	cases := map[string]struct {
		reason      string
		limit       int
		wantKept    []string
		wantDropped []string
	}{
		"WithinLimit": {
			reason: "A plan within the limit stays as it is.", limit: 3,
			wantKept: []string{"warmup-a", "warmup-b", "warmup-c"}, wantDropped: []string{"warmup-z"},
		},
		"RetainedGoFirst": {
			reason: "Images kept only for their retention go before wanted ones, the longest unused first.", limit: 2,
			wantKept: []string{"warmup-a", "warmup-c"}, wantDropped: []string{"warmup-b", "warmup-z"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Cap(p, tc.limit)
			var kept []string
			for _, e := range got.Keep {
				kept = append(kept, e.Name)
			}
			if diff := cmp.Diff(tc.wantKept, kept); diff != "" {
				t.Errorf("%s\nkept: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantDropped, got.Dropped); diff != "" {
				t.Errorf("%s\ndropped: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
