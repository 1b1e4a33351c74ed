// Package metrics ships in the capacity provider: it exports what the
// provider observes as Prometheus gauges and counters, per pool and per
// QueryService.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// Label names. The Pool's namespace is pool_namespace: a label called
// namespace would be overwritten by the scrape's own target label (and
// renamed exported_namespace).
const (
	labelPool      = "pool"
	labelNamespace = "pool_namespace"
	labelState     = "state"
	labelReason    = "reason"
	labelQS        = "query_service"
	labelQSNS      = "query_service_namespace"
	labelType      = "type"
	labelConfig    = "provider_config"
	labelResult    = "result"
)

// Metrics holds the provider's collectors. Its methods are safe for
// concurrent use.
type Metrics struct {
	executors    *prometheus.GaugeVec
	maxExecutors *prometheus.GaugeVec
	nodes        *prometheus.GaugeVec
	warmReady    *prometheus.GaugeVec
	warmFailing  *prometheus.GaugeVec
	failures     *prometheus.GaugeVec
	failuresAll  *prometheus.CounterVec
	observed     *prometheus.GaugeVec
	requestedCPU *prometheus.GaugeVec
	requestedMem *prometheus.GaugeVec
	unauthorized *prometheus.GaugeVec
	unplaceable  *prometheus.GaugeVec
	overdueExecs *prometheus.GaugeVec
	overdueNodes *prometheus.GaugeVec
	qsExecutors  *prometheus.GaugeVec
	warmLevel    *prometheus.GaugeVec
	demandWeeks  *prometheus.GaugeVec
	evictions    *prometheus.CounterVec
	blocked      *prometheus.CounterVec

	relists     *prometheus.CounterVec
	watchErrors *prometheus.CounterVec
	events      *prometheus.CounterVec
	lastSync    *prometheus.GaugeVec

	costs  *costs
	starts *starts

	mu      sync.Mutex
	pools   map[string]v1alpha1.PoolRef // PoolCapacity name -> the Pool its series name
	counted map[string]map[failed]v1alpha1.FailureReason
}

// failed identifies a failed pod.
type failed struct{ namespace, pod string }

// New returns the provider's metrics, registered with reg.
func New(reg prometheus.Registerer) *Metrics {
	// pool returns the labels of a pool's series, then more.
	pool := func(more ...string) []string { return append([]string{labelPool, labelNamespace}, more...) }
	gauge := func(name, help string, labels []string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		reg.MustRegister(g)
		return g
	}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		reg.MustRegister(c)
		return c
	}
	c, st := newCosts(), newStarts()
	reg.MustRegister(c, st)
	return &Metrics{
		costs:        c,
		starts:       st,
		executors:    gauge("burstpool_pool_executors", "Executor slots of a pool by state: total, available, occupied, pending or draining.", pool(labelState)),
		maxExecutors: gauge("burstpool_pool_max_executors", "The pool's maxExecutors.", pool()),
		nodes:        gauge("burstpool_pool_nodes", "Nodes of a pool by state: ready or not_ready.", pool(labelState)),
		warmReady:    gauge("burstpool_pool_warm_images_ready", "Images with at least one running warmup pod on the pool.", pool()),
		warmFailing:  gauge("burstpool_pool_warmup_failures", "Images whose warmup pods cannot pull them.", pool()),
		failures:     gauge("burstpool_pool_executor_failures", "Executor failures the pool's status lists, by reason.", pool(labelReason)),
		failuresAll:  counter("burstpool_pool_executor_failures_total", "Executor failures diagnosed, by reason: each failed pod once per reason.", pool(labelReason)),
		observed:     gauge("burstpool_pool_last_observed_timestamp_seconds", "When the provider last knew its view of the pool's cluster to be current (status.atProvider.lastObservedTime), as a Unix time.", pool()),
		requestedCPU: gauge("burstpool_pool_requested_cpu_cores", "CPU the pool's occupied, draining and pending executors request.", pool()),
		requestedMem: gauge("burstpool_pool_requested_memory_bytes", "Memory the pool's occupied, draining and pending executors request.", pool()),
		unauthorized: gauge("burstpool_pool_unauthorized_executors", "Pool executors of QueryServices not attached to the pool.", pool()),
		unplaceable:  gauge("burstpool_pool_unplaceable_executors", "Pending pool executors that ask for the pool's nodes but could run on none of them: they count for nothing.", pool()),
		overdueExecs: gauge("burstpool_pool_overdue_executors", "Pool executors still at the executor gate more than its bound plus a slack after their creation (status.atProvider.overdue.executors): their release is failing.", pool()),
		overdueNodes: gauge("burstpool_pool_overdue_nodes", "Ready pool nodes still carrying the startup taint more than startup.openAfter plus a slack after their creation (status.atProvider.overdue.nodes): their opening is failing.", pool()),
		qsExecutors:  gauge("burstpool_queryservice_executors", "Executors of an attached QueryService by type: pool, pending (pool executors waiting for a slot), regular, or share (its maxPoolExecutors, when the pool bounds it).", pool(labelQS, labelQSNS, labelType)),
		warmLevel:    gauge("burstpool_pool_warm_recommended_executors", "The learned warm level the provider publishes for the pool (status.atProvider.warmRecommendation.executors), while its spec asks for one.", pool()),
		demandWeeks:  gauge("burstpool_pool_demand_history_weeks", "Weeks of the last 4 the pool was observed in, the current one included (status.atProvider.demand.weeks).", pool()),
		evictions:    counter("burstpool_pool_evictions_total", "Pods deleted by the pool's policies, by reason.", pool(labelReason)),
		blocked:      counter("burstpool_pool_evictions_blocked_total", "Evictions a PodDisruptionBudget refused, by reason.", pool(labelReason)),
		relists:      counter("burstpool_observer_relists_total", "Full relists of pool pods and nodes, by result.", []string{labelConfig, labelResult}),
		watchErrors:  counter("burstpool_observer_watch_errors_total", "Errors of the pod and node watches.", []string{labelConfig}),
		events:       counter("burstpool_observer_events_total", "Pod and node events applied to the snapshot.", []string{labelConfig}),
		lastSync:     gauge("burstpool_observer_last_sync_timestamp_seconds", "When the observer last knew its view of the cluster to be current, as a Unix time.", []string{labelConfig}),
		pools:        map[string]v1alpha1.PoolRef{},
		counted:      map[string]map[failed]v1alpha1.FailureReason{},
	}
}

// Record sets the series of the pool spec names from res, for the
// PoolCapacity called name, and counts res's new failures. observed is when
// the provider last knew its view of the pool's cluster to be current. When
// the PoolCapacity used to report another Pool, that Pool's series go.
func (m *Metrics) Record(name string, spec v1alpha1.PoolCapacityParameters, res capacity.Result, observed time.Time) {
	m.mu.Lock()
	if old, ok := m.pools[name]; ok && old != spec.Pool {
		m.forgetPool(old)
	}
	m.pools[name] = spec.Pool
	fresh := m.countFailures(name, res.Failing)
	m.mu.Unlock()

	p, ns := spec.Pool.Name, spec.Pool.Namespace
	o := res.Observation
	m.executors.WithLabelValues(p, ns, "draining").Set(float64(o.DrainingExecutors))
	m.observed.WithLabelValues(p, ns).Set(float64(observed.Unix()))
	var cpu, mem float64
	if r := o.Requested; r != nil {
		cpu, mem = r.CPU.AsApproximateFloat64(), r.Memory.AsApproximateFloat64()
	}
	m.requestedCPU.WithLabelValues(p, ns).Set(cpu)
	m.requestedMem.WithLabelValues(p, ns).Set(mem)
	for _, r := range fresh {
		m.failuresAll.WithLabelValues(p, ns, string(r)).Inc()
	}
	m.executors.WithLabelValues(p, ns, "total").Set(float64(o.TotalExecutors))
	m.executors.WithLabelValues(p, ns, "available").Set(float64(o.AvailableExecutors))
	m.executors.WithLabelValues(p, ns, "occupied").Set(float64(o.OccupiedExecutors))
	m.executors.WithLabelValues(p, ns, "pending").Set(float64(o.PendingExecutors))
	m.maxExecutors.WithLabelValues(p, ns).Set(float64(spec.MaxExecutors))
	m.nodes.WithLabelValues(p, ns, "ready").Set(float64(o.Nodes.Ready))
	m.nodes.WithLabelValues(p, ns, "not_ready").Set(float64(o.Nodes.NotReady))
	m.warmReady.WithLabelValues(p, ns).Set(float64(res.WarmImagesReady))
	m.warmFailing.WithLabelValues(p, ns).Set(float64(len(o.WarmupFailures)))
	m.unauthorized.WithLabelValues(p, ns).Set(float64(o.UnauthorizedCount))
	m.unplaceable.WithLabelValues(p, ns).Set(float64(o.UnplaceableCount))
	var late v1alpha1.Overdue
	if o.Overdue != nil {
		late = *o.Overdue
	}
	m.overdueExecs.WithLabelValues(p, ns).Set(float64(late.Executors))
	m.overdueNodes.WithLabelValues(p, ns).Set(float64(late.Nodes))

	byReason := make(map[v1alpha1.FailureReason]int, len(v1alpha1.FailureReasons))
	for _, r := range v1alpha1.FailureReasons {
		byReason[r] = 0
	}
	for _, f := range o.Failures {
		byReason[f.Reason]++
	}
	for r, n := range byReason {
		m.failures.WithLabelValues(p, ns, string(r)).Set(float64(n))
	}

	m.qsExecutors.DeletePartialMatch(prometheus.Labels{labelPool: p, labelNamespace: ns})
	for _, a := range o.Allocations {
		m.qsExecutors.WithLabelValues(p, ns, a.QueryService, a.Namespace, "pool").Set(float64(a.PoolExecutors))
		m.qsExecutors.WithLabelValues(p, ns, a.QueryService, a.Namespace, "regular").Set(float64(a.RegularExecutors))
		m.qsExecutors.WithLabelValues(p, ns, a.QueryService, a.Namespace, "pending").Set(float64(a.PendingExecutors))
		if a.MaxPoolExecutors > 0 {
			m.qsExecutors.WithLabelValues(p, ns, a.QueryService, a.Namespace, "share").Set(float64(a.MaxPoolExecutors))
		}
	}
}

// Warm sets the series of the pool's demand history d and learned warm
// level r; the latter goes while r is nil.
func (m *Metrics) Warm(spec v1alpha1.PoolCapacityParameters, d *v1alpha1.DemandHistory, r *v1alpha1.WarmRecommendation) {
	p, ns := spec.Pool.Name, spec.Pool.Namespace
	var weeks int32
	if d != nil {
		weeks = d.Weeks
	}
	m.demandWeeks.WithLabelValues(p, ns).Set(float64(weeks))
	if r == nil {
		m.warmLevel.DeleteLabelValues(p, ns)
		return
	}
	m.warmLevel.WithLabelValues(p, ns).Set(float64(r.Executors))
}

// Evicted counts a pod deleted by the pool's policies.
func (m *Metrics) Evicted(spec v1alpha1.PoolCapacityParameters, reason string) {
	m.evictions.WithLabelValues(spec.Pool.Name, spec.Pool.Namespace, reason).Inc()
}

// EvictionBlocked counts an eviction a PodDisruptionBudget refused.
func (m *Metrics) EvictionBlocked(spec v1alpha1.PoolCapacityParameters, reason string) {
	m.blocked.WithLabelValues(spec.Pool.Name, spec.Pool.Namespace, reason).Inc()
}

// countFailures returns the reasons of the failures in failing that were
// not counted yet for the PoolCapacity called name: each failed pod counts
// once per reason, for as long as it stays failed. m.mu must be held.
func (m *Metrics) countFailures(name string, failing []v1alpha1.Failure) []v1alpha1.FailureReason {
	before := m.counted[name]
	now := make(map[failed]v1alpha1.FailureReason, len(failing))
	var fresh []v1alpha1.FailureReason
	for _, f := range failing {
		k := failed{f.Namespace, f.Pod}
		if r, ok := before[k]; !ok || r != f.Reason {
			fresh = append(fresh, f.Reason)
		}
		now[k] = f.Reason
	}
	m.counted[name] = now
	return fresh
}

// Forget drops every series of the Pool the PoolCapacity called name
// reports.
func (m *Metrics) Forget(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.pools[name]; ok {
		m.forgetPool(p)
		delete(m.pools, name)
		delete(m.counted, name)
	}
}

func (m *Metrics) forgetPool(p v1alpha1.PoolRef) {
	l := prometheus.Labels{labelPool: p.Name, labelNamespace: p.Namespace}
	for _, v := range []*prometheus.GaugeVec{m.executors, m.maxExecutors, m.nodes, m.warmReady, m.warmFailing, m.failures,
		m.unauthorized, m.unplaceable, m.overdueExecs, m.overdueNodes, m.qsExecutors, m.observed, m.requestedCPU, m.requestedMem,
		m.warmLevel, m.demandWeeks} {
		v.DeletePartialMatch(l)
	}
	for _, v := range []*prometheus.CounterVec{m.evictions, m.blocked, m.failuresAll} {
		v.DeletePartialMatch(l)
	}
	m.costs.forget(p)
	m.starts.set(p, nil)
}

// Observer returns a recorder of what the observer of one ProviderConfig's
// cluster does.
func (m *Metrics) Observer(providerConfig string) *ObserverRecorder {
	return &ObserverRecorder{m: m, pc: providerConfig}
}

// An ObserverRecorder counts relists, watch errors and events of one
// cluster's observer.
type ObserverRecorder struct {
	m  *Metrics
	pc string
}

// Relisted counts a relist.
func (r *ObserverRecorder) Relisted(err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	r.m.relists.WithLabelValues(r.pc, result).Inc()
}

// WatchFailed counts a watch error.
func (r *ObserverRecorder) WatchFailed() { r.m.watchErrors.WithLabelValues(r.pc).Inc() }

// Synced records when the observer last knew its view to be current.
func (r *ObserverRecorder) Synced(t time.Time) {
	r.m.lastSync.WithLabelValues(r.pc).Set(float64(t.Unix()))
}

// Forget drops the observer's series, when it stops.
func (r *ObserverRecorder) Forget() {
	l := prometheus.Labels{labelConfig: r.pc}
	r.m.relists.DeletePartialMatch(l)
	r.m.watchErrors.DeletePartialMatch(l)
	r.m.events.DeletePartialMatch(l)
	r.m.lastSync.DeletePartialMatch(l)
}

// Applied counts applied events.
func (r *ObserverRecorder) Applied(n int) { r.m.events.WithLabelValues(r.pc).Add(float64(n)) }
