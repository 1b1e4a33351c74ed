// Package metrics exports what the capacity provider observes as Prometheus
// gauges and counters, per pool and per QueryService.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// Label names.
const (
	labelPool      = "pool"
	labelNamespace = "namespace"
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
	unauthorized *prometheus.GaugeVec
	qsExecutors  *prometheus.GaugeVec
	evictions    *prometheus.CounterVec

	relists     *prometheus.CounterVec
	watchErrors *prometheus.CounterVec
	events      *prometheus.CounterVec
}

// New returns the provider's metrics, registered with reg.
func New(reg prometheus.Registerer) *Metrics {
	pool := []string{labelPool, labelNamespace}
	m := &Metrics{
		executors: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "burstpool_pool_executors",
			Help: "Executor slots of a pool by state: total, available, occupied or pending.",
		}, append(pool, labelState)),
		maxExecutors: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "burstpool_pool_max_executors",
			Help: "The pool's maxExecutors.",
		}, pool),
		nodes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "burstpool_pool_nodes",
			Help: "Nodes of a pool by state: ready or not_ready.",
		}, append(pool, labelState)),
		warmReady: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "burstpool_pool_warm_images_ready",
			Help: "Images with at least one running warmup pod on the pool.",
		}, pool),
		warmFailing: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "burstpool_pool_warmup_failures",
			Help: "Images whose warmup pods cannot pull them.",
		}, pool),
		failures: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "burstpool_pool_executor_failures",
			Help: "Executor failures the pool's status lists, by reason.",
		}, append(pool, labelReason)),
		unauthorized: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "burstpool_pool_unauthorized_executors",
			Help: "Pool executors of QueryServices not attached to the pool.",
		}, pool),
		qsExecutors: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "burstpool_queryservice_executors",
			Help: "Executors of an attached QueryService by type: pool, pending (pool executors waiting for a slot), regular, or share (its maxPoolExecutors, when the pool bounds it).",
		}, append(pool, labelQS, labelQSNS, labelType)),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "burstpool_pool_evictions_total",
			Help: "Pods deleted by the pool's policies, by reason.",
		}, append(pool, labelReason)),
		relists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "burstpool_observer_relists_total",
			Help: "Full relists of pool pods and nodes, by result.",
		}, []string{labelConfig, labelResult}),
		watchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "burstpool_observer_watch_errors_total",
			Help: "Errors of the pod and node watches.",
		}, []string{labelConfig}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "burstpool_observer_events_total",
			Help: "Pod and node events applied to the snapshot.",
		}, []string{labelConfig}),
	}
	reg.MustRegister(m.executors, m.maxExecutors, m.nodes, m.warmReady, m.warmFailing, m.failures,
		m.unauthorized, m.qsExecutors, m.evictions, m.relists, m.watchErrors, m.events)
	return m
}

// Record sets the gauges of the pool spec names from res.
func (m *Metrics) Record(spec v1alpha1.PoolCapacityParameters, res capacity.Result) {
	p, ns := spec.Pool.Name, spec.Pool.Namespace
	o := res.Observation
	m.executors.WithLabelValues(p, ns, "total").Set(float64(o.TotalExecutors))
	m.executors.WithLabelValues(p, ns, "available").Set(float64(o.AvailableExecutors))
	m.executors.WithLabelValues(p, ns, "occupied").Set(float64(o.OccupiedExecutors))
	m.executors.WithLabelValues(p, ns, "pending").Set(float64(o.PendingExecutors))
	m.maxExecutors.WithLabelValues(p, ns).Set(float64(spec.MaxExecutors))
	m.nodes.WithLabelValues(p, ns, "ready").Set(float64(o.Nodes.Ready))
	m.nodes.WithLabelValues(p, ns, "not_ready").Set(float64(o.Nodes.NotReady))
	m.warmReady.WithLabelValues(p, ns).Set(float64(res.WarmImagesReady))
	m.warmFailing.WithLabelValues(p, ns).Set(float64(len(o.WarmupFailures)))
	m.unauthorized.WithLabelValues(p, ns).Set(float64(len(o.UnauthorizedExecutors)))

	byReason := map[v1alpha1.FailureReason]int{
		v1alpha1.FailureOOMKilled: 0, v1alpha1.FailureImagePullError: 0, v1alpha1.FailureEvicted: 0,
		v1alpha1.FailureNodeLost: 0, v1alpha1.FailureError: 0,
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

// Evicted counts a pod deleted by the pool's policies.
func (m *Metrics) Evicted(spec v1alpha1.PoolCapacityParameters, reason string) {
	m.evictions.WithLabelValues(spec.Pool.Name, spec.Pool.Namespace, reason).Inc()
}

// Forget drops every series of the pool spec names.
func (m *Metrics) Forget(spec v1alpha1.PoolCapacityParameters) {
	l := prometheus.Labels{labelPool: spec.Pool.Name, labelNamespace: spec.Pool.Namespace}
	for _, v := range []*prometheus.GaugeVec{m.executors, m.maxExecutors, m.nodes, m.warmReady, m.warmFailing, m.failures, m.unauthorized, m.qsExecutors} {
		v.DeletePartialMatch(l)
	}
	m.evictions.DeletePartialMatch(l)
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

// Applied counts applied events.
func (r *ObserverRecorder) Applied(n int) { r.m.events.WithLabelValues(r.pc).Add(float64(n)) }
