package failsafe

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// Metrics are the fail-safe's series. Any increase of the counters means
// the provider missed a bound; docs/capacity.md says what to check.
type Metrics struct {
	Released *prometheus.CounterVec
	Opened   *prometheus.CounterVec
	Errors   prometheus.Counter
	LastPass prometheus.Gauge
	// ProviderDown is 1 while no provider replica renews the Lease.
	ProviderDown prometheus.Gauge
}

// NewMetrics registers the fail-safe's series with r.
func NewMetrics(r prometheus.Registerer) *Metrics {
	m := &Metrics{
		Released: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "burstpool_failsafe_executors_released_total",
			Help: "Executors whose executor gate the fail-safe removed because the capacity provider had not within the bound.",
		}, []string{"pool", "pool_namespace"}),
		Opened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "burstpool_failsafe_nodes_opened_total",
			Help: "Pool nodes whose startup taint the fail-safe removed because the capacity provider had not within openAfter and the grace.",
		}, []string{"pool", "pool_namespace"}),
		Errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "burstpool_failsafe_errors_total",
			Help: "Lists and patches of the fail-safe that failed.",
		}),
		LastPass: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "burstpool_failsafe_last_pass_timestamp_seconds",
			Help: "When the fail-safe last read the cluster whole.",
		}),
		ProviderDown: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "burstpool_failsafe_provider_down",
			Help: "1 while no capacity provider replica has renewed its Lease within the silence bound: the fail-safe then removes executor gates past their bound.",
		}),
	}
	r.MustRegister(m.Released, m.Opened, m.Errors, m.LastPass, m.ProviderDown)
	return m
}

// Runner reads the cluster, decides and patches, every Interval.
type Runner struct {
	Client client.Client
	// Lease is the provider's leader-election Lease.
	Lease    types.NamespacedName
	Bounds   Bounds
	Interval time.Duration
	Metrics  *Metrics
	Log      logr.Logger
	Now      func() time.Time
}

// Run passes until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		if err := r.Pass(ctx); err != nil && ctx.Err() == nil {
			r.Metrics.Errors.Inc()
			r.Log.Info("pass failed", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Pass reads the executors waiting unbound, the pool nodes and the
// PoolCapacities, and undoes what the provider left past its bounds. A
// patch that fails is counted and retried on the next pass.
func (r *Runner) Pass(ctx context.Context) error {
	pods, nodes, pools, renewed, err := r.gather(ctx)
	if err != nil {
		return err
	}
	now := r.Now()
	down := ProviderDown(now, renewed, r.Bounds.Silence)
	if down {
		r.Metrics.ProviderDown.Set(1)
	} else {
		r.Metrics.ProviderDown.Set(0)
	}
	plan := Decide(now, r.Bounds, down, qsv1.GateExecutor, qsv1.TaintWarming, pods, nodes, pools)
	var failed int
	for _, rel := range plan.Release {
		if err := r.release(ctx, rel); err != nil {
			failed++
			r.Metrics.Errors.Inc()
			r.Log.Info("cannot remove the executor gate", "pod", rel.Pod.Namespace+"/"+rel.Pod.Name, "error", err.Error())
			continue
		}
		r.Metrics.Released.WithLabelValues(rel.Pod.Labels[qsv1.LabelPool], rel.Pod.Labels[qsv1.LabelPoolNamespace]).Inc()
		r.Log.Info("removed the executor gate the provider left past its bound", "pod", rel.Pod.Namespace+"/"+rel.Pod.Name, "waited", rel.Waited.Round(time.Second).String())
	}
	for _, o := range plan.Open {
		if err := r.open(ctx, o); err != nil {
			failed++
			r.Metrics.Errors.Inc()
			r.Log.Info("cannot open the node", "node", o.Node.Name, "error", err.Error())
			continue
		}
		r.Metrics.Opened.WithLabelValues(o.Node.Labels[qsv1.LabelPool], o.Node.Labels[qsv1.LabelPoolNamespace]).Inc()
		r.Log.Info("opened a pool node the provider left closed past openAfter", "node", o.Node.Name, "pool", o.Pool, "waited", o.Waited.Round(time.Second).String())
	}
	r.Metrics.LastPass.Set(float64(now.Unix()))
	if failed > 0 {
		return fmt.Errorf("%d of %d edits failed", failed, len(plan.Release)+len(plan.Open))
	}
	return nil
}

func (r *Runner) gather(ctx context.Context) ([]Pod, []Node, []Pool, time.Time, error) {
	var renewed time.Time
	var l coordinationv1.Lease
	switch err := r.Client.Get(ctx, r.Lease, &l); {
	case kerrors.IsNotFound(err):
	case err != nil:
		return nil, nil, nil, renewed, fmt.Errorf("cannot read the provider's Lease %s: %w", r.Lease, err)
	case l.Spec.RenewTime != nil:
		renewed = l.Spec.RenewTime.Time
	case l.Spec.AcquireTime != nil:
		renewed = l.Spec.AcquireTime.Time
	}
	var pl corev1.PodList
	// Only unbound executors can carry the gate; the field selector keeps
	// the list small however many executors run.
	if err := r.Client.List(ctx, &pl, client.MatchingLabels{qsv1.LabelExecutorType: qsv1.ExecutorTypePool},
		client.MatchingFields{"spec.nodeName": ""}); err != nil {
		return nil, nil, nil, renewed, fmt.Errorf("cannot list executors: %w", err)
	}
	pods := make([]Pod, 0, len(pl.Items))
	for i := range pl.Items {
		p := &pl.Items[i]
		gates := make([]string, 0, len(p.Spec.SchedulingGates))
		for _, g := range p.Spec.SchedulingGates {
			gates = append(gates, g.Name)
		}
		pods = append(pods, Pod{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels, Gates: gates, NodeName: p.Spec.NodeName,
			Created: p.CreationTimestamp.Time, Deleting: p.DeletionTimestamp != nil})
	}
	var nl corev1.NodeList
	if err := r.Client.List(ctx, &nl, client.HasLabels{qsv1.LabelPool}); err != nil {
		return nil, nil, nil, renewed, fmt.Errorf("cannot list pool nodes: %w", err)
	}
	nodes := make([]Node, 0, len(nl.Items))
	for i := range nl.Items {
		n := &nl.Items[i]
		nodes = append(nodes, Node{Name: n.Name, Labels: n.Labels, Taints: n.Spec.Taints, Created: n.CreationTimestamp.Time,
			Ready: ready(n), Deleting: n.DeletionTimestamp != nil})
	}
	var cl v1alpha1.PoolCapacityList
	if err := r.Client.List(ctx, &cl); err != nil {
		return nil, nil, nil, renewed, fmt.Errorf("cannot list PoolCapacities: %w", err)
	}
	var pools []Pool
	for i := range cl.Items {
		pc := &cl.Items[i]
		s := pc.Spec.ForProvider.Startup
		if s == nil || s.Taint.Key == "" {
			continue
		}
		pools = append(pools, Pool{Name: pc.Name, Taint: s.Taint, NodeSelector: pc.Spec.ForProvider.NodeSelector, OpenAfter: s.OpenAfter.Duration})
	}
	return pods, nodes, pools, renewed, nil
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// release removes the executor gate with a JSON patch that first tests the
// gates it read: if the provider (or the scheduler's binding) got there
// first, the patch fails and changes nothing.
func (r *Runner) release(ctx context.Context, rel Release) error {
	old := make([]corev1.PodSchedulingGate, 0, len(rel.Pod.Gates))
	for _, g := range rel.Pod.Gates {
		old = append(old, corev1.PodSchedulingGate{Name: g})
	}
	gates := make([]corev1.PodSchedulingGate, 0, len(rel.Gates))
	for _, g := range rel.Gates {
		gates = append(gates, corev1.PodSchedulingGate{Name: g})
	}
	ops := []map[string]any{{"op": "test", "path": "/spec/schedulingGates", "value": old}}
	if len(gates) == 0 {
		ops = append(ops, map[string]any{"op": "remove", "path": "/spec/schedulingGates"})
	} else {
		ops = append(ops, map[string]any{"op": "replace", "path": "/spec/schedulingGates", "value": gates})
	}
	return r.patch(ctx, &corev1.Pod{}, rel.Pod.Namespace, rel.Pod.Name, ops)
}

// open removes the startup taint the same way, testing the taints it read.
func (r *Runner) open(ctx context.Context, o Open) error {
	ops := []map[string]any{{"op": "test", "path": "/spec/taints", "value": o.Node.Taints}}
	if len(o.Taints) == 0 {
		ops = append(ops, map[string]any{"op": "remove", "path": "/spec/taints"})
	} else {
		ops = append(ops, map[string]any{"op": "replace", "path": "/spec/taints", "value": o.Taints})
	}
	return r.patch(ctx, &corev1.Node{}, "", o.Node.Name, ops)
}

func (r *Runner) patch(ctx context.Context, obj client.Object, ns, name string, ops []map[string]any) error {
	data, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	obj.SetNamespace(ns)
	obj.SetName(name)
	return r.Client.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, data))
}
