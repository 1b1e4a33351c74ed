package poolcapacity

import (
	"context"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// paced wraps the PoolCapacity reconciler so that reconciles start no
// faster than the global rate limiter allows, however often pod and node
// events ask for them. Each reconcile takes one turn from the limiter, and
// a PoolCapacity holds at most one turn: a request that arrives while its
// PoolCapacity waits for its turn joins that turn, as the reconcile then
// reads the cluster as it is by then.
//
// crossplane-runtime's ratelimiter.Reconciler, which the PoolCapacity
// controller used before, takes a turn for a request and then lets the
// next request of the same PoolCapacity through at once, whenever it comes.
// Under a storm of pod events across many pools, pools then reconcile, and
// write status, on every other event, well above the limiter's rate (the
// writes slowed the API server's watches by seconds), while the turn each
// early request had taken stays reserved and unused: the limiter's
// reservations run tens of seconds ahead, and a PoolCapacity whose last
// event takes a new turn waits that long (TestPacedEventStorm).
type paced struct {
	// name is the controller's name: the limiter is shared, and its items
	// are named by controller and request.
	name  string
	inner reconcile.Reconciler
	// limit grants turns: When reserves one and returns how long until it
	// comes.
	limit ratelimiter.RateLimiter
	now   func() time.Time

	mu    sync.Mutex
	turns map[reconcile.Request]time.Time // when each waiting PoolCapacity's turn comes
}

func newPaced(name string, inner reconcile.Reconciler, limit ratelimiter.RateLimiter, now func() time.Time) *paced {
	return &paced{name: name, inner: inner, limit: limit, now: now, turns: map[reconcile.Request]time.Time{}}
}

// Reconcile reconciles the PoolCapacity of req when its turn has come, and
// otherwise asks to be tried again when it comes.
func (p *paced) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if d := p.wait(req); d > 0 {
		return reconcile.Result{RequeueAfter: d}, nil
	}
	return p.inner.Reconcile(ctx, req)
}

// wait returns how long req has still to wait for its turn, taking a turn
// from the limiter when it holds none; zero when it may run now, which
// uses up the turn.
func (p *paced) wait(req reconcile.Request) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if turn, ok := p.turns[req]; ok {
		if d := turn.Sub(now); d > 0 {
			return d
		}
		delete(p.turns, req)
		return 0
	}
	item := p.name + req.String()
	d := p.limit.When(item)
	if d <= 0 {
		p.limit.Forget(item)
		return 0
	}
	p.turns[req] = now.Add(d)
	return d
}
