package poolcapacity

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// clockLimiter is a token bucket that reads a fake clock, as
// crossplane-runtime's global rate limiter is one that reads the wall
// clock. It counts the turns it grants.
type clockLimiter struct {
	bucket *rate.Limiter
	now    *time.Time
	turns  int
}

func newClockLimiter(perSecond float64, burst int, now *time.Time) *clockLimiter {
	return &clockLimiter{bucket: rate.NewLimiter(rate.Limit(perSecond), burst), now: now}
}

func (l *clockLimiter) When(string) time.Duration {
	l.turns++
	return l.bucket.ReserveN(*l.now, 1).DelayFrom(*l.now)
}

func (l *clockLimiter) Forget(string) {}

func (l *clockLimiter) NumRequeues(string) int { return 0 }

// polled is a PoolCapacity reconciler as crossplane-runtime's managed
// reconciler is one: it records when each PoolCapacity was reconciled and
// asks to be polled again a minute later.
type polled struct {
	now *time.Time
	at  map[string][]time.Time
}

func (r *polled) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.at[req.Name] = append(r.at[req.Name], *r.now)
	return reconcile.Result{RequeueAfter: time.Minute}, nil
}

func pcRequest(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: name}}
}

func TestPacedWait(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	type got struct {
		Wait  time.Duration
		Turns int // turns the limiter granted
		Runs  int // reconciles that reached the inner reconciler
	}
	cases := map[string]struct {
		reason string
		// burst is the limiter's burst; it grants one turn a second.
		burst int
		// requests are the times, after t0, of requests of one
		// PoolCapacity; got is read after the last.
		requests []time.Duration
		want     got
	}{
		"FreeLimiter": {
			reason:   "A request the limiter has a turn for at once is reconciled at once.",
			burst:    1,
			requests: []time.Duration{0},
			want:     got{Turns: 1, Runs: 1},
		},
		"BusyLimiter": {
			reason:   "A request the limiter has no turn for now waits for the turn it took.",
			burst:    1,
			requests: []time.Duration{0, 0},
			want:     got{Wait: time.Second, Turns: 2, Runs: 1},
		},
		"JoinsItsTurn": {
			reason:   "A request that arrives while its PoolCapacity waits for a turn takes no other turn and waits for the one it has.",
			burst:    1,
			requests: []time.Duration{0, 0, 300 * time.Millisecond},
			want:     got{Wait: 700 * time.Millisecond, Turns: 2, Runs: 1},
		},
		"TurnCame": {
			reason:   "A request whose turn has come is reconciled and uses the turn up.",
			burst:    1,
			requests: []time.Duration{0, 0, 300 * time.Millisecond, time.Second},
			want:     got{Turns: 2, Runs: 2},
		},
		"NextTurn": {
			reason:   "A request after the reconcile that used the turn up takes a new one.",
			burst:    1,
			requests: []time.Duration{0, 0, time.Second, time.Second},
			want:     got{Wait: time.Second, Turns: 3, Runs: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := t0
			l := newClockLimiter(1, tc.burst, &now)
			inner := &polled{now: &now, at: map[string][]time.Time{}}
			p := newPaced("test", inner, l, func() time.Time { return now })
			var res reconcile.Result
			for _, at := range tc.requests {
				now = t0.Add(at)
				var err error
				if res, err = p.Reconcile(context.Background(), pcRequest("pc")); err != nil {
					t.Fatal(err)
				}
			}
			g := got{Turns: l.turns, Runs: len(inner.at["pc"])}
			if res.RequeueAfter != time.Minute {
				g.Wait = res.RequeueAfter
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// queue is controller-runtime's priority queue as a reconciler sees it:
// one entry per request, ready at the earliest time it was added for; a
// request added without a delay is ready at once.
type queue map[reconcile.Request]time.Time

func (q queue) add(req reconcile.Request, at time.Time) {
	if t, ok := q[req]; !ok || at.Before(t) {
		q[req] = at
	}
}

// ready removes and returns the requests ready at now, earliest first.
func (q queue) ready(now time.Time) []reconcile.Request {
	var out []reconcile.Request
	for req, at := range q {
		if !at.After(now) {
			out = append(out, req)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !q[out[i]].Equal(q[out[j]]) {
			return q[out[i]].Before(q[out[j]])
		}
		return out[i].Name < out[j].Name
	})
	for _, req := range out {
		delete(q, req)
	}
	return out
}

// TestPacedEventStorm deletes executors of many pools in a steady stream,
// as TestLoad's 10% delete does at 100,000 executors in 1,000 pools (scaled
// down tenfold, and the rate with it): each pool sees an event every 2.5 s
// for 25 s, four times what the limiter grants. Reconciles must keep to the
// limiter's rate, and every pool must be reconciled after its last event
// no later than the limiter takes to grant every pool one turn.
func TestPacedEventStorm(t *testing.T) {
	const (
		pools     = 100
		perSecond = 10
		burst     = 10 * perSecond // crossplane-runtime's NewGlobal
		deletes   = 10 * pools
		storm     = 25 * time.Second
		window    = 100 * time.Millisecond // the observer's batch window
		tick      = 10 * time.Millisecond
	)
	t0 := time.Unix(1_700_000_000, 0)
	now := t0
	l := newClockLimiter(perSecond, burst, &now)
	inner := &polled{now: &now, at: map[string][]time.Time{}}
	p := newPaced("test", inner, l, func() time.Time { return now })

	q := queue{}
	last := map[string]time.Time{} // each pool's last event
	for i := range pools {
		q.add(pcRequest(fmt.Sprintf("pool-%03d", i)), t0)
	}
	end := t0.Add(storm)
	for next := 0; now.Before(end.Add(2 * time.Minute)); now = now.Add(tick) {
		// Each batch window's deletes notify their pools.
		if now.Before(end) && now.Sub(t0)%window == 0 {
			for until := int(now.Sub(t0) * deletes / storm); next < until; next++ {
				name := fmt.Sprintf("pool-%03d", next%pools)
				q.add(pcRequest(name), now)
				last[name] = now
			}
		}
		for _, req := range q.ready(now) {
			res, err := p.Reconcile(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			q.add(req, now.Add(res.RequeueAfter))
		}
	}

	// The limiter's promise: its burst, then perSecond.
	ran := 0
	for _, at := range inner.at {
		for _, a := range at {
			if !a.After(end) {
				ran++
			}
		}
	}
	if most := burst + int(storm.Seconds())*perSecond; ran > most {
		t.Errorf("%d reconciles in the %s storm, want at most %d: the limiter's burst and %d a second", ran, storm, most, perSecond)
	}
	// Every pool reconciled after its last event, within the time the
	// limiter takes to grant each pool one turn.
	bound := time.Duration(pools/perSecond)*time.Second + window
	var slowest time.Duration
	for name, e := range last {
		var after time.Duration = -1
		for _, a := range inner.at[name] {
			if !a.Before(e) {
				after = a.Sub(e)
				break
			}
		}
		if after < 0 {
			t.Fatalf("pool %s was not reconciled after its last event at %s", name, e.Sub(t0))
		}
		slowest = max(slowest, after)
	}
	if slowest > bound {
		t.Errorf("the last pool was reconciled %s after its last event, want at most %s (%d pools at %d a second)", slowest, bound, pools, perSecond)
	}
	t.Logf("%d reconciles in %s; the slowest pool reconciled %s after its last event", ran, storm, slowest)
}
