// Package poolcapacity ships in the capacity provider: the PoolCapacity
// controller, which observes each pool's nodes and executor pods and writes
// what the pool holds into the PoolCapacity's status.
package poolcapacity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	xperrors "github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/cost"
	"github.com/burstpool/burstpool/internal/metrics"
	"github.com/burstpool/burstpool/internal/watch"
)

// fingerprintLocal identifies the cluster the provider runs in.
const fingerprintLocal = "InjectedIdentity"

// Options configure the PoolCapacity controller.
type Options struct {
	controller.Options

	// Watch configures the observers of pool nodes and pods.
	Watch watch.Options

	// Metrics, if set, exports each pool's capacity.
	Metrics *metrics.Metrics

	// Clock returns the current time; time.Now if nil.
	Clock func() time.Time

	// EvictionsPerMinute and EvictionBurst bound how fast one pool's
	// policies evict pods; DefaultEvictionsPerMinute and
	// DefaultEvictionBurst if zero.
	EvictionsPerMinute float64
	EvictionBurst      int

	// StaleAfter is how long a pool's cluster may go unobserved before its
	// PoolCapacity's Stale condition turns True; DefaultStaleAfter if
	// zero.
	StaleAfter time.Duration
}

// DefaultStaleAfter is the default of Options.StaleAfter.
const DefaultStaleAfter = 5 * time.Minute

// Stale condition of a PoolCapacity.
const (
	TypeStale                                  = xpv2.ConditionType("Stale")
	ReasonObserverCurrent xpv2.ConditionReason = "ObserverCurrent"
	ReasonObserverBehind  xpv2.ConditionReason = "ObserverBehind"
)

// Setup adds the PoolCapacity controller to mgr.
func Setup(mgr ctrl.Manager, o Options) error {
	name := managed.ControllerName(v1alpha1.PoolCapacityGroupKind)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = DefaultStaleAfter
	}
	cs := newClusters(o.Watch, o.Metrics, ctrl.Log.WithName("observer"))
	if err := mgr.Add(cs); err != nil {
		return errors.Wrap(err, "cannot add the pool observers to the manager")
	}
	rec := event.NewAPIRecorder(mgr.GetEventRecorderFor(name)) //nolint:staticcheck // crossplane-runtime v2.4's event recorder wraps the core events API recorder
	c := &connector{
		kube:    mgr.GetClient(),
		secrets: mgr.GetAPIReader(),
		base:    mgr.GetConfig(),
		usage:   resource.NewLegacyProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
		shared: shared{
			record:     rec,
			clusters:   cs,
			metrics:    o.Metrics,
			clock:      o.Clock,
			evictions:  newEvictions(o.EvictionsPerMinute, o.EvictionBurst),
			staleAfter: o.StaleAfter,
			shed:       &shedding{},
			buffers:    &bufferScales{last: map[string]scaled{}},
			gates:      &gates{last: map[string]gateApplied{}},
		},
	}
	opts := []managed.ReconcilerOption{
		managed.WithExternalConnector(c),
		managed.WithInitializers(),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithPollInterval(o.PollInterval),
		managed.WithRecorder(rec),
		managed.WithManagementPolicies(),
	}
	// crossplane-runtime's managed-resource metrics: time to first
	// reconcile and to Ready, deletion and drift.
	if m := o.MetricOptions; m != nil && m.MRMetrics != nil {
		opts = append(opts, managed.WithMetricRecorder(m.MRMetrics))
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(v1alpha1.PoolCapacityGroupVersionKind), opts...)

	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.PoolCapacity{}, builder.WithPredicates(notStatusOnly())).
		WatchesRawSource(source.Channel(cs.events, &handler.EnqueueRequestForObject{})).
		Complete(ratelimiter.NewReconciler(name, xperrors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// notStatusOnly drops updates of a PoolCapacity that change nothing but its
// status (and so its resource version and managed fields). The provider
// writes that status itself: reconciling again because of it would only
// repeat the reconcile that wrote it, at the shared rate limit.
func notStatusOnly() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		if o == nil || n == nil {
			return true
		}
		return o.GetGeneration() != n.GetGeneration() ||
			!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
			!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
			!equality.Semantic.DeepEqual(o.GetFinalizers(), n.GetFinalizers()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
	}}
}

// A connector finds the cluster a PoolCapacity's ProviderConfig points at
// and hands out a client over that cluster's snapshot.
type connector struct {
	kube    client.Client
	secrets client.Reader
	base    *rest.Config
	usage   *resource.LegacyProviderConfigUsageTracker
	shared
}

// shared is the state the connector hands every client it makes, so that
// it lasts across reconciles: the observers, the eviction rate limit and
// the record of the last over-share evictions.
type shared struct {
	record     event.Recorder
	clusters   *clusters
	metrics    *metrics.Metrics
	clock      func() time.Time
	evictions  *evictions
	staleAfter time.Duration
	shed       *shedding
	buffers    *bufferScales
	gates      *gates
}

// shedding remembers each PoolCapacity's last over-share evictions.
type shedding struct {
	mu   sync.Mutex
	last map[string]shed
}

type shed struct {
	evs []capacity.Eviction
	at  time.Time
}

// shedHold bounds how long over-share evictions wait for the snapshot to
// show the last ones (an eviction a PodDisruptionBudget refused never
// shows).
const shedHold = 30 * time.Second

// hold returns evs without its over-share evictions while the last ones of
// PoolCapacity name are not yet seen in snap (for at most shedHold), and
// remembers the ones it lets through.
func (s *shedding) hold(name string, snap capacity.Snapshot, evs []capacity.Eviction, now time.Time) []capacity.Eviction {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]shed{}
	}
	prev := s.last[name]
	wait := now.Sub(prev.at) < shedHold && capacity.Unsettled(snap, prev.evs)
	out := make([]capacity.Eviction, 0, len(evs))
	var shedding []capacity.Eviction
	for _, ev := range evs {
		if ev.Reason == capacity.EvictOverShare {
			if wait {
				continue
			}
			shedding = append(shedding, ev)
		}
		out = append(out, ev)
	}
	if !wait && len(shedding) > 0 {
		s.last[name] = shed{evs: shedding, at: now}
	}
	return out
}

// ReasonClusterUnreachable is the Ready condition's reason while the
// provider cannot observe a PoolCapacity's cluster.
const ReasonClusterUnreachable xpv2.ConditionReason = "ClusterUnreachable"

// Connect records the ProviderConfig's use, then returns a client over the
// synced snapshot of its cluster. It starts observing the cluster the first
// time a ProviderConfig is used, and again when its credentials change. It
// never waits for the cluster: until its observer has synced, Connect fails
// at once, with Ready False (ClusterUnreachable) saying why, and the
// PoolCapacity is retried with backoff and queued again when the observer
// syncs. A PoolCapacity being deleted needs no cluster at all.
func (c *connector) Connect(ctx context.Context, mg resource.Managed) (managed.ExternalClient, error) {
	cr, ok := mg.(*v1alpha1.PoolCapacity)
	if !ok {
		return nil, errors.New("managed resource is not a PoolCapacity")
	}
	if meta.WasDeleted(cr) {
		return &external{shared: c.shared}, nil
	}
	ext, err := c.connect(ctx, cr)
	if err != nil {
		cr.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now(),
			Reason: ReasonClusterUnreachable, Message: err.Error()})
		return nil, err
	}
	return ext, nil
}

func (c *connector) connect(ctx context.Context, cr *v1alpha1.PoolCapacity) (*external, error) {
	if err := c.usage.Track(ctx, cr); err != nil {
		return nil, errors.Wrapf(err, "cannot track the ProviderConfig use of PoolCapacity %q", cr.Name)
	}
	ref := cr.GetProviderConfigReference()
	pc, err := GetProviderConfig(ctx, c.kube, c.secrets, ref.Name)
	if err != nil {
		return nil, err
	}
	cfg, fp, err := c.restConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	c.clusters.track(cr.Name, pc.Name, capacity.PoolKey(cr.Spec.ForProvider))
	obs, err := c.clusters.observer(ctx, pc.Name, fp, cfg)
	if err != nil {
		return nil, err
	}
	return &external{config: pc.Name, obs: obs, shared: c.shared, local: fp == fingerprintLocal}, nil
}

// restConfig returns how to reach the cluster pc points at, and a
// fingerprint that changes when that changes.
func (c *connector) restConfig(ctx context.Context, pc *v1alpha1.ProviderConfig) (*rest.Config, string, error) {
	cd := pc.Spec.Credentials
	switch cd.Source {
	case xpv2.CredentialsSourceInjectedIdentity:
		return rest.CopyConfig(c.base), fingerprintLocal, nil
	case xpv2.CredentialsSourceSecret:
		ref := cd.SecretRef
		if ref == nil {
			return nil, "", errors.Errorf("ProviderConfig %q has source Secret but no secretRef", pc.Name)
		}
		s := &corev1.Secret{}
		if err := c.secrets.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
			return nil, "", errors.Wrapf(err, "cannot get the kubeconfig secret %s/%s of ProviderConfig %q", ref.Namespace, ref.Name, pc.Name)
		}
		kc, ok := s.Data[ref.Key]
		if !ok {
			return nil, "", errors.Errorf("secret %s/%s of ProviderConfig %q has no key %q", ref.Namespace, ref.Name, pc.Name, ref.Key)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
		if err != nil {
			return nil, "", errors.Wrapf(err, "cannot read the kubeconfig in secret %s/%s", ref.Namespace, ref.Name)
		}
		sum := sha256.Sum256(kc)
		return cfg, "Secret/" + hex.EncodeToString(sum[:]), nil
	default:
		return nil, "", errors.Errorf("ProviderConfig %q: credentials source %q is not supported; use InjectedIdentity or Secret", pc.Name, cd.Source)
	}
}

// An external reports a pool's capacity from its cluster's snapshot.
// Observe only reads and computes; what the pool's policies change (pods
// to evict or delete) is left for Update, so a PoolCapacity whose
// management policies allow only Observe never acts on a pod.
type external struct {
	config string
	obs    *watch.Observer
	shared
	// local is true when the pool's nodes are in the provider's own
	// cluster, where its events can name them.
	local bool

	// pending is what Observe found to do, for Update in the same
	// reconcile.
	pending *pendingEvictions
}

// pendingEvictions are the evictions Observe computed for one PoolCapacity.
type pendingEvictions struct {
	spec   v1alpha1.PoolCapacityParameters
	snap   capacity.Snapshot
	evicts []capacity.Eviction
	// open and ungate are the nodes to open and the placeholders to
	// release (startup.go); buffer is the pool's CapacityBuffer scale to
	// apply, nil when it is applied already.
	open   []capacity.Opening
	ungate []capacity.Ungate
	buffer *capacity.BufferScale
	// gate is the executor gate to bind (nil: to remove) when gateDue;
	// release lists the executors waiting at it.
	gate    *capacity.ExecutorGate
	gateDue bool
	release *capacity.Release
	now     time.Time
}

// Observe computes the pool's capacity from the current snapshot and sets
// it as status.atProvider; the managed reconciler writes the status. The
// PoolCapacity is up to date unless the pool's policies ask for pods to be
// evicted or deleted, which Update does. A PoolCapacity being deleted
// reports that nothing exists, so its finalizer is removed at once: there
// is nothing external to delete.
func (e *external) Observe(ctx context.Context, mg resource.Managed) (managed.ExternalObservation, error) {
	cr, ok := mg.(*v1alpha1.PoolCapacity)
	if !ok {
		return managed.ExternalObservation{}, errors.New("managed resource is not a PoolCapacity")
	}
	spec := cr.Spec.ForProvider
	if meta.WasDeleted(cr) {
		e.clusters.forget(cr.Name)
		e.evictions.forget(cr.Name)
		e.buffers.forget(cr.Name)
		// The executor gate's policy and binding are the PoolCapacity's
		// dependents: Kubernetes' garbage collector removes them.
		e.gates.forget(cr.Name)
		if e.metrics != nil {
			e.metrics.Forget(cr.Name)
		}
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	e.clusters.track(cr.Name, e.config, capacity.PoolKey(spec))

	// Gather.
	snap := e.obs.Store().Current()

	// Compute.
	now := e.clock()
	res := capacity.Compute(spec, snap, cr.Status.AtProvider, now)

	// Apply the status; the policies' evictions wait for Update.
	lastSync := e.obs.LastSync()
	o := res.Observation
	// lastObservedTime moves in steps of a fifth of the staleness bound,
	// so that a quiet pool's status is rewritten rarely.
	if prev := o.LastObservedTime; !lastSync.IsZero() && (prev == nil || lastSync.Sub(prev.Time) >= e.staleAfter/5) {
		o.LastObservedTime = &metav1.Time{Time: lastSync.UTC().Truncate(time.Second)}
	}
	summaryErr := e.summarize(ctx, spec, cr.Status.AtProvider.WorkloadCluster, &o, now)
	costErr := accountCost(spec, snap, &o, now)
	cr.Status.AtProvider = o
	cr.SetConditions(xpv2.Available(), staleCondition(lastSync, now, e.staleAfter))
	if e.metrics != nil {
		e.metrics.Record(cr.Name, spec, res, lastSync)
		e.metrics.Cost(spec, o.Cost)
		e.metrics.Starts(spec, o.ExecutorStarts)
	}
	buffer := e.buffers.due(cr.Name, res.Buffer, now)
	// The gate is bound only in the PoolCapacity's own cluster, where its
	// owner reference has the garbage collector remove it with the
	// PoolCapacity: a PoolCapacity being deleted does not reach a workload
	// cluster (Connect), so a gate there could outlive it.
	gateDue := e.local && e.gates.due(cr.Name, res.Gate, now)
	e.pending = &pendingEvictions{spec: spec, snap: snap, evicts: res.Evict, open: res.Open, ungate: res.Ungate, buffer: buffer,
		gate: res.Gate, gateDue: gateDue, release: res.Release, now: now}
	// An error makes Synced False; the status above is written all the
	// same.
	upToDate := len(res.Evict) == 0 && len(res.Open) == 0 && len(res.Ungate) == 0 && buffer == nil && !gateDue && res.Release == nil
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate},
		utilerrors.NewAggregate(nonNil(summaryErr, costErr))
}

// Update evicts or deletes the pods the pool's policies asked for in this
// reconcile's Observe, within the pool's eviction rate.
func (e *external) Update(ctx context.Context, mg resource.Managed) (managed.ExternalUpdate, error) {
	cr, ok := mg.(*v1alpha1.PoolCapacity)
	if !ok {
		return managed.ExternalUpdate{}, errors.New("managed resource is not a PoolCapacity")
	}
	p := e.pending
	if p == nil {
		return managed.ExternalUpdate{}, nil
	}
	spec := p.spec
	// Over-share evictions wait until the snapshot shows the last ones:
	// until then the waiters they made room for still look waiting.
	evicts := p.evicts
	if e.shed != nil {
		evicts = e.shed.hold(cr.Name, p.snap, evicts, p.now)
	}
	var errs []error
	errs = append(errs, e.startup(ctx, cr, p)...)
	for _, ev := range evicts {
		out, err := e.evictions.evict(ctx, e.obs.Client(), cr.Name, ev, p.now)
		switch out {
		case evicted:
			if e.metrics != nil {
				e.metrics.Evicted(spec, ev.Reason)
			}
			verb := "Deleted"
			if ev.Reason == capacity.EvictOverShare {
				verb = "Evicted"
			}
			e.record.Event(cr, event.Normal(event.Reason(verb+ev.Reason), evictionMessage(ev)))
		case blocked:
			if e.metrics != nil {
				e.metrics.EvictionBlocked(spec, ev.Reason)
			}
			e.record.Event(cr, event.Normal(event.Reason("EvictionBlocked"), fmt.Sprintf("A PodDisruptionBudget allows no disruption of pod %s now (%s); the eviction is retried later.", ev.Pod, ev.Reason)))
		case failed:
			errs = append(errs, errors.Wrapf(err, "cannot evict pod %s of pool %q (%s)", ev.Pod, spec.Pool.Name, ev.Reason))
		case deferred:
			if err != nil {
				errs = append(errs, errors.Wrapf(err, "cannot evict pods of pool %q; retrying within the eviction rate", spec.Pool.Name))
			}
		}
	}
	return managed.ExternalUpdate{}, utilerrors.NewAggregate(errs)
}

// startup opens the warm nodes, releases the placeholders and scales the
// CapacityBuffer Observe found, and records an event for each node
// opened.
func (e *external) startup(ctx context.Context, cr *v1alpha1.PoolCapacity, p *pendingEvictions) []error {
	var errs []error
	for _, o := range p.open {
		done, err := openNode(ctx, e.obs.Client(), o)
		if err != nil {
			errs = append(errs, err)
		}
		if !done {
			continue
		}
		ev := event.Normal(event.Reason("NodeOpened"), o.Message())
		if len(o.Cold) > 0 {
			ev = event.Warning(event.Reason("NodeOpenedCold"), errors.New(o.Message()))
		}
		e.record.Event(cr, ev)
		if e.local {
			// The same event on the node, for kubectl describe node
			// (which, as the kubelet does, names a node's events with
			// the node's name for UID); a workload cluster's nodes are
			// not in this cluster.
			e.record.Event(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: o.Node, UID: types.UID(o.Node)}}, ev)
		}
	}
	for _, u := range p.ungate {
		if _, err := ungatePod(ctx, e.obs.Client(), u); err != nil {
			errs = append(errs, err)
		}
	}
	if b := p.buffer; b != nil {
		done, err := scaleBuffer(ctx, e.obs.Client(), *b)
		if err != nil {
			errs = append(errs, err)
		}
		if done {
			e.buffers.record(cr.Name, *b, p.now)
		}
	}
	if p.gateDue {
		err := applyGate(ctx, e.obs.Client(), cr.Name, p.gate, gateMeta(cr))
		switch {
		case errors.Is(err, errGateUnavailable):
			if e.gates.record(cr.Name, p.gate, p.now, err.Error()) {
				e.record.Event(cr, event.Warning(event.Reason("ExecutorGateUnavailable"), errors.Wrap(err,
					"new executors are not held back, so a burst into a CapacityBuffer can launch a node for the warm slots it takes, and an evicted executor's replacement can take the slot freed for another QueryService; "+
						"Kubernetes 1.36 serves MutatingAdmissionPolicy, and deploy/provider/rbac-executor-gate.yaml lets the provider bind one")))
			}
		case err != nil:
			errs = append(errs, err)
		default:
			e.gates.record(cr.Name, p.gate, p.now, "")
		}
	}
	if p.release != nil {
		errs = append(errs, release(ctx, e.obs.Client(), p.release, p.now)...)
	}
	return errs
}

// nonNil returns the errors that are not nil.
func nonNil(errs ...error) []error {
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// accountCost advances o's cost (status.atProvider.cost, carried over
// from the last status) and executor starts to now, from snap. The status write that follows
// moves the watermark: if it fails, the next reconcile counts the same
// interval again from the watermark it reads, so each node-second is
// counted once. Prices that cannot be read leave the cost as it was.
func accountCost(spec v1alpha1.PoolCapacityParameters, snap capacity.Snapshot, o *v1alpha1.PoolCapacityObservation, now time.Time) error {
	prices, err := cost.NewPrices(spec.Pricing)
	if err != nil {
		return errors.Wrapf(err, "cannot price the nodes of pool %q", spec.Pool.Name)
	}
	o.Cost, _ = cost.Advance(o.Cost, cost.Observe(spec, snap, prices), now)
	o.ExecutorStarts, _ = cost.CountStarts(o.ExecutorStarts, spec, snap, now)
	return nil
}

// staleCondition says whether the pool's cluster was observed within
// staleAfter: a dead watch and failing relists make a busy pool look quiet.
func staleCondition(lastSync, now time.Time, staleAfter time.Duration) xpv2.Condition {
	c := xpv2.Condition{Type: TypeStale, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now(), Reason: ReasonObserverCurrent}
	if now.Sub(lastSync) > staleAfter {
		c.Status, c.Reason = corev1.ConditionTrue, ReasonObserverBehind
		c.Message = fmt.Sprintf("The pool's pods and nodes were last known current at %s, more than %s ago: the provider's watch and relists of the cluster are failing (see its logs and burstpool_observer_watch_errors_total).",
			lastSync.UTC().Format(time.RFC3339), staleAfter)
	}
	return c
}

func evictionMessage(ev capacity.Eviction) string {
	if ev.Reason == capacity.EvictOverShare {
		return fmt.Sprintf("Evicted pod %s: its QueryService runs more pool executors than its share (maxPoolExecutors) while another QueryService waits below its own (policies.enforceShares).", ev.Pod)
	}
	if ev.Reason == capacity.EvictUnauthorized {
		return fmt.Sprintf("Evicted pod %s: its QueryService is not attached to the pool (policies.unauthorizedExecutors is Evict). Attach the QueryService to keep its executors.", ev.Pod)
	}
	return fmt.Sprintf("Evicted failed executor pod %s (policies.deleteFailedExecutors); status.atProvider.failures keeps why it failed.", ev.Pod)
}

// Create does nothing: a PoolCapacity always exists once it is observed.
func (e *external) Create(_ context.Context, _ resource.Managed) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

// Delete does nothing: deleting a PoolCapacity leaves the pool's pods alone.
func (e *external) Delete(_ context.Context, _ resource.Managed) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

// Disconnect does nothing: the cluster's observer outlives one reconcile.
func (e *external) Disconnect(_ context.Context) error { return nil }
