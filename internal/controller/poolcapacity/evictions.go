package poolcapacity

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/internal/capacity"
)

// Defaults of the eviction bounds.
const (
	// DefaultEvictionsPerMinute is how many pods a pool's policies may
	// evict a minute, after a burst of DefaultEvictionBurst.
	DefaultEvictionsPerMinute = 6
	DefaultEvictionBurst      = 3

	// After evicting a pod of an owner (a ReplicaSet, a StatefulSet), the
	// next pod of that owner waits ownerBackoffMin, doubling with every
	// eviction up to ownerBackoffMax: an owner that recreates what is
	// evicted is slowed down, not fought.
	ownerBackoffMin = 10 * time.Second
	ownerBackoffMax = 10 * time.Minute
)

// An evictOutcome says what became of one eviction.
type evictOutcome int

const (
	evicted  evictOutcome = iota
	deferred              // held back by the pool's rate or the owner's backoff
	blocked               // refused by a PodDisruptionBudget
	failed                // an error
)

type ownerKey struct{ pool, namespace, owner string }

type backoff struct {
	next  time.Time
	delay time.Duration
}

// evictions evicts pods through the Eviction API, so PodDisruptionBudgets
// hold, within a rate per pool and a backoff per owner. It is shared by
// every PoolCapacity and safe for concurrent use.
type evictions struct {
	perMinute float64
	burst     int

	mu     sync.Mutex
	pools  map[string]*rate.Limiter
	owners map[ownerKey]*backoff
	// errs holds each pool's last eviction error until an eviction of the
	// pool gets through, so that Synced keeps saying what fails while the
	// next attempt waits.
	errs map[string]error
}

func newEvictions(perMinute float64, burst int) *evictions {
	if perMinute <= 0 {
		perMinute = DefaultEvictionsPerMinute
	}
	if burst <= 0 {
		burst = DefaultEvictionBurst
	}
	return &evictions{perMinute: perMinute, burst: burst, pools: map[string]*rate.Limiter{}, owners: map[ownerKey]*backoff{}, errs: map[string]error{}}
}

// admit reports whether pool may evict a pod of owner now, and takes a
// token of the pool's rate if so.
func (e *evictions) admit(pool string, ev capacity.Eviction, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := ownerKey{pool, ev.Pod.Namespace, orDefault(ev.Owner, "Pod/"+ev.Pod.Name)}
	if b, ok := e.owners[k]; ok && now.Before(b.next) {
		return false
	}
	l, ok := e.pools[pool]
	if !ok {
		l = rate.NewLimiter(rate.Limit(e.perMinute/60), e.burst)
		e.pools[pool] = l
	}
	if !l.AllowN(now, 1) {
		return false
	}
	// The owner backs off after every attempt, whatever its outcome.
	b := e.owners[k]
	switch {
	case b == nil || now.Sub(b.next) > 2*b.delay:
		// First eviction, or the owner was quiet long enough to start over.
		b = &backoff{delay: ownerBackoffMin}
	default:
		b.delay = min(2*b.delay, ownerBackoffMax)
	}
	b.next = now.Add(b.delay)
	e.owners[k] = b
	return true
}

// forget drops the state of pool.
func (e *evictions) forget(pool string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pools, pool)
	delete(e.errs, pool)
	for k := range e.owners {
		if k.pool == pool {
			delete(e.owners, k)
		}
	}
}

func (e *evictions) remember(pool string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err == nil {
		delete(e.errs, pool)
		return
	}
	e.errs[pool] = err
}

// evictPod evicts the pod ev names, for pool, unless the pool's rate or the
// owner's backoff holds it back. A deferred eviction returns the pool's
// last eviction error, if any.
func (e *evictions) evictPod(ctx context.Context, c client.Client, pool string, ev capacity.Eviction, now time.Time) (evictOutcome, error) {
	if !e.admit(pool, ev, now) {
		e.mu.Lock()
		defer e.mu.Unlock()
		return deferred, e.errs[pool]
	}
	out, err := e.create(ctx, c, ev)
	if out != deferred {
		e.remember(pool, err)
	}
	return out, err
}

func (e *evictions) create(ctx context.Context, c client.Client, ev capacity.Eviction) (evictOutcome, error) {
	p := &corev1.Pod{}
	p.SetNamespace(ev.Pod.Namespace)
	p.SetName(ev.Pod.Name)
	uid := types.UID(ev.UID)
	err := c.SubResource("eviction").Create(ctx, p, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: ev.Pod.Namespace, Name: ev.Pod.Name},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}},
	})
	switch {
	case err == nil:
		return evicted, nil
	case kerrors.IsNotFound(err) || kerrors.IsConflict(err):
		// Gone already, or replaced by a newer pod of the same name.
		return deferred, nil
	case kerrors.IsTooManyRequests(err):
		// A PodDisruptionBudget allows no disruption now.
		return blocked, nil
	default:
		return failed, err
	}
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
