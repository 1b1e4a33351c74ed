// Package poolcapacity ships in the capacity provider: the PoolCapacity
// controller, which observes each pool's nodes and executor pods, writes
// what the pool holds into the PoolCapacity's status, and applies what
// the pool's settings ask of its cluster.
//
// It decides nothing itself. Each reconcile gathers (gather.go), has the
// pure cores compute (capacity.Compute, cost.Account, and demand.Record
// for the demand history and the learned warm level, demand.go), writes
// the status (external.go), and applies the plan through the actuators
// of actuators.go, in their stated order, one file each: open.go,
// placeholders.go, buffer.go, gate.go, release.go, evict.go. memo.go
// remembers what each last applied, and each pool's demand history;
// clusters.go and workload.go observe and read the pools' clusters.
package poolcapacity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/demand"
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

	// ProviderNamespace is the namespace of the provider's service account
	// provider-burstpool, which the executor gate's guard lets remove the
	// gate; v1alpha1.DefaultProviderNamespace if empty.
	ProviderNamespace string
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
	if o.ProviderNamespace == "" {
		o.ProviderNamespace = v1alpha1.DefaultProviderNamespace
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
			namespace:  o.ProviderNamespace,
			shed:       newMemo[[]capacity.Eviction](),
			buffers:    newMemo[capacity.BufferScale](),
			gates:      newMemo[gateState](),
			census:     &gateCensus{},
			demands:    newMemo[*demand.Memory](),
		},
	}
	opts := []managed.ReconcilerOption{
		managed.WithExternalConnector(c),
		managed.WithInitializers(),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithPollInterval(o.PollInterval),
		managed.WithPollIntervalHook(warmRefresh(o.Clock)),
		managed.WithRecorder(rec),
		managed.WithManagementPolicies(),
	}
	// crossplane-runtime's managed-resource metrics: time to first
	// reconcile and to Ready, deletion and drift.
	if m := o.MetricOptions; m != nil && m.MRMetrics != nil {
		opts = append(opts, managed.WithMetricRecorder(m.MRMetrics))
	}
	// The state gauges: how many PoolCapacities exist, are Ready and are
	// Synced, counted by the leader every PollStateMetricInterval.
	if m := o.MetricOptions; m != nil && m.MRStateMetrics != nil && m.PollStateMetricInterval > 0 {
		sr := statemetrics.NewMRStateRecorder(mgr.GetClient(), o.Logger, m.MRStateMetrics, &v1alpha1.PoolCapacityList{}, m.PollStateMetricInterval)
		if err := mgr.Add(sr); err != nil {
			return errors.Wrap(err, "cannot add the managed resource state recorder to the manager")
		}
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(v1alpha1.PoolCapacityGroupVersionKind), opts...)

	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.PoolCapacity{}, builder.WithPredicates(notStatusOnly())).
		WatchesRawSource(source.Channel(cs.events, &handler.EnqueueRequestForObject{})).
		// The limiter runs on the wall clock, whatever clock the
		// reconciler reads.
		Complete(parked{kube: mgr.GetClient(), clusters: cs, start: c.startObserver,
			inner: newPaced(name, xperrors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter, time.Now)})
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

// ReasonClusterUnreachable is the Ready condition's reason while the
// provider cannot observe a PoolCapacity's cluster.
const ReasonClusterUnreachable xpv2.ConditionReason = "ClusterUnreachable"

// Connect records the ProviderConfig's use, then returns a client over the
// synced snapshot of its cluster. It starts observing the cluster the first
// time a ProviderConfig is used, and again when its credentials change. It
// never waits for the cluster: until its observer has synced, Connect fails
// at once, with Ready False (ClusterUnreachable) saying why (unless the
// observer is reading its first view: firstView), and the PoolCapacity is
// retried with backoff and queued again when the observer syncs. A PoolCapacity being deleted needs no cluster at all.
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
		if !c.firstView(cr, err) {
			cr.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now(),
				Reason: ReasonClusterUnreachable, Message: err.Error()})
		}
		return nil, err
	}
	return ext, nil
}

// firstView reports whether err only says that cr's cluster's observer
// is still reading its first view, without an error and for less than
// parkFor (as after the provider starts or a new leader takes over). The
// status then holds what a provider wrote a moment ago, so its Ready
// condition stays as it is: the claim keeps counting rather than showing
// no counts for the second a start takes.
func (c *connector) firstView(cr *v1alpha1.PoolCapacity, err error) bool {
	ref := cr.GetProviderConfigReference()
	return errors.Is(err, errNotSynced) && ref != nil && c.clusters.syncing(ref.Name)
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

// startObserver starts the observer of cr's cluster, as Connect does,
// and says why it cannot; an observer reading its first view is no
// failure here.
func (c *connector) startObserver(ctx context.Context, cr *v1alpha1.PoolCapacity) error {
	_, err := c.connect(ctx, cr)
	if errors.Is(err, errNotSynced) {
		return nil
	}
	return err
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
