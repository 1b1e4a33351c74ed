package cost

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

var midnight = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

func at(h, m int) time.Time {
	return midnight.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

const gib = int64(1) << 30

var daySpec = v1alpha1.PoolCapacityParameters{
	Pool:             v1alpha1.PoolRef{Name: "shared", Namespace: "platform"},
	NodeSelector:     map[string]string{qsv1alpha1.LabelPool: "shared"},
	ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: "shared", qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
	ExecutorsPerNode: 4, MaxExecutors: 64,
	QueryServices: []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: "team-a"}, {Name: "ads", Namespace: "team-b"}, {Name: "idle", Namespace: "team-c"}},
	Pricing: &v1alpha1.Pricing{
		Catalog:   "aws",
		Discounts: []v1alpha1.CapacityTypeDiscount{{CapacityType: "spot", Discount: "0.6"}},
		Prices:    []v1alpha1.InstancePrice{{InstanceType: "r7gd.8xlarge", CapacityType: "on-demand", PerHour: "2.00"}},
	},
}

// NodeOptions describe a pool node.
type NodeOptions struct {
	Name, InstanceType, CapacityType string
	CPUMillis                        int64
	MemoryGiB                        int64
}

func poolNode(o NodeOptions) *capacity.Node {
	l := map[string]string{qsv1alpha1.LabelPool: "shared", LabelInstanceType: o.InstanceType}
	if o.CapacityType != "" {
		l[LabelCapacityType] = o.CapacityType
	}
	return &capacity.Node{Name: o.Name, Pool: "shared", Labels: l, Ready: true, Schedulable: true,
		AllocatableCPUMillis: o.CPUMillis, AllocatableMemoryBytes: o.MemoryGiB * gib}
}

// PodOptions describe a pod bound to a pool node.
type PodOptions struct {
	Namespace, Name, QueryService, Node string
	// Component is the e6data.io/component label; executor if empty.
	Component string
	CPUMillis int64
	MemoryGiB int64
	State     capacity.PodState
}

func poolPod(o PodOptions) *capacity.Pod {
	l := map[string]string{qsv1alpha1.LabelPool: "shared", qsv1alpha1.LabelComponent: qsv1alpha1.ComponentExecutor}
	if o.Component != "" {
		l[qsv1alpha1.LabelComponent] = o.Component
	} else {
		l[qsv1alpha1.LabelExecutorType] = qsv1alpha1.ExecutorTypePool
		l[qsv1alpha1.LabelQueryService] = o.QueryService
	}
	return &capacity.Pod{Namespace: o.Namespace, Name: o.Name, Pool: "shared", Labels: l, NodeName: o.Node,
		State: o.State, CPUMillis: o.CPUMillis, MemoryBytes: o.MemoryGiB * gib}
}

// day is the recorded day of pool "shared": the snapshot the provider
// holds at t. Events fall on whole minutes.
//
//   - warm: r7gd.4xlarge on-demand, all day, holds the pool's one
//     placeholder (minExecutors 1), and from 08:00 to 12:00 two executors
//     of sales.
//   - spot-1: r7gd.4xlarge spot, from 08:00 to 12:30: four executors of
//     sales from 08:00 to 12:00, then empty, awaiting consolidation.
//   - big-1: r7gd.8xlarge on-demand, from 13:50 to 18:15: launching and
//     empty until 14:00, eight executors of ads from 14:00 to 18:00, then
//     empty.
//
// An r7gd.4xlarge allocates 15 CPU and 120 GiB; an executor or placeholder
// there asks 3.75 CPU and 24 GiB, a quarter of the node (CPU is the larger
// share). An r7gd.8xlarge allocates 31 CPU and 248 GiB; an ads executor
// asks 3.875 CPU and 31 GiB, an eighth.
func day(t time.Time) capacity.Snapshot {
	between := func(from, to time.Time) bool { return !t.Before(from) && t.Before(to) }
	nodes := []*capacity.Node{poolNode(NodeOptions{Name: "warm", InstanceType: "r7gd.4xlarge", CPUMillis: 15000, MemoryGiB: 120})}
	pods := []*capacity.Pod{poolPod(PodOptions{Namespace: "platform", Name: "shared-placeholder-1", Component: qsv1alpha1.ComponentPlaceholder, Node: "warm", CPUMillis: 3750, MemoryGiB: 24, State: capacity.PodRunning})}
	// A warmup pod on the same node requests nothing of the pool's.
	pods = append(pods, poolPod(PodOptions{Namespace: "platform", Name: "warmup-1", Component: qsv1alpha1.ComponentWarmup, Node: "warm", CPUMillis: 100, MemoryGiB: 1, State: capacity.PodRunning}))
	if between(at(8, 0), at(12, 30)) {
		nodes = append(nodes, poolNode(NodeOptions{Name: "spot-1", InstanceType: "r7gd.4xlarge", CapacityType: "spot", CPUMillis: 15000, MemoryGiB: 120}))
	}
	if between(at(8, 0), at(12, 0)) {
		for i := range 6 {
			n := "spot-1"
			if i >= 4 {
				n = "warm"
			}
			pods = append(pods, poolPod(PodOptions{Namespace: "team-a", Name: fmt.Sprintf("sales-exec-%d", i), QueryService: "sales", Node: n, CPUMillis: 3750, MemoryGiB: 24, State: capacity.PodRunning}))
		}
	}
	if between(at(13, 50), at(18, 15)) {
		nodes = append(nodes, poolNode(NodeOptions{Name: "big-1", InstanceType: "r7gd.8xlarge", CapacityType: "on-demand", CPUMillis: 31000, MemoryGiB: 248}))
	}
	if between(at(14, 0), at(18, 0)) {
		for i := range 8 {
			pods = append(pods, poolPod(PodOptions{Namespace: "team-b", Name: fmt.Sprintf("ads-exec-%d", i), QueryService: "ads", Node: "big-1", CPUMillis: 3875, MemoryGiB: 31, State: capacity.PodRunning}))
		}
	}
	return capacity.NewSnapshot(pods, nodes)
}

// reconcile runs one observation of the day at t from status prev, as the
// provider's reconcile does: it returns the status to write.
func reconcile(t *testing.T, prev *v1alpha1.CostObservation, now time.Time) *v1alpha1.CostObservation {
	t.Helper()
	prices, err := NewPrices(daySpec.Pricing)
	if err != nil {
		t.Fatal(err)
	}
	obs, _ := Advance(prev, Observe(daySpec, day(now), prices), now)
	return obs
}

// cents rounds a decimal in status to cents.
func cents(t *testing.T, s string) string {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a decimal: %q", s)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// use is one line of the split by use, as the tests compare it: node
// seconds to the second, dollars to the cent.
type use struct {
	Part              v1alpha1.CostPart
	QueryService      string
	NodeSeconds       string
	Dollars           string
	DollarsPerHourNow string
}

func uses(t *testing.T, o *v1alpha1.CostObservation) []use {
	t.Helper()
	out := make([]use, 0, len(o.ByUse))
	for _, u := range o.ByUse {
		ns := number(u.NodeSeconds)
		out = append(out, use{Part: u.Part, QueryService: u.QueryService, NodeSeconds: strconv.FormatFloat(ns, 'f', 0, 64),
			Dollars: cents(t, u.Dollars), DollarsPerHourNow: cents(t, u.DollarsPerHour)})
	}
	return out
}

type nodeType struct {
	InstanceType, CapacityType, PricePerHour, NodeSeconds, Dollars string
}

func nodeTypes(t *testing.T, o *v1alpha1.CostObservation) []nodeType {
	t.Helper()
	out := make([]nodeType, 0, len(o.ByNodeType))
	for _, n := range o.ByNodeType {
		out = append(out, nodeType{n.InstanceType, n.CapacityType, n.PricePerHour, strconv.FormatFloat(number(n.NodeSeconds), 'f', 0, 64), cents(t, n.Dollars)})
	}
	return out
}

// The day, by hand. Prices: r7gd.4xlarge on-demand 1.16109 USD/h (the aws
// catalog), spot 40% of it with the 0.6 spot discount, 0.464436 USD/h;
// r7gd.8xlarge on-demand 2.00 USD/h from the price table.
//
// By node type:
//
//	warm    r7gd.4xlarge on-demand 24 h      = 86400 s  24 x 1.16109      = 27.86616
//	spot-1  r7gd.4xlarge spot      4 h 30 m  = 16200 s  4.5 x 0.464436   =  2.089962
//	big-1   r7gd.8xlarge on-demand 4 h 25 m  = 15900 s  15900/3600 x 2   =  8.833333
//	pool                                      118500 s                     38.789455
//
// By use:
//
//	sales  half of warm 08-12 (2 node-h, 7200 s, 2 x 1.16109 = 2.32218)
//	       + all of spot-1 08-12 (14400 s, 4 x 0.464436 = 1.857744)
//	                                           21600 s   4.179924 -> 4.18
//	ads    all of big-1 14-18                  14400 s   8.00
//	idle   nothing                             (no line)
//	warm   warm all day but sales' half 08-12  79200 s   27.86616 - 2.32218 = 25.54398 -> 25.54
//	waste  spot-1 12:00-12:30 (1800 s, 0.232218) + big-1 13:50-14:00 and
//	       18:00-18:15 (1500 s, 0.833333)      3300 s    1.065551 -> 1.07
//	sum                                        118500 s  38.789455 -> 38.79
func TestDay(t *testing.T) {
	wantTypes := []nodeType{
		{"r7gd.4xlarge", "on-demand", "1.16109", "86400", "27.87"},
		{"r7gd.4xlarge", "spot", "0.464436", "16200", "2.09"},
		{"r7gd.8xlarge", "on-demand", "2", "15900", "8.83"},
	}
	wantUses := []use{
		{Part: v1alpha1.CostQueryService, QueryService: "sales", NodeSeconds: "21600", Dollars: "4.18", DollarsPerHourNow: "0.00"},
		{Part: v1alpha1.CostQueryService, QueryService: "ads", NodeSeconds: "14400", Dollars: "8.00", DollarsPerHourNow: "0.00"},
		{Part: v1alpha1.CostWarm, NodeSeconds: "79200", Dollars: "25.54", DollarsPerHourNow: "1.16"},
		{Part: v1alpha1.CostWaste, NodeSeconds: "3300", Dollars: "1.07", DollarsPerHourNow: "0.00"},
	}
	cases := map[string]struct {
		reason string
		// every is how often the provider reconciles.
		every time.Duration
	}{
		"EveryMinute":              {reason: "A reconcile a minute, the poll interval, attributes the day as computed by hand.", every: time.Minute},
		"EveryFifteenSeconds":      {reason: "Reconciles more often than Step change nothing: Advance defers while rates stand, and counts each second once.", every: 15 * time.Second},
		"EveryTenMinutesAndEvents": {reason: "A reconcile every ten minutes (a slow poll) plus one at each event, as the watch queues them, attributes the same.", every: 10 * time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var st *v1alpha1.CostObservation
			times := map[time.Time]bool{}
			for now := midnight; !now.After(at(24, 0)); now = now.Add(tc.every) {
				times[now] = true
			}
			// The watch queues a reconcile on every change of the pool.
			for _, e := range []time.Time{at(8, 0), at(12, 0), at(12, 30), at(13, 50), at(14, 0), at(18, 0), at(18, 15)} {
				times[e] = true
			}
			for _, now := range slices.SortedFunc(maps.Keys(times), time.Time.Compare) {
				st = reconcile(t, st, now)
			}
			if diff := cmp.Diff(wantTypes, nodeTypes(t, st)); diff != "" {
				t.Errorf("%s\nby node type: -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(wantUses, sortUses(uses(t, st))); diff != "" {
				t.Errorf("%s\nby use: -want +got:\n%s", tc.reason, diff)
			}
			if got := cents(t, st.Dollars); got != "38.79" {
				t.Errorf("%s\npool dollars = %s, want 38.79", tc.reason, got)
			}
			if got := st.NodeSeconds; got != "118500" {
				t.Errorf("%s\npool node-seconds = %s, want 118500", tc.reason, got)
			}
			// The parts add up to the pool, within a thousandth of a cent.
			var sum, sumSeconds float64
			for _, u := range st.ByUse {
				sum += number(u.Dollars)
				sumSeconds += number(u.NodeSeconds)
			}
			if d := sum - number(st.Dollars); d > 1e-5 || d < -1e-5 {
				t.Errorf("%s\nparts sum to %.6f USD, pool %s", tc.reason, sum, st.Dollars)
			}
			if d := sumSeconds - number(st.NodeSeconds); d > 1e-2 || d < -1e-2 {
				t.Errorf("%s\nparts sum to %.3f node-seconds, pool %s", tc.reason, sumSeconds, st.NodeSeconds)
			}
		})
	}
}

// sortUses orders lines as wantUses lists them: QueryServices in the
// order of the day's bursts, then warm, then waste.
func sortUses(us []use) []use {
	rank := map[string]int{"sales": 0, "ads": 1}
	out := make([]use, 0, len(us))
	for _, part := range []v1alpha1.CostPart{v1alpha1.CostQueryService, v1alpha1.CostWarm, v1alpha1.CostWaste} {
		var lines []use
		for _, u := range us {
			if u.Part == part {
				lines = append(lines, u)
			}
		}
		if part == v1alpha1.CostQueryService && len(lines) == 2 && rank[lines[0].QueryService] > rank[lines[1].QueryService] {
			lines[0], lines[1] = lines[1], lines[0]
		}
		out = append(out, lines...)
	}
	return out
}
