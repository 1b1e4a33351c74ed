package metrics

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/failsafe"
)

// failsafeSeries returns the series the fail-safe (internal/failsafe)
// registers, with their label names, which the alerts read beside the
// provider's: executors it released from the executor gate and nodes whose
// startup taint it lifted because the provider had not, whether the
// provider's Lease is silent, and when it last completed a pass.
func failsafeSeries(t *testing.T) map[string][]string {
	t.Helper()
	r := prometheus.NewRegistry()
	m := failsafe.NewMetrics(r)
	// A vector shows in a gather once it has a child.
	m.Released.WithLabelValues("p", "ns")
	m.Opened.WithLabelValues("p", "ns")
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, mf := range mfs {
		var labels []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		out[mf.GetName()] = labels
	}
	return out
}

// providerLease is the provider's leader-election Lease
// (cmd/provider: LeaderElectionID), the name label of its
// leader_election_master_status.
const providerLease = "provider-burstpool-capacity"

// leaderSeries returns the leader-election series the provider's registry
// (controller-runtime's metrics.Registry) reports, with their label names,
// once a leader elector for the provider's Lease exists: controller-runtime
// registers leader_election_master_status{name} and client-go sets it to 0
// when the elector is made, 1 while it leads
// (sigs.k8s.io/controller-runtime v0.23.1 pkg/metrics/leaderelection.go;
// k8s.io/client-go v0.35.3 tools/leaderelection/leaderelection.go,
// NewLeaderElector).
func leaderSeries(t *testing.T) map[string][]string {
	t.Helper()
	lock := &resourcelock.LeaseLock{LockConfig: resourcelock.ResourceLockConfig{Identity: "standby"}}
	if _, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, Name: providerLease, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	}); err != nil {
		t.Fatal(err)
	}
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "leader_election_") {
			continue
		}
		for _, s := range mf.GetMetric() {
			var labels []string
			lease := false
			for _, l := range s.GetLabel() {
				labels = append(labels, l.GetName())
				lease = lease || (l.GetName() == "name" && l.GetValue() == providerLease)
			}
			if lease {
				out[mf.GetName()] = labels
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("controller-runtime's registry reports no leader_election_ series for the Lease %s", providerLease)
	}
	return out
}

// registered returns every series name the provider exports, with its
// label names, as a registry holding one of each reports them.
func registered(t *testing.T) map[string][]string {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := New(reg)
	spec := v1alpha1.PoolCapacityParameters{Pool: v1alpha1.PoolRef{Name: "p", Namespace: "ns"}, MaxExecutors: 1}
	m.Record("pc", spec, capacity.Result{
		Observation: v1alpha1.PoolCapacityObservation{Allocations: []v1alpha1.Allocation{{QueryService: "q", Namespace: "ns"}}},
		Failing:     []v1alpha1.Failure{{Reason: v1alpha1.FailureError}},
	}, time.Unix(1, 0))
	m.Cost(spec, &v1alpha1.CostObservation{
		ByUse:      []v1alpha1.UseCost{{Part: v1alpha1.CostQueryService, QueryService: "q", Namespace: "ns"}},
		ByNodeType: []v1alpha1.NodeTypeCost{{InstanceType: "t", CapacityType: "spot"}},
	})
	m.Starts(spec, &v1alpha1.ExecutorStarts{ByPlacement: []v1alpha1.PlacementStarts{{Placement: v1alpha1.PlacementNewNode}}})
	m.Warm(spec, &v1alpha1.DemandHistory{Weeks: 1}, &v1alpha1.WarmRecommendation{Executors: 1})
	m.Evicted(spec, capacity.EvictUnauthorized)
	m.EvictionBlocked(spec, capacity.EvictUnauthorized)
	o := m.Observer("default")
	o.Relisted(nil)
	o.WatchFailed()
	o.Applied(1)
	o.Synced(time.Unix(1, 0))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, mf := range mfs {
		var labels []string
		for _, l := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		out[mf.GetName()] = labels
		// A histogram is queried by its series: _bucket (with le), _sum
		// and _count.
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			out[mf.GetName()+"_bucket"] = append(slices.Clone(labels), "le")
			out[mf.GetName()+"_sum"] = labels
			out[mf.GetName()+"_count"] = labels
		}
	}
	return out
}

// expression is one PromQL expression of the examples, and where it is.
type expression struct {
	where, expr, legend string
}

func examples(t *testing.T) (rules, alerts []string, exprs []expression) {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", "monitoring")
	raw, err := os.ReadFile(filepath.Join(dir, "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Spec struct {
			Groups []struct {
				Rules []struct{ Record, Alert, Expr string }
			}
		}
	}
	if err := yaml.Unmarshal(raw, &pr); err != nil {
		t.Fatal(err)
	}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				rules = append(rules, r.Record)
			}
			if r.Alert != "" {
				alerts = append(alerts, r.Alert)
			}
			exprs = append(exprs, expression{where: "rule " + r.Record + r.Alert, expr: r.Expr})
		}
	}
	raw, err = os.ReadFile(filepath.Join(dir, "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr, LegendFormat string }
		}
		Templating struct {
			List []struct{ Name, Definition string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, expression{where: "panel " + p.Title, expr: tg.Expr, legend: tg.LegendFormat})
		}
	}
	for _, v := range d.Templating.List {
		if v.Definition != "" {
			exprs = append(exprs, expression{where: "variable " + v.Name, expr: v.Definition})
		}
	}
	return rules, alerts, exprs
}

var (
	reSeries   = regexp.MustCompile(`\b(burstpool_[a-z0-9_]+|leader_election_[a-z0-9_]+)\s*(\{[^}]*\})?`)
	reLease    = regexp.MustCompile(`\bname\s*=\s*"([^"]*)"`)
	reMatcher  = regexp.MustCompile(`([a-z_][a-z0-9_]*)\s*(=~|!=|!~|=)`)
	reGrouping = regexp.MustCompile(`\b(?:by|on|without|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	reLegend   = regexp.MustCompile(`\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}`)
	reValues   = regexp.MustCompile(`label_values\((burstpool_[a-z0-9_]+)[^,]*,\s*([a-z_]+)\)`)
	reOther    = regexp.MustCompile(`\b(kube_|container_|up\b|time\(\))`)
)

// TestExpressionsUseRegisteredMetrics checks every expression of the
// example dashboard and rules against the series the provider registers,
// the fail-safe's (failsafeSeries) and the provider's leader-election
// series: each burstpool_ and leader_election_ series exists, its matchers
// name its labels (and the provider's Lease), and the labels an expression
// groups, joins or shows by belong to its series.
func TestExpressionsUseRegisteredMetrics(t *testing.T) {
	reg := registered(t)
	for _, more := range []map[string][]string{failsafeSeries(t), leaderSeries(t)} {
		for name, labels := range more {
			if _, ok := reg[name]; ok {
				t.Errorf("%s is registered by the provider and declared as another component's", name)
			}
			reg[name] = labels
		}
	}
	rules, alerts, exprs := examples(t)
	for _, e := range exprs {
		var labels []string
		for _, m := range reSeries.FindAllStringSubmatch(e.expr, -1) {
			ls, ok := reg[m[1]]
			if !ok {
				t.Errorf("%s: %s is not a series the provider, the fail-safe or leader election exports", e.where, m[1])
				continue
			}
			labels = append(labels, ls...)
			for _, mm := range reMatcher.FindAllStringSubmatch(m[2], -1) {
				if !slices.Contains(ls, mm[1]) {
					t.Errorf("%s: %s has no label %q (it has %v)", e.where, m[1], mm[1], ls)
				}
			}
			if strings.HasPrefix(m[1], "leader_election_") {
				if l := reLease.FindStringSubmatch(m[2]); l == nil || l[1] != providerLease {
					t.Errorf("%s: %s%s does not select the provider's Lease (name=%q)", e.where, m[1], m[2], providerLease)
				}
			}
		}
		for _, m := range reValues.FindAllStringSubmatch(e.expr, -1) {
			if !slices.Contains(reg[m[1]], m[2]) {
				t.Errorf("%s: label_values of %s by %q: no such label", e.where, m[1], m[2])
			}
		}
		if len(labels) == 0 || reOther.MatchString(e.expr) || strings.Contains(e.expr, "burstpool:") {
			// Joins with other exporters' series, or recording rules.
			continue
		}
		labels = append(labels, "le")
		for _, g := range reGrouping.FindAllStringSubmatch(e.expr, -1) {
			for _, l := range strings.Split(g[1], ",") {
				if l = strings.TrimSpace(l); l != "" && !slices.Contains(labels, l) {
					t.Errorf("%s: groups or joins by %q, which none of its series has", e.where, l)
				}
			}
		}
		for _, m := range reLegend.FindAllStringSubmatch(e.legend, -1) {
			if !slices.Contains(labels, m[1]) {
				t.Errorf("%s: legend shows {{%s}}, which none of its series has", e.where, m[1])
			}
		}
	}
	for _, want := range []string{"BurstpoolProviderDown", "BurstpoolPoolStatusStale", "BurstpoolExecutorFailureRateHigh", "BurstpoolEvictions", "BurstpoolEvictionsBlocked",
		"BurstpoolProviderNoLeader", "BurstpoolExecutorsGatedPastBound", "BurstpoolNodesWarmingPastOpenAfter", "BurstpoolFailsafeDown"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("the PrometheusRule has no alert %s (it has %v)", want, alerts)
		}
	}
	if !slices.Contains(rules, "burstpool:pool_executor_utilisation:ratio") {
		t.Errorf("the PrometheusRule records no burstpool:pool_executor_utilisation:ratio (occupied / total executors)")
	}
}

// TestLabelsDoNotCollide checks that no series carries a label Prometheus
// sets on every target (namespace, pod, job, instance, ...), which a
// scrape would rename to exported_*.
func TestLabelsDoNotCollide(t *testing.T) {
	for name, labels := range registered(t) {
		for _, l := range labels {
			switch l {
			case "namespace", "pod", "job", "instance", "container", "service", "endpoint":
				t.Errorf("%s has label %q, which the scrape's target labels override", name, l)
			}
		}
	}
}
