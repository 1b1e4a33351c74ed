package warmup

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
)

func TestSourceText(t *testing.T) {
	cached := Source{Kind: SourceCachedImages}
	q := func(n string) Source { return Source{Kind: SourceQueryService, Name: n} }
	cases := map[string]struct {
		reason  string
		sources []Source
		want    string
	}{
		"None":      {reason: "An unused image has no sources.", want: ""},
		"Cached":    {reason: "A cached image says so.", sources: []Source{cached}, want: "cachedImages"},
		"OneQS":     {reason: "One QueryService is singular.", sources: []Source{q("a/q")}, want: "QueryService a/q"},
		"Both":      {reason: "Both kinds are joined.", sources: []Source{cached, q("a/q"), q("b/r")}, want: "cachedImages; QueryServices a/q, b/r"},
		"ManyQSCut": {reason: "Past three QueryServices the rest are counted.", sources: []Source{q("a/1"), q("a/2"), q("a/3"), q("a/4"), q("a/5")}, want: "QueryServices a/1, a/2, a/3 and 2 more"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SourceText(tc.sources)); diff != "" {
				t.Errorf("%s\nSourceText(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCachedImage(t *testing.T) {
	const (
		pool = "analytics"
		ref  = "ghcr.io/e6/exec:1"
	)
	since := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	name := DaemonSetName(pool, ref)
	wanted := Entry{Image: Image{Ref: ref, Sources: []Source{{Kind: SourceQueryService, Name: "a/q"}}}, Name: ResourceName(ref)}
	base := poolv1alpha1.CachedImage{Image: ref, Hash: Hash(ref), Source: "QueryService a/q", DaemonSetName: name}
	ds := func(gen, observedGen int64, desired, ready int32) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Status:     appsv1.DaemonSetStatus{ObservedGeneration: observedGen, DesiredNumberScheduled: desired, NumberReady: ready},
		}
	}
	with := func(f func(*poolv1alpha1.CachedImage)) poolv1alpha1.CachedImage {
		ci := base
		f(&ci)
		return ci
	}
	cases := map[string]struct {
		reason   string
		entry    Entry
		observed *appsv1.DaemonSet
		want     poolv1alpha1.CachedImage
	}{
		"NotCreated": {
			reason: "Without an observed DaemonSet the image is Pending.",
			entry:  wanted,
			want: with(func(ci *poolv1alpha1.CachedImage) {
				ci.WarmupStatus = poolv1alpha1.WarmupPending
				ci.Message = "Waiting for warmup DaemonSet " + name + " to be created."
			}),
		},
		"NotObserved": {
			reason:   "A spec the DaemonSet controller has not seen yet is Pending.",
			entry:    wanted,
			observed: ds(2, 1, 3, 3),
			want: with(func(ci *poolv1alpha1.CachedImage) {
				ci.WarmupStatus, ci.NodesReady, ci.NodesTotal = poolv1alpha1.WarmupPending, 3, 3
				ci.Message = "Waiting for the DaemonSet controller to roll out warmup DaemonSet " + name + "."
			}),
		},
		"Pulling": {
			reason:   "Some nodes without a ready pod is Pending, with counts.",
			entry:    wanted,
			observed: ds(1, 1, 3, 1),
			want: with(func(ci *poolv1alpha1.CachedImage) {
				ci.WarmupStatus, ci.NodesReady, ci.NodesTotal = poolv1alpha1.WarmupPending, 1, 3
				ci.Message = "1 of 3 pool nodes have pulled the image; if this persists, check the image reference and pull secrets on the pods of DaemonSet " + name + "."
			}),
		},
		"Ready": {
			reason:   "Every node ready is Ready, without a message.",
			entry:    wanted,
			observed: ds(1, 1, 3, 3),
			want: with(func(ci *poolv1alpha1.CachedImage) {
				ci.WarmupStatus, ci.NodesReady, ci.NodesTotal = poolv1alpha1.WarmupReady, 3, 3
			}),
		},
		"NoNodes": {
			reason:   "A pool without nodes has nothing to pull and is Ready.",
			entry:    wanted,
			observed: ds(1, 1, 0, 0),
			want:     with(func(ci *poolv1alpha1.CachedImage) { ci.WarmupStatus = poolv1alpha1.WarmupReady }),
		},
		"Unused": {
			reason:   "An unused image reports when it left the set and no source.",
			entry:    Entry{Image: Image{Ref: ref}, Name: "x", UnusedSince: &since},
			observed: ds(1, 1, 2, 2),
			want: with(func(ci *poolv1alpha1.CachedImage) {
				t := metav1.NewTime(since)
				ci.Source, ci.UnusedSince = "", &t
				ci.WarmupStatus, ci.NodesReady, ci.NodesTotal = poolv1alpha1.WarmupReady, 2, 2
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := CachedImage(pool, tc.entry, tc.observed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCachedImage(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
