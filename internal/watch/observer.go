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
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

	informers, err := o.informers()
	if err != nil {
		return err
	}
	synced := make([]toolscache.InformerSynced, 0, len(informers))
	for _, inf := range informers {
		reg, err := inf.AddEventHandler(inf.handlers)
		if err != nil {
			return errors.Wrapf(err, "cannot watch %s", inf.kind)
		}
		synced = append(synced, reg.HasSynced)
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	// Synced once every handler has been handed what its informer's first
	// list read, so the first snapshot holds all of it.
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return errors.New("cannot sync the pod and node informers")
	}
	o.flush()
	o.setErr(nil)
	o.markSynced()

	wg.Go(func() { o.batch(ctx) })
	o.poll(ctx, false)
	return nil
}

// An informer watches one kind of pool object and hands its changes to
// handlers.
type informer struct {
	toolscache.SharedIndexInformer
	kind     string
	handlers toolscache.ResourceEventHandlerFuncs
}

// informers returns the pod and node informers of the cluster. Each reads
// only pool-labelled objects, as protobuf (pods cut by sparseSerializer),
// and stores a record of each (TransformPod, TransformNode), under no
// index but its key.
func (o *Observer) informers() ([]informer, error) {
	cfg := rest.CopyConfig(o.cfg)
	cfg.UserAgent = UserAgentWatch
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	core, err := observerClient(cfg)
	if err != nil {
		return nil, errors.Wrap(err, "cannot create a client of pool pods and nodes")
	}
	sel := poolLabelExists().String()
	pool := func(o *metav1.ListOptions) { o.LabelSelector = sel }
	out := []informer{
		{kind: "pods", handlers: handlers(o.enqueue, Pod,
			func(p *capacity.Pod, deleted bool) capacity.Event { return capacity.Event{Pod: p, Deleted: deleted} }),
			SharedIndexInformer: toolscache.NewSharedIndexInformerWithOptions(
				toolscache.NewFilteredListWatchFromClient(core, "pods", metav1.NamespaceAll, pool),
				&corev1.Pod{}, toolscache.SharedIndexInformerOptions{ObjectDescription: "pool pods"})},
		{kind: "nodes", handlers: handlers(o.enqueue, Node,
			func(n *capacity.Node, deleted bool) capacity.Event { return capacity.Event{Node: n, Deleted: deleted} }),
			SharedIndexInformer: toolscache.NewSharedIndexInformerWithOptions(
				toolscache.NewFilteredListWatchFromClient(core, "nodes", metav1.NamespaceAll, pool),
				&corev1.Node{}, toolscache.SharedIndexInformerOptions{ObjectDescription: "pool nodes"})},
	}
	for i, transform := range []toolscache.TransformFunc{TransformPod, TransformNode} {
		if err := out[i].SetTransform(transform); err != nil {
			return nil, errors.Wrapf(err, "cannot set the %s transform", out[i].kind)
		}
		if err := out[i].SetWatchErrorHandlerWithContext(o.watchFailed); err != nil {
			return nil, errors.Wrapf(err, "cannot handle %s watch errors", out[i].kind)
		}
	}
	return out, nil
}

// observerClient returns the client of core v1 objects the observer lists
// and watches pods and nodes with: it decodes pods through a
// sparseSerializer and reads watches through a bufferedFramer.
func observerClient(cfg *rest.Config) (*rest.RESTClient, error) {
	return coreClient(cfg, sparseCodecs{clientgoscheme.Codecs.WithoutConversion()})
}

// coreClient returns a client of core v1 objects that encodes and decodes
// with codecs.
func coreClient(cfg *rest.Config, codecs runtime.NegotiatedSerializer) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	gv := corev1.SchemeGroupVersion
	cfg.GroupVersion, cfg.APIPath = &gv, "/api"
	cfg.NegotiatedSerializer = codecs
	return rest.RESTClientFor(cfg)
}

// watchFailed records a watch error; the reflector then lists and watches
// again, and the poller relists.
func (o *Observer) watchFailed(ctx context.Context, r *toolscache.Reflector, err error) {
	o.watchErr.Store(true)
	o.setErr(err)
	o.opts.Metrics.WatchFailed()
	toolscache.DefaultWatchErrorHandler(ctx, r, err)
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
