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
	gauges      *pools
	failuresAll *prometheus.CounterVec
	evictions   *prometheus.CounterVec
	blocked     *prometheus.CounterVec

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
	c, st, ps := newCosts(), newStarts(), newPools()
	reg.MustRegister(c, st, ps)
	return &Metrics{
		costs:       c,
		starts:      st,
		gauges:      ps,
		failuresAll: counter("burstpool_pool_executor_failures_total", "Executor failures diagnosed, by reason: each failed pod once per reason.", pool(labelReason)),
		evictions:   counter("burstpool_pool_evictions_total", "Pods deleted by the pool's policies, by reason.", pool(labelReason)),
		blocked:     counter("burstpool_pool_evictions_blocked_total", "Evictions a PodDisruptionBudget refused, by reason.", pool(labelReason)),
		relists:     counter("burstpool_observer_relists_total", "Full relists of pool pods and nodes, by result.", []string{labelConfig, labelResult}),
		watchErrors: counter("burstpool_observer_watch_errors_total", "Errors of the pod and node watches.", []string{labelConfig}),
		events:      counter("burstpool_observer_events_total", "Pod and node events applied to the snapshot.", []string{labelConfig}),
		lastSync:    gauge("burstpool_observer_last_sync_timestamp_seconds", "When the observer last knew its view of the cluster to be current, as a Unix time.", []string{labelConfig}),
		pools:       map[string]v1alpha1.PoolRef{},
		counted:     map[string]map[failed]v1alpha1.FailureReason{},
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
	for _, r := range fresh {
		m.failuresAll.WithLabelValues(p, ns, string(r)).Inc()
	}
	v := &poolValues{
		executors: [len(executorStates)]float64{float64(o.TotalExecutors), float64(o.AvailableExecutors),
			float64(o.OccupiedExecutors), float64(o.PendingExecutors), float64(o.DrainingExecutors)},
		max: float64(spec.MaxExecutors), ready: float64(o.Nodes.Ready), notReady: float64(o.Nodes.NotReady),
		warmReady: float64(res.WarmImagesReady), warmFailing: float64(len(o.WarmupFailures)),
		observed: float64(observed.Unix()), unauthorized: float64(o.UnauthorizedCount), unplaceable: float64(o.UnplaceableCount),
	}
	if r := o.Requested; r != nil {
		v.cpu, v.mem = r.CPU.AsApproximateFloat64(), r.Memory.AsApproximateFloat64()
	}
	if o.Overdue != nil {
		v.late, v.lateNo = float64(o.Overdue.Executors), float64(o.Overdue.Nodes)
	}
	for _, f := range o.Failures {
		if v.failures == nil {
			v.failures = map[v1alpha1.FailureReason]int{}
		}
		v.failures[f.Reason]++
	}
	for _, a := range o.Allocations {
		v.queryServices = append(v.queryServices, queryServiceValues{name: a.QueryService, namespace: a.Namespace,
			pool: float64(a.PoolExecutors), regular: float64(a.RegularExecutors), pending: float64(a.PendingExecutors), share: float64(a.MaxPoolExecutors)})
	}
	m.gauges.set(spec.Pool, v)
}

// Warm sets the series of the pool's demand history d and learned warm
// level r; the latter goes while r is nil.
func (m *Metrics) Warm(spec v1alpha1.PoolCapacityParameters, d *v1alpha1.DemandHistory, r *v1alpha1.WarmRecommendation) {
	var w warmValues
	if d != nil {
		w.weeks = float64(d.Weeks)
	}
	if r != nil {
		w.level, w.recommended = float64(r.Executors), true
	}
	m.gauges.setWarm(spec.Pool, w)
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
	m.gauges.set(p, nil)
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
