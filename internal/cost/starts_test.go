package cost

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

func sec(h, m, s int) time.Time { return at(h, m).Add(time.Duration(s) * time.Second) }

// burst is a recorded burst of sales onto pool "shared" as the provider
// sees it at t: node "warm" (created 07:00) keeps two warm slots; six
// executors are created at 08:00:00; two take the warm slots and run at
// 08:00:01; four wait for node "new-1", registered at 08:00:20, and run
// at 08:01:11 (a node launch and an image pull: 71 s, as bench-burst's
// cold burst). Executors are Running from then on; a placeholder and a
// pod of another pool's node are never counted.
func burst(t time.Time) capacity.Snapshot {
	warm := poolNode(NodeOptions{Name: "warm", InstanceType: "r7gd.4xlarge", CPUMillis: 15000, MemoryGiB: 120})
	warm.Created = at(7, 0)
	nodes := []*capacity.Node{warm}
	ph := poolPod(PodOptions{Namespace: "platform", Name: "shared-placeholder-1", Component: qsv1alpha1.ComponentPlaceholder, Node: "warm", State: capacity.PodRunning})
	ph.Created, ph.Running = at(7, 0), sec(7, 0, 30)
	pods := []*capacity.Pod{ph}
	if !t.Before(sec(8, 0, 20)) {
		n := poolNode(NodeOptions{Name: "new-1", InstanceType: "r7gd.4xlarge", CPUMillis: 15000, MemoryGiB: 120})
		n.Created = sec(8, 0, 20)
		nodes = append(nodes, n)
	}
	if t.Before(at(8, 0)) {
		return capacity.NewSnapshot(pods, nodes)
	}
	for i := range 6 {
		node, ran := "warm", sec(8, 0, 1)
		if i >= 2 {
			node, ran = "new-1", sec(8, 1, 11)
		}
		p := poolPod(PodOptions{Namespace: "team-a", Name: fmt.Sprintf("sales-exec-%d", i), QueryService: "sales", Node: node, State: capacity.PodRunning})
		p.Created = at(8, 0)
		if !t.Before(ran) {
			p.Running = ran
		}
		if node == "new-1" && t.Before(sec(8, 0, 20)) {
			p.NodeName, p.State = "", capacity.PodPending
		}
		pods = append(pods, p)
	}
	// An executor of another pool, on a node the pool's selector does
	// not pick.
	other := poolPod(PodOptions{Namespace: "team-a", Name: "stray", QueryService: "sales", Node: "elsewhere", State: capacity.PodRunning})
	other.Created, other.Running = at(8, 0), sec(8, 0, 1)
	return capacity.NewSnapshot(append(pods, other), nodes)
}

// summary is what a test reads of a start histogram.
type summary struct {
	Placement v1alpha1.Placement
	Count     int64
	Sum, P50  string
}

func summarize(o *v1alpha1.ExecutorStarts) []summary {
	var out []summary
	for _, p := range o.ByPlacement {
		out = append(out, summary{p.Placement, p.Count, p.SumSeconds, p.P50Seconds})
	}
	return out
}

// bothCounted is the burst counted: two executors in 1 s each on the warm
// node, four in 71 s on the new one. The p50s are Prometheus's estimates
// from the buckets: rank 1 of 2 in (0, 1] is 0.5; rank 2 of 4 in (60, 90]
// is 60 + 30 * 2/4 = 75.
var bothCounted = []summary{
	{Placement: v1alpha1.PlacementExistingNode, Count: 2, Sum: "2", P50: "0.5"},
	{Placement: v1alpha1.PlacementNewNode, Count: 4, Sum: "284", P50: "75"},
}

func TestCountStarts(t *testing.T) {
	counting := func(until time.Time) *v1alpha1.ExecutorStarts {
		return &v1alpha1.ExecutorStarts{CountedUntil: metav1.NewTime(until), Since: metav1.NewTime(at(7, 0))}
	}
	cases := map[string]struct {
		reason      string
		prev        *v1alpha1.ExecutorStarts
		now         time.Time
		wantUntil   time.Time
		wantChanged bool
		want        []summary
	}{
		"CountingBegins": {
			reason: "The first observation starts the watermark StartSettle before now and counts nothing that ran before.",
			now:    at(8, 5), wantUntil: sec(8, 4, 50), wantChanged: true,
		},
		"BothPlacements": {
			reason: "Executors on a node created before them count as ExistingNode, on a node created after them as NewNode; placeholders and other pools' executors not at all.",
			prev:   counting(at(7, 59)), now: at(8, 5), wantUntil: sec(8, 4, 50), wantChanged: true, want: bothCounted,
		},
		"NotSettled": {
			reason: "An executor that ran less than StartSettle ago waits for the next window; the warm ones that ran earlier count now.",
			prev:   counting(at(7, 59)), now: sec(8, 1, 15), wantUntil: sec(8, 1, 5), wantChanged: true,
			want: []summary{{Placement: v1alpha1.PlacementExistingNode, Count: 2, Sum: "2", P50: "0.5"}},
		},
		"NothingNew": {
			reason: "A window in which no executor ran leaves the status as it was, watermark included.",
			prev:   counting(at(8, 2)), now: at(8, 30), wantUntil: at(8, 2),
		},
		"WatermarkAhead": {
			reason: "A watermark at or after now less StartSettle counts nothing.",
			prev:   counting(at(8, 30)), now: sec(8, 30, 5), wantUntil: at(8, 30),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, changed := CountStarts(tc.prev, daySpec, burst(tc.now), tc.now)
			if changed != tc.wantChanged {
				t.Errorf("%s\nCountStarts(...): changed = %t, want %t", tc.reason, changed, tc.wantChanged)
			}
			if !got.CountedUntil.Time.Equal(tc.wantUntil) {
				t.Errorf("%s\nCountStarts(...): countedUntil = %s, want %s", tc.reason, got.CountedUntil.Time, tc.wantUntil)
			}
			if diff := cmp.Diff(tc.want, summarize(got)); diff != "" {
				t.Errorf("%s\nCountStarts(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestStartsAcrossRestart replays the burst with a reconcile every 15
// seconds from 07:59 to 08:10, and a provider that stops and starts again
// from its status (JSON, nothing in memory), with or without its last
// write lost. Every executor is counted exactly once.
func TestStartsAcrossRestart(t *testing.T) {
	cases := map[string]struct {
		reason   string
		from, to time.Time
		lost     bool
	}{
		"NoStop":            {reason: "Reconciles every 15 seconds count each executor once.", from: at(9, 0), to: at(9, 0)},
		"StopAcrossTheWarm": {reason: "A stop across the warm executors' start counts them when the provider is back.", from: sec(8, 0, 0), to: at(8, 3)},
		"StopAfterCounting": {reason: "A stop after the burst was counted counts nothing twice.", from: sec(8, 1, 30), to: at(8, 5)},
		"LostWriteBeforeStop": {
			reason: "A status write lost before the stop is counted again from the watermark before it, once.",
			from:   sec(8, 1, 30), to: at(8, 5), lost: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var st, written *v1alpha1.ExecutorStarts
			st = &v1alpha1.ExecutorStarts{CountedUntil: metav1.NewTime(at(7, 59)), Since: metav1.NewTime(at(7, 59))}
			written = st
			for now := at(7, 59); !now.After(at(8, 10)); now = now.Add(15 * time.Second) {
				if now.After(tc.from) && now.Before(tc.to) {
					continue
				}
				if now.Equal(tc.to) {
					st = startsThroughAPI(t, written)
				}
				st, _ = CountStarts(st, daySpec, burst(now), now)
				if !(tc.lost && !now.Before(sec(8, 1, 15)) && !now.After(tc.from)) {
					written = st
				}
			}
			if diff := cmp.Diff(bothCounted, summarize(st)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func startsThroughAPI(t *testing.T, o *v1alpha1.ExecutorStarts) *v1alpha1.ExecutorStarts {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	out := &v1alpha1.ExecutorStarts{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestQuantile(t *testing.T) {
	b := func(counts ...int64) []v1alpha1.StartBucket {
		out := make([]v1alpha1.StartBucket, len(counts))
		for i, c := range counts {
			out[i] = v1alpha1.StartBucket{UpToSeconds: fmt.Sprint(StartBounds[i]), Count: c}
		}
		return out
	}
	cases := map[string]struct {
		reason string
		q      float64
		p      v1alpha1.PlacementStarts
		want   float64
	}{
		"Empty":       {reason: "Nothing counted estimates 0.", q: 0.5, want: 0},
		"FirstBucket": {reason: "Within the first bucket, interpolation starts at 0.", q: 0.5, p: v1alpha1.PlacementStarts{Count: 4, Buckets: b(4, 4)}, want: 0.5},
		"SkipsEmptyBuckets": {
			reason: "Rank 3 of 4 falls in (2, 5], which holds executors 2 to 4: 2 + 3 * (3-1)/3.",
			q:      0.75, p: v1alpha1.PlacementStarts{Count: 4, Buckets: b(1, 1, 4)}, want: 4,
		},
		"BeyondTheBuckets": {
			reason: "A rank above every bucket (executors slower than the highest bound) is the highest bound, as Prometheus's +Inf bucket.",
			q:      0.5, p: v1alpha1.PlacementStarts{Count: 4, Buckets: b(1, 1)}, want: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Quantile(tc.q, tc.p); got != tc.want {
				t.Errorf("%s\nQuantile(%v, ...) = %v, want %v", tc.reason, tc.q, got, tc.want)
			}
		})
	}
}
