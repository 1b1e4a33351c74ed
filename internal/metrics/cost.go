package metrics

import (
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// Label names of the cost series.
const (
	labelPart         = "part"
	labelInstanceType = "instance_type"
	labelCapacityType = "capacity_type"
)

// costs exports each pool's status.atProvider.cost. Its counters are the
// totals the status keeps, so they go on from where they were when the
// provider starts again, rather than from zero.
type costs struct {
	dollars, nodeSeconds, rate *prometheus.Desc
	typeDollars, typeSeconds   *prometheus.Desc
	unaccounted                *prometheus.Desc

	mu   sync.Mutex
	last map[v1alpha1.PoolRef]*v1alpha1.CostObservation
}

func newCosts() *costs {
	use := []string{labelPool, labelNamespace, labelQS, labelQSNS, labelPart}
	typ := []string{labelPool, labelNamespace, labelInstanceType, labelCapacityType}
	return &costs{
		dollars:     prometheus.NewDesc("burstpool_pool_cost_dollars_total", "What the pool's nodes cost, in US dollars, by use: part queryservice (the share its executors requested), warm (kept idle on purpose) or waste (empty nodes).", use, nil),
		nodeSeconds: prometheus.NewDesc("burstpool_pool_node_seconds_total", "The pool's node time, in node-seconds, by use as burstpool_pool_cost_dollars_total.", use, nil),
		rate:        prometheus.NewDesc("burstpool_pool_cost_dollars_per_hour", "What the pool's nodes cost now, in US dollars per hour, by use.", use, nil),
		typeDollars: prometheus.NewDesc("burstpool_pool_node_type_cost_dollars_total", "What the pool's nodes cost, in US dollars, by instance type and capacity type.", typ, nil),
		typeSeconds: prometheus.NewDesc("burstpool_pool_node_type_seconds_total", "The pool's node time, in node-seconds, by instance type and capacity type.", typ, nil),
		unaccounted: prometheus.NewDesc("burstpool_pool_cost_unaccounted_seconds_total", "Time the provider did not observe the pool for longer than it prices from its last observation: its node time is not counted.", []string{labelPool, labelNamespace}, nil),
		last:        map[v1alpha1.PoolRef]*v1alpha1.CostObservation{},
	}
}

// Describe sends the cost series' descriptions.
func (c *costs) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.dollars, c.nodeSeconds, c.rate, c.typeDollars, c.typeSeconds, c.unaccounted} {
		ch <- d
	}
}

// Collect sends every pool's cost series.
func (c *costs) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, o := range c.last {
		for _, u := range o.ByUse {
			l := []string{p.Name, p.Namespace, u.QueryService, u.Namespace, strings.ToLower(string(u.Part))}
			ch <- prometheus.MustNewConstMetric(c.dollars, prometheus.CounterValue, number(u.Dollars), l...)
			ch <- prometheus.MustNewConstMetric(c.nodeSeconds, prometheus.CounterValue, number(u.NodeSeconds), l...)
			ch <- prometheus.MustNewConstMetric(c.rate, prometheus.GaugeValue, number(u.DollarsPerHour), l...)
		}
		for _, t := range o.ByNodeType {
			l := []string{p.Name, p.Namespace, t.InstanceType, t.CapacityType}
			ch <- prometheus.MustNewConstMetric(c.typeDollars, prometheus.CounterValue, number(t.Dollars), l...)
			ch <- prometheus.MustNewConstMetric(c.typeSeconds, prometheus.CounterValue, number(t.NodeSeconds), l...)
		}
		ch <- prometheus.MustNewConstMetric(c.unaccounted, prometheus.CounterValue, float64(o.UnaccountedSeconds), p.Name, p.Namespace)
	}
}

func (c *costs) set(p v1alpha1.PoolRef, o *v1alpha1.CostObservation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o == nil {
		delete(c.last, p)
		return
	}
	c.last[p] = o.DeepCopy()
}

func (c *costs) forget(p v1alpha1.PoolRef) { c.set(p, nil) }

func number(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f
}

// Cost sets the cost series of the pool spec names from o, the
// PoolCapacity's status.atProvider.cost (nil drops them).
func (m *Metrics) Cost(spec v1alpha1.PoolCapacityParameters, o *v1alpha1.CostObservation) {
	m.costs.set(spec.Pool, o)
}
