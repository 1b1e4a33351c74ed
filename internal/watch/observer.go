package watch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// User agents of the observer's requests, so that audit logs (and tests)
// can tell the informers from the poller.
const (
	UserAgentWatch = "burstpool-capacity-watch"
	UserAgentPoll  = "burstpool-capacity-poll"
)

// Defaults of Options.
const (
	DefaultPollInterval = time.Minute
	DefaultBatchWindow  = 100 * time.Millisecond
	// DefaultTimeout bounds each request of the poller and the policies, so
	// that a cluster that stops answering fails them instead of holding
	// them.
	DefaultTimeout = 30 * time.Second
	listPageSize   = 500
)

// Options configure an Observer.
type Options struct {
	// Watch runs informers. Without them the poller is the only source and
	// relists on every PollInterval.
	Watch bool

	// PollInterval is how often the poller checks whether to relist. With
	// the watch on, it relists only after the watch reported an error.
	PollInterval time.Duration

	// BatchWindow is how long watch events gather before they are applied
	// as one batch.
	BatchWindow time.Duration

	// Logger logs watch errors and failed relists.
	Logger logr.Logger

	// Metrics, if set, counts relists, watch errors and applied events.
	Metrics Recorder
}

// A Recorder counts what an Observer does. Implementations must be safe for
// concurrent use and must not block.
type Recorder interface {
	Relisted(err error)
	WatchFailed()
	Applied(events int)
	Synced(at time.Time)
}

type nopRecorder struct{}

func (nopRecorder) Relisted(error)   {}
func (nopRecorder) WatchFailed()     {}
func (nopRecorder) Applied(int)      {}
func (nopRecorder) Synced(time.Time) {}

// An Observer keeps a capacity.Store in step with one cluster's pool nodes
// (nodes with the pool label) and pool pods (pods with the pool label).
type Observer struct {
	store  *capacity.Store
	cfg    *rest.Config
	kube   kubernetes.Interface
	scheme *runtime.Scheme
	opts   Options
	reader client.Client

	synced     chan struct{}
	syncedOnce sync.Once

	mu      sync.Mutex
	pending []capacity.Event
	kick    chan struct{}

	watchErr atomic.Bool

	errMu   sync.Mutex
	lastErr error

	lastSync atomic.Int64 // Unix nanoseconds
}

// LastSync returns when the observer last knew its view of the cluster to
// be current: its first sync, a batch of watch events, a successful relist,
// or a relist period that passed without a watch error. It is zero before
// the first sync.
func (o *Observer) LastSync() time.Time {
	n := o.lastSync.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func (o *Observer) current() {
	now := time.Now()
	o.lastSync.Store(now.UnixNano())
	o.opts.Metrics.Synced(now)
}

// Err returns the last error of the watch or the relist, or nil once the
// observer has synced or relisted since.
func (o *Observer) Err() error {
	o.errMu.Lock()
	defer o.errMu.Unlock()
	return o.lastErr
}

func (o *Observer) markSynced() {
	o.current()
	o.syncedOnce.Do(func() { close(o.synced) })
}

func (o *Observer) setErr(err error) {
	o.errMu.Lock()
	o.lastErr = err
	o.errMu.Unlock()
}

// New returns an Observer of the cluster cfg points at. Start runs it.
func New(cfg *rest.Config, o Options) (*Observer, error) {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.BatchWindow <= 0 {
		o.BatchWindow = DefaultBatchWindow
	}
	if o.Metrics == nil {
		o.Metrics = nopRecorder{}
	}
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, errors.Wrap(err, "cannot register core types")
	}
	if err := policyv1.AddToScheme(s); err != nil {
		return nil, errors.Wrap(err, "cannot register policy types")
	}
	pollCfg := rest.CopyConfig(cfg)
	pollCfg.UserAgent = UserAgentPoll
	if pollCfg.Timeout == 0 {
		pollCfg.Timeout = DefaultTimeout
	}
	reader, err := client.New(pollCfg, client.Options{Scheme: s})
	if err != nil {
		return nil, errors.Wrap(err, "cannot create an API client")
	}
	kube, err := kubernetes.NewForConfig(pollCfg)
	if err != nil {
		return nil, errors.Wrap(err, "cannot create an API client")
	}
	return &Observer{
		kube:   kube,
		store:  capacity.NewStore(),
		cfg:    cfg,
		scheme: s,
		opts:   o,
		reader: reader,
		synced: make(chan struct{}),
		kick:   make(chan struct{}, 1),
	}, nil
}

// Evict evicts pod namespace/name through the Eviction API (as kubectl
// drain does, so PodDisruptionBudgets hold), provided its UID is still uid.
func (o *Observer) Evict(ctx context.Context, namespace, name, uid string) error {
	return o.kube.PolicyV1().Evictions(namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: name, Namespace: namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: (*types.UID)(&uid)}},
	})
}

// Store returns the store the Observer feeds.
func (o *Observer) Store() *capacity.Store { return o.store }

// Client returns a client of the observed cluster that reads from the API
// server, not from a cache.
func (o *Observer) Client() client.Client { return o.reader }

// Synced is closed once the store holds a full view of the cluster.
func (o *Observer) Synced() <-chan struct{} { return o.synced }

// poolLabelExists selects objects that carry the pool label.
func poolLabelExists() labels.Selector {
	r, err := labels.NewRequirement(qsv1alpha1.LabelPool, selection.Exists, nil)
	if err != nil {
		panic(err) // A constant, valid label key.
	}
	return labels.NewSelector().Add(*r)
}

// Start runs the Observer until ctx is done. It blocks.
func (o *Observer) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if !o.opts.Watch {
		// Synced only once a relist succeeded: an empty snapshot of a
		// cluster that could not be read would report an empty pool.
		o.relist(ctx)
		o.poll(ctx, true)
		return nil
	}

	cl, err := o.cluster()
	if err != nil {
		return err
	}
	if err := o.handle(ctx, cl.GetCache()); err != nil {
		return err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := cl.Start(ctx); err != nil {
			o.opts.Logger.Error(err, "cannot run the pod and node informers")
			cancel()
		}
	}()
	if !cl.GetCache().WaitForCacheSync(ctx) {
		return errors.New("cannot sync the pod and node informers")
	}
	o.flush()
	o.setErr(nil)
	o.markSynced()

	wg.Add(1)
	go func() {
		defer wg.Done()
		o.batch(ctx)
	}()
	o.poll(ctx, false)
	return nil
}

func (o *Observer) cluster() (cluster.Cluster, error) {
	sel := poolLabelExists()
	watchCfg := rest.CopyConfig(o.cfg)
	watchCfg.UserAgent = UserAgentWatch
	cl, err := cluster.New(watchCfg, func(co *cluster.Options) {
		co.Scheme = o.scheme
		co.Cache.ByObject = map[client.Object]cache.ByObject{
			&corev1.Pod{}:  {Label: sel, Transform: TransformPod},
			&corev1.Node{}: {Label: sel, Transform: TransformNode},
		}
		co.Cache.DefaultWatchErrorHandler = func(ctx context.Context, r *toolscache.Reflector, err error) {
			o.watchErr.Store(true)
			o.setErr(err)
			o.opts.Metrics.WatchFailed()
			toolscache.DefaultWatchErrorHandler(ctx, r, err)
		}
	})
	return cl, errors.Wrap(err, "cannot create a cache of pool pods and nodes")
}

// handle turns informer notifications into pending events.
func (o *Observer) handle(ctx context.Context, c cache.Cache) error {
	for _, w := range []struct {
		kind     string
		obj      client.Object
		handlers toolscache.ResourceEventHandlerFuncs
	}{
		{kind: "pod", obj: &corev1.Pod{}, handlers: handlers(o.enqueue, Pod,
			func(p *capacity.Pod, deleted bool) capacity.Event { return capacity.Event{Pod: p, Deleted: deleted} })},
		{kind: "node", obj: &corev1.Node{}, handlers: handlers(o.enqueue, Node,
			func(n *capacity.Node, deleted bool) capacity.Event { return capacity.Event{Node: n, Deleted: deleted} })},
	} {
		inf, err := c.GetInformer(ctx, w.obj)
		if err != nil {
			return errors.Wrapf(err, "cannot get the %s informer", w.kind)
		}
		if _, err := inf.AddEventHandler(w.handlers); err != nil {
			return errors.Wrapf(err, "cannot watch %ss", w.kind)
		}
	}
	return nil
}

// handlers returns informer handlers that enqueue the event of an object's
// capacity view: event makes it from the view and whether the object is gone.
func handlers[O, V any](enqueue func(capacity.Event), view func(O) V, event func(V, bool) capacity.Event) toolscache.ResourceEventHandlerFuncs {
	on := func(obj any, deleted bool) {
		if v, ok := viewOf(obj, view); ok {
			enqueue(event(v, deleted))
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { on(obj, false) },
		UpdateFunc: func(_, obj any) { on(obj, false) },
		DeleteFunc: func(obj any) { on(obj, true) },
	}
}

// viewOf returns the capacity view of what an informer delivered, a
// tombstone unwrapped: the view a record made by the cache transform holds,
// or view of a raw object; false for anything else.
func viewOf[O, V any](obj any, view func(O) V) (V, bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	switch x := obj.(type) {
	case *record[V]:
		return x.view, true
	case O:
		return view(x), true
	}
	var none V
	return none, false
}

func (o *Observer) enqueue(e capacity.Event) {
	o.mu.Lock()
	o.pending = append(o.pending, e)
	o.mu.Unlock()
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// flush applies the pending events as one batch.
func (o *Observer) flush() {
	o.mu.Lock()
	events := o.pending
	o.pending = nil
	o.mu.Unlock()
	if len(events) == 0 {
		return
	}
	o.store.Apply(events)
	o.opts.Metrics.Applied(len(events))
	o.current()
}

// batch applies pending events at most once per batch window.
func (o *Observer) batch(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.kick:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(o.opts.BatchWindow):
		}
		o.flush()
	}
}

// poll relists on every interval when always is true, else only after the
// watch reported an error.
func (o *Observer) poll(ctx context.Context, always bool) {
	t := time.NewTicker(o.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch {
		case always || o.watchErr.Swap(false):
			o.relist(ctx)
		default:
			// A relist period without a watch error: the informers are
			// current.
			o.current()
		}
	}
}

// relist lists every pool pod and node and replaces the snapshot. Events
// that arrive meanwhile are applied after it.
func (o *Observer) relist(ctx context.Context) {
	l, err := o.list(ctx)
	o.opts.Metrics.Relisted(err)
	if err != nil {
		o.watchErr.Store(true)
		o.setErr(err)
		o.opts.Logger.Error(err, "cannot relist pool pods and nodes")
		return
	}
	o.setErr(nil)
	o.store.Replace(l)
	o.markSynced()
}

// List returns every pool pod and node, read page by page from the API
// server.
func (o *Observer) List(ctx context.Context) (capacity.List, error) {
	return o.list(ctx)
}

func (o *Observer) list(ctx context.Context) (capacity.List, error) {
	var l capacity.List
	var err error
	l.PodsVersion, err = listPages(ctx, o.reader, func(pl *corev1.PodList) {
		for i := range pl.Items {
			l.Pods = append(l.Pods, Pod(&pl.Items[i]))
		}
	})
	if err != nil {
		return capacity.List{}, errors.Wrap(err, "cannot list pool pods")
	}
	l.NodesVersion, err = listPages(ctx, o.reader, func(nl *corev1.NodeList) {
		for i := range nl.Items {
			l.Nodes = append(l.Nodes, Node(&nl.Items[i]))
		}
	})
	if err != nil {
		return capacity.List{}, errors.Wrap(err, "cannot list pool nodes")
	}
	return l, nil
}

// listPages reads every pool-labelled object of one kind page by page,
// handing each page to add, and returns the list's resource version: every
// page of a paged list is read at the first page's version.
func listPages[L any, PL interface {
	*L
	client.ObjectList
}](ctx context.Context, r client.Reader, add func(PL)) (string, error) {
	sel := client.MatchingLabelsSelector{Selector: poolLabelExists()}
	for cont := ""; ; {
		page := PL(new(L))
		if err := r.List(ctx, page, sel, client.Limit(listPageSize), client.Continue(cont)); err != nil {
			return "", err
		}
		add(page)
		if cont = page.GetContinue(); cont == "" {
			return page.GetResourceVersion(), nil
		}
	}
}
