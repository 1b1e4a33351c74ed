package poolcapacity

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/pkg/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/metrics"
	"github.com/burstpool/burstpool/internal/watch"
)

// errNotSynced says the observer of a cluster has no full view of it yet
// and has met no error so far.
var errNotSynced = errors.New("pods and nodes are not synced yet")

// running is the observer of one ProviderConfig's cluster.
type running struct {
	fingerprint string
	obs         *watch.Observer
	cancel      context.CancelFunc
	done        chan struct{}
	started     time.Time

	// Set when the observer stopped, before done is closed.
	err      error
	failures int // observers of this ProviderConfig that failed in a row
	retryAt  time.Time
}

func (r *running) stopped() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// An observer that failed is retried after retryMin, doubling with each
// failure in a row up to retryMax.
const (
	retryMin = 5 * time.Second
	retryMax = 5 * time.Minute
)

type use struct{ config, pool string }

// clusters runs one observer per ProviderConfig, for as long as a
// PoolCapacity uses it, and turns snapshot changes into reconcile requests
// for the PoolCapacities of the changed pools. It is a manager Runnable: the
// observers live as long as the manager.
type clusters struct {
	opts    watch.Options
	metrics *metrics.Metrics
	log     logr.Logger

	started chan struct{}
	ctx     context.Context

	mu      sync.Mutex
	running map[string]*running

	imu   sync.Mutex
	uses  map[string]use              // PoolCapacity name -> what it uses
	pools map[use]map[string]struct{} // config and pool -> PoolCapacity names

	events chan event.GenericEvent
}

func newClusters(o watch.Options, m *metrics.Metrics, log logr.Logger) *clusters {
	return &clusters{
		opts:    o,
		metrics: m,
		log:     log,
		started: make(chan struct{}),
		running: map[string]*running{},
		uses:    map[string]use{},
		pools:   map[use]map[string]struct{}{},
		events:  make(chan event.GenericEvent, 1024),
	}
}

// Start keeps the observers running until ctx is done.
func (c *clusters) Start(ctx context.Context) error {
	c.ctx = ctx
	close(c.started)
	<-ctx.Done()
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, r := range c.running {
		r.cancel()
		delete(c.running, name)
	}
	return nil
}

// NeedLeaderElection says observers run only on the leader, beside the
// controller that reads them.
func (c *clusters) NeedLeaderElection() bool { return true }

// observer returns the synced observer of the ProviderConfig called config,
// starting one if needed. A changed fingerprint (other credentials) replaces
// the running observer. It never waits for a cluster: until the observer
// has synced it returns an error that says why (the cluster's last error),
// and once it syncs, every PoolCapacity of the ProviderConfig is queued. So
// an unreachable cluster holds no worker, and other pools go on.
func (c *clusters) observer(ctx context.Context, config, fingerprint string, cfg *rest.Config) (*watch.Observer, error) {
	select {
	case <-c.started:
	case <-ctx.Done():
		return nil, errors.Wrap(ctx.Err(), "the provider is not running yet")
	}

	c.mu.Lock()
	r := c.running[config]
	if r != nil && r.fingerprint != fingerprint {
		r.cancel()
		r = nil
	}
	failures := 0
	if r != nil && r.stopped() {
		// The last observer failed: retry only once its backoff passed, so
		// that a cluster that refuses at once costs one attempt per backoff,
		// not one per reconcile.
		if time.Now().Before(r.retryAt) {
			c.mu.Unlock()
			return nil, errors.Wrapf(r.err, "cannot observe the cluster of ProviderConfig %q (retrying at %s)", config, r.retryAt.UTC().Format(time.RFC3339))
		}
		failures = r.failures
		r = nil
	}
	if r == nil {
		o := c.opts
		o.Logger = c.log.WithValues("providerConfig", config)
		if c.metrics != nil {
			o.Metrics = c.metrics.Observer(config)
		}
		obs, err := watch.New(cfg, o)
		if err != nil {
			c.mu.Unlock()
			return nil, errors.Wrapf(err, "cannot observe the cluster of ProviderConfig %q", config)
		}
		obs.Store().Subscribe(func(_ capacity.Snapshot, pools []string) {
			select {
			case <-obs.Synced():
				c.notify(config, pools)
			default:
				// The first view: the sync wakes every PoolCapacity of
				// the cluster (below). Queuing its pools here too would
				// reconcile, and write the status of, those already
				// running a second time.
			}
		})
		rctx, cancel := context.WithCancel(c.ctx)
		r = &running{fingerprint: fingerprint, obs: obs, cancel: cancel, done: make(chan struct{}), failures: failures, started: time.Now()}
		go func(r *running) {
			err := obs.Start(rctx)
			if err == nil {
				err = errors.New("the observer stopped")
			}
			r.err = err
			r.failures++
			r.retryAt = time.Now().Add(min(retryMin<<min(r.failures-1, 10), retryMax))
			close(r.done)
		}(r)
		go c.wake(rctx, config, r)
		c.running[config] = r
	}
	c.mu.Unlock()

	select {
	case <-r.obs.Synced():
		return r.obs, nil
	case <-r.done:
		return nil, errors.Wrapf(r.err, "cannot observe the cluster of ProviderConfig %q", config)
	default:
	}
	if err := r.obs.Err(); err != nil {
		return nil, errors.Wrapf(err, "cannot reach the cluster of ProviderConfig %q", config)
	}
	return nil, errors.Wrapf(errNotSynced, "cluster of ProviderConfig %q", config)
}

// observing reports whether an observer of the ProviderConfig called
// config was started, running or not.
func (c *clusters) observing(config string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running[config] != nil
}

// syncing reports whether the observer of the ProviderConfig called config
// started less than parkFor ago and is still reading its first view
// without an error.
func (c *clusters) syncing(config string) bool {
	c.mu.Lock()
	r := c.running[config]
	c.mu.Unlock()
	if r == nil || time.Since(r.started) > parkFor {
		return false
	}
	select {
	case <-r.obs.Synced():
		return false
	case <-r.done:
		return false
	default:
	}
	return r.obs.Err() == nil
}

// track records that the PoolCapacity called name reads pool through config.
func (c *clusters) track(name, config, pool string) {
	c.imu.Lock()
	u := use{config, pool}
	old, had := c.uses[name]
	if had && old != u {
		c.untrackLocked(name)
	}
	c.uses[name] = u
	if c.pools[u] == nil {
		c.pools[u] = map[string]struct{}{}
	}
	c.pools[u][name] = struct{}{}
	c.imu.Unlock()
	if had && old.config != config {
		// Re-pointed: the old cluster's observer stops once no
		// PoolCapacity uses it.
		c.stopUnused(old.config)
	}
}

// forget drops the PoolCapacity called name, and stops the observer of its
// ProviderConfig when no other PoolCapacity uses it.
func (c *clusters) forget(name string) {
	c.imu.Lock()
	u, ok := c.uses[name]
	c.untrackLocked(name)
	inUse := false
	for _, other := range c.uses {
		if other.config == u.config {
			inUse = true
			break
		}
	}
	c.imu.Unlock()
	if !ok || inUse {
		return
	}
	c.stop(u.config)
}

// stopUnused stops the observer of config unless a PoolCapacity uses it. It
// runs after track releases imu.
func (c *clusters) stopUnused(config string) {
	c.imu.Lock()
	for _, u := range c.uses {
		if u.config == config {
			c.imu.Unlock()
			return
		}
	}
	c.imu.Unlock()
	c.stop(config)
}

func (c *clusters) stop(config string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.running[config]; r != nil {
		r.cancel()
		delete(c.running, config)
		if c.metrics != nil {
			c.metrics.Observer(config).Forget()
		}
	}
}

func (c *clusters) untrackLocked(name string) {
	u, ok := c.uses[name]
	if !ok {
		return
	}
	delete(c.uses, name)
	delete(c.pools[u], name)
	if len(c.pools[u]) == 0 {
		delete(c.pools, u)
	}
}

// wake queues the PoolCapacities of the ProviderConfig called config,
// observed by r, when they need it. Those parked on the observer (see
// parked) wait for nothing else: they are woken when syncing stops
// holding them (the observer has read its first view, has failed or
// reports an error, looked at every parkCheck as the parked ones looked
// before, or has tried for parkFor), or when it was replaced (its
// successor wakes them again). And when the observer reads its first
// view, every PoolCapacity of the cluster is queued, those woken before
// it and retrying with backoff among them.
func (c *clusters) wake(ctx context.Context, config string, r *running) {
	t := time.NewTimer(parkFor)
	defer t.Stop()
	check := time.NewTicker(parkCheck)
	defer check.Stop()
	for r.obs.Err() == nil {
		select {
		case <-r.obs.Synced():
			c.notifyConfig(config)
			return
		case <-r.done:
		case <-t.C:
		case <-ctx.Done():
		case <-check.C:
			continue
		}
		break
	}
	c.notifyConfig(config)
	select {
	case <-r.obs.Synced():
		c.notifyConfig(config)
	case <-r.done:
	case <-ctx.Done():
	}
}

// notifyConfig queues a reconcile of every PoolCapacity that uses the
// ProviderConfig called config. Unlike notify it waits for room in the
// queue (until the provider stops): a parked PoolCapacity has no other
// reconcile coming.
func (c *clusters) notifyConfig(config string) {
	c.imu.Lock()
	var names []string
	for n, u := range c.uses {
		if u.config == config {
			names = append(names, n)
		}
	}
	c.imu.Unlock()
	for _, n := range names {
		select {
		case c.events <- requestOf(n):
		case <-c.ctx.Done():
			return
		}
	}
}

// requestOf is the event that queues a reconcile of the PoolCapacity
// called name.
func requestOf(name string) event.GenericEvent {
	pc := &v1alpha1.PoolCapacity{}
	pc.SetName(name)
	return event.GenericEvent{Object: client.Object(pc)}
}

// notify asks for a reconcile of every PoolCapacity of the changed pools. It
// never blocks: when the queue is full the poll interval catches up.
func (c *clusters) notify(config string, pools []string) {
	c.imu.Lock()
	var names []string
	for _, p := range pools {
		for n := range c.pools[use{config, p}] {
			names = append(names, n)
		}
	}
	c.imu.Unlock()
	c.enqueue(names)
}

// enqueue queues a reconcile of the PoolCapacities called names. It never
// blocks: when the queue is full the poll interval catches up.
func (c *clusters) enqueue(names []string) {
	for _, n := range names {
		select {
		case c.events <- requestOf(n):
		default:
		}
	}
}

// parkFor bounds how long PoolCapacities wait, unreconciled, for their
// cluster's observer to read its first view (see parked): the provider
// reads a hundred thousand pods in about five seconds, and an observer
// whose first read hangs without an error holds them no longer, so that
// each says why it is not Ready (ClusterUnreachable) soon after.
const parkFor = 10 * time.Second

// parkCheck is how often the observer's wake looks whether its first read
// met an error, which ends the parking (clusters.syncing).
const parkCheck = time.Second

// parked wraps the PoolCapacity reconciler: a PoolCapacity whose
// cluster's observer is still reading its first view (clusters.syncing) is
// not reconciled, unless it is being deleted, but recorded as the
// cluster's, so that the observer wakes it (clusters.observer) once it
// has read that view, has failed or met an error, or has tried for
// parkFor. It is not
// retried on a timer: a timer set while it waited would reconcile it, and
// write its status, a second time soon after the wake, and with a
// thousand PoolCapacities those second reconciles used up the rate
// limiter's burst that the first ones needed. Reconciling a PoolCapacity
// before the view is read would only fail to connect, each failure an
// event, a status write and a share of the reconcile rate that, with a
// thousand PoolCapacities, pushes the reconciles after the sync tens of
// seconds back; so the first PoolCapacity of a cluster starts its
// observer (start) and parks like the rest.
type parked struct {
	kube     client.Reader
	clusters *clusters
	// start starts the observer of a PoolCapacity's cluster, as Connect
	// does, when none was started: the first PoolCapacities reconciled as
	// the provider starts then park too, instead of failing to connect
	// with an event and a status write each. What it fails with, the
	// reconcile that follows reports.
	start func(context.Context, *v1alpha1.PoolCapacity) error
	inner reconcile.Reconciler
}

// Reconcile reconciles the PoolCapacity of req unless it is parked.
func (p parked) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pc := &v1alpha1.PoolCapacity{}
	if err := p.kube.Get(ctx, req.NamespacedName, pc); err == nil && pc.GetDeletionTimestamp() == nil {
		if ref := pc.GetProviderConfigReference(); ref != nil {
			// Recorded before syncing is read: a wake that follows
			// the read, however soon, finds the PoolCapacity.
			p.clusters.track(pc.Name, ref.Name, capacity.PoolKey(pc.Spec.ForProvider))
			if p.start != nil && !p.clusters.observing(ref.Name) {
				_ = p.start(ctx, pc) // what it fails with, the reconcile that follows reports
			}
			if p.clusters.syncing(ref.Name) {
				return reconcile.Result{}, nil
			}
		}
	}
	return p.inner.Reconcile(ctx, req)
}
