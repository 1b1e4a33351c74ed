package metrics

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// Executor slot states, in the order poolValues keeps them.
var executorStates = [...]string{"total", "available", "occupied", "pending", "draining"}

// pools exports the gauges of every pool the provider recorded. It keeps
// one small record of numbers per pool and makes the series from it on
// each scrape: a thousand pools of five QueryServices carry some forty
// series each, and a gauge vector would keep every one of them, with its
// labels, as objects of its own.
type pools struct {
	executors, maxExecutors, nodes, warmReady, warmFailing, failures *prometheus.Desc
	observed, requestedCPU, requestedMem, unauthorized, unplaceable  *prometheus.Desc
	overdueExecs, overdueNodes, qsExecutors, warmLevel, demandWeeks  *prometheus.Desc

	mu   sync.Mutex
	last map[v1alpha1.PoolRef]*poolValues
	// warm holds what Warm last set, apart from last: Record and Warm
	// each set their own part of a pool's gauges.
	warm map[v1alpha1.PoolRef]warmValues
}

// poolValues are the values of one pool's gauges.
type poolValues struct {
	executors                                                   [len(executorStates)]float64
	max, ready, notReady, warmReady, warmFailing                float64
	observed, cpu, mem, unauthorized, unplaceable, late, lateNo float64
	// failures counts the listed failures by reason; nil when none.
	failures      map[v1alpha1.FailureReason]int
	queryServices []queryServiceValues
}

// warmValues are the values of one pool's demand history and learned warm
// level gauges.
type warmValues struct {
	weeks, level float64
	// recommended tells whether the pool has a learned level to export.
	recommended bool
}

// queryServiceValues are the values of one attached QueryService's gauges.
type queryServiceValues struct {
	name, namespace        string
	pool, regular, pending float64
	// share is its maxPoolExecutors; zero when the pool bounds it not.
	share float64
}

func newPools() *pools {
	pool := func(more ...string) []string { return append([]string{labelPool, labelNamespace}, more...) }
	desc := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &pools{
		executors:    desc("burstpool_pool_executors", "Executor slots of a pool by state: total, available, occupied, pending or draining.", pool(labelState)),
		maxExecutors: desc("burstpool_pool_max_executors", "The pool's maxExecutors.", pool()),
		nodes:        desc("burstpool_pool_nodes", "Nodes of a pool by state: ready or not_ready.", pool(labelState)),
		warmReady:    desc("burstpool_pool_warm_images_ready", "Images with at least one running warmup pod on the pool.", pool()),
		warmFailing:  desc("burstpool_pool_warmup_failures", "Images whose warmup pods cannot pull them.", pool()),
		failures:     desc("burstpool_pool_executor_failures", "Executor failures the pool's status lists, by reason.", pool(labelReason)),
		observed:     desc("burstpool_pool_last_observed_timestamp_seconds", "When the provider last knew its view of the pool's cluster to be current (status.atProvider.lastObservedTime), as a Unix time.", pool()),
		requestedCPU: desc("burstpool_pool_requested_cpu_cores", "CPU the pool's occupied, draining and pending executors request.", pool()),
		requestedMem: desc("burstpool_pool_requested_memory_bytes", "Memory the pool's occupied, draining and pending executors request.", pool()),
		unauthorized: desc("burstpool_pool_unauthorized_executors", "Pool executors of QueryServices not attached to the pool.", pool()),
		unplaceable:  desc("burstpool_pool_unplaceable_executors", "Pending pool executors that ask for the pool's nodes but could run on none of them: they count for nothing.", pool()),
		overdueExecs: desc("burstpool_pool_overdue_executors", "Pool executors still at the executor gate more than its bound plus a slack after their creation (status.atProvider.overdue.executors): their release is failing.", pool()),
		overdueNodes: desc("burstpool_pool_overdue_nodes", "Ready pool nodes still carrying the startup taint more than startup.openAfter plus a slack after their creation (status.atProvider.overdue.nodes): their opening is failing.", pool()),
		qsExecutors:  desc("burstpool_queryservice_executors", "Executors of an attached QueryService by type: pool, pending (pool executors waiting for a slot), regular, or share (its maxPoolExecutors, when the pool bounds it).", pool(labelQS, labelQSNS, labelType)),
		warmLevel:    desc("burstpool_pool_warm_recommended_executors", "The learned warm level the provider publishes for the pool (status.atProvider.warmRecommendation.executors), while its spec asks for one.", pool()),
		demandWeeks:  desc("burstpool_pool_demand_history_weeks", "Weeks of the last 4 the pool was observed in, the current one included (status.atProvider.demand.weeks).", pool()),
		last:         map[v1alpha1.PoolRef]*poolValues{},
		warm:         map[v1alpha1.PoolRef]warmValues{},
	}
}

// Describe sends the pool gauges' descriptions.
func (p *pools) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.executors, p.maxExecutors, p.nodes, p.warmReady, p.warmFailing, p.failures, p.observed,
		p.requestedCPU, p.requestedMem, p.unauthorized, p.unplaceable, p.overdueExecs, p.overdueNodes, p.qsExecutors,
		p.warmLevel, p.demandWeeks} {
		ch <- d
	}
}

// Collect sends every pool's gauges.
func (p *pools) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ref, w := range p.warm {
		labels := []string{ref.Name, ref.Namespace}
		ch <- prometheus.MustNewConstMetric(p.demandWeeks, prometheus.GaugeValue, w.weeks, labels...)
		if w.recommended {
			ch <- prometheus.MustNewConstMetric(p.warmLevel, prometheus.GaugeValue, w.level, labels...)
		}
	}
	for ref, v := range p.last {
		gauge := func(d *prometheus.Desc, value float64, more ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, value, append([]string{ref.Name, ref.Namespace}, more...)...)
		}
		for i, s := range executorStates {
			gauge(p.executors, v.executors[i], s)
		}
		gauge(p.maxExecutors, v.max)
		gauge(p.nodes, v.ready, "ready")
		gauge(p.nodes, v.notReady, "not_ready")
		gauge(p.warmReady, v.warmReady)
		gauge(p.warmFailing, v.warmFailing)
		gauge(p.observed, v.observed)
		gauge(p.requestedCPU, v.cpu)
		gauge(p.requestedMem, v.mem)
		gauge(p.unauthorized, v.unauthorized)
		gauge(p.unplaceable, v.unplaceable)
		gauge(p.overdueExecs, v.late)
		gauge(p.overdueNodes, v.lateNo)
		for _, r := range v1alpha1.FailureReasons {
			gauge(p.failures, float64(v.failures[r]), string(r))
		}
		for r, n := range v.failures {
			if !slices.Contains(v1alpha1.FailureReasons, r) {
				gauge(p.failures, float64(n), string(r))
			}
		}
		for _, q := range v.queryServices {
			gauge(p.qsExecutors, q.pool, q.name, q.namespace, "pool")
			gauge(p.qsExecutors, q.regular, q.name, q.namespace, "regular")
			gauge(p.qsExecutors, q.pending, q.name, q.namespace, "pending")
			if q.share > 0 {
				gauge(p.qsExecutors, q.share, q.name, q.namespace, "share")
			}
		}
	}
}

// set keeps v as the pool's gauges; a nil v drops every gauge of the
// pool, its warm ones too.
func (p *pools) set(ref v1alpha1.PoolRef, v *poolValues) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v == nil {
		delete(p.last, ref)
		delete(p.warm, ref)
		return
	}
	p.last[ref] = v
}

// setWarm keeps w as the pool's demand history and warm level gauges.
func (p *pools) setWarm(ref v1alpha1.PoolRef, w warmValues) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.warm[ref] = w
}
