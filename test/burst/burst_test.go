package burst

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

func TestStart(t *testing.T) {
	const img, helper = "executor:1", "helper:1"
	c := Cloud{Launch: 45 * time.Second, Throughput: 100, ImageSizes: map[string]int64{img: 3000}, DefaultImageSize: 100}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type pod struct {
		bound  int
		images []string
	}
	cases := map[string]struct {
		reason string
		pods   []pod
		want   []time.Time
	}{
		"BoundBeforeReady": {
			reason: "A pod bound to a node still launching waits for the launch, then for its pull.",
			pods:   []pod{{bound: 1, images: []string{img}}},
			want:   []time.Time{at(45 + 30)},
		},
		"SharedPull": {
			reason: "A second pod of the same image waits for the pull already under way, not for a new one.",
			pods:   []pod{{bound: 50, images: []string{img}}, {bound: 60, images: []string{img}}},
			want:   []time.Time{at(80), at(80)},
		},
		"WarmImage": {
			reason: "A pod whose image is already on its node starts when it is bound.",
			pods:   []pod{{bound: 50, images: []string{img}}, {bound: 200, images: []string{img}}},
			want:   []time.Time{at(80), at(200)},
		},
		"ParallelPulls": {
			reason: "A pod with two images starts once the slower pull ends; pulls run in parallel.",
			pods:   []pod{{bound: 50, images: []string{helper, img}}},
			want:   []time.Time{at(80)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := c.NewNode(t0)
			var got []time.Time
			for _, p := range tc.pods {
				got = append(got, c.Start(n, at(p.bound), p.images))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nStart(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	s := func(xs ...int) []time.Duration {
		var ds []time.Duration
		for _, x := range xs {
			ds = append(ds, time.Duration(x)*time.Second)
		}
		return ds
	}
	cases := map[string]struct {
		reason string
		ds     []time.Duration
		p      float64
		want   time.Duration
	}{
		"Empty":       {reason: "No samples have no percentile.", ds: nil, p: 50, want: 0},
		"MedianOdd":   {reason: "Nearest rank: the middle of five.", ds: s(5, 1, 4, 2, 3), p: 50, want: 3 * time.Second},
		"MedianEven":  {reason: "Nearest rank of four at 50 is the second.", ds: s(4, 1, 3, 2), p: 50, want: 2 * time.Second},
		"P90OfFour":   {reason: "Nearest rank of four at 90 is the fourth.", ds: s(4, 1, 3, 2), p: 90, want: 4 * time.Second},
		"P90OfTwelve": {reason: "Nearest rank of twelve at 90 is the eleventh.", ds: s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), p: 90, want: 11 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Percentile(tc.ds, tc.p); got != tc.want {
				t.Errorf("%s\nPercentile(%v, %v) = %v, want %v", tc.reason, tc.ds, tc.p, got, tc.want)
			}
		})
	}
}

// TestKwokConfig checks that the stages hold exactly node-initialize and
// pod-ready on the annotation, and keep kwok's other default stages.
func TestKwokConfig(t *testing.T) {
	dir, err := gomod.Dir(context.Background(), KwokModule, KwokVersion)
	if err != nil {
		t.Fatalf("cannot find kwok's module (its default stages): %v", err)
	}
	b, err := KwokConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		st := map[string]any{}
		if err := yaml.Unmarshal([]byte(strings.TrimPrefix(doc, "---\n")), &st); err != nil {
			t.Fatal(err)
		}
		name, _, _ := unstructured.NestedString(st, "metadata", "name")
		from, ok, _ := unstructured.NestedString(st, "spec", "delay", "durationFrom", "expressionFrom")
		held[name] = ok && strings.Contains(from, AnnotationStartAt)
	}
	want := map[string]bool{"node-initialize": true, "node-heartbeat": false, "pod-ready": true, "pod-complete": false, "pod-delete": false}
	if diff := cmp.Diff(want, held); diff != "" {
		t.Errorf("stages held on %s: -want, +got:\n%s", AnnotationStartAt, diff)
	}
}

// TestTable checks the table's figures and ratios to the first (cold) row.
func TestTable(t *testing.T) {
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	c := Cloud{Launch: 45 * time.Second, Throughput: 125 << 20, ImageSizes: map[string]int64{"executor:1": 3072 << 20}, DefaultImageSize: 50 << 20}
	var b strings.Builder
	if err := Table(&b, c, []Result{
		{Scenario: "cold", Executors: 2, ToRunning: []time.Duration{s(70), s(72)}, AllRunning: s(72)},
		{Scenario: "warm", Executors: 2, Warm: 2, ToRunning: []time.Duration{s(0.2), s(0.4)}, AllRunning: s(0.5)},
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"simulated cloud: node launch 45s (registration to Ready); image pull at 125 MiB/s; executor:1: 3072 MiB, 24.6s to pull; other images: 50 MiB, 400ms",
		"scenario  executors  warm slots  p50 to Running  p90 to Running  all Running  p50 / cold  p90 / cold  all / cold",
		"cold          2           0           70.0s           72.0s        72.0s       1.000       1.000       1.000",
		"warm          2           2            0.2s            0.4s         0.5s       0.003       0.006       0.007",
	}
	var got []string
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		got = append(got, strings.TrimSpace(l))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Table: -want, +got:\n%s", diff)
	}
}
