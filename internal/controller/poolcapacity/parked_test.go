package poolcapacity

import (
	"context"
	"errors"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/watch"
)

// reconciled counts the reconciles that reach it.
type reconciled struct{ n int }

func (r *reconciled) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	r.n++
	return reconcile.Result{}, nil
}

// TestParked checks that a PoolCapacity whose cluster's observer is still
// reading its first view waits without being reconciled, and so does the
// first of a cluster no observer reads yet, once it started one; and that
// one being deleted, one whose observer could not be started and one
// whose observer started more than parkFor ago are reconciled.
func TestParked(t *testing.T) {
	obs, err := watch.New(&rest.Config{Host: "https://127.0.0.1:1"}, watch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	deleted := metav1.NewTime(time.Unix(1, 0))
	cases := map[string]struct {
		reason  string
		config  string
		deleted bool
		started time.Duration // how long ago the observer started
		// startErr is what starting the observer of a cluster none
		// reads fails with; nil starts one, reading its first view.
		startErr   error
		want       reconcile.Result
		wantN      int
		wantStarts int
	}{
		"Syncing": {
			reason: "A PoolCapacity of a cluster whose observer is reading its first view waits, with no retry of its own: the observer wakes it.",
			config: "syncing", want: reconcile.Result{},
		},
		"Deleting": {
			reason: "A PoolCapacity being deleted needs no cluster and is reconciled.",
			config: "syncing", deleted: true, wantN: 1,
		},
		"FirstOfCluster": {
			reason: "A PoolCapacity of a cluster no observer reads yet starts the observer and waits like the rest, rather than fail to connect with an event and a status write.",
			config: "other", wantStarts: 1,
		},
		"CannotStart": {
			reason: "A PoolCapacity whose cluster's observer cannot be started is reconciled, and its reconcile says why.",
			config: "other", startErr: errors.New("no such ProviderConfig"), wantN: 1, wantStarts: 1,
		},
		"WaitedLongEnough": {
			reason: "Once the observer has tried for parkFor, PoolCapacities are reconciled and say why it has no view.",
			config: "syncing", started: parkFor + time.Second, wantN: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := v1alpha1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			pc := &v1alpha1.PoolCapacity{ObjectMeta: metav1.ObjectMeta{Name: "pc"}}
			pc.SetProviderConfigReference(&xpv2.Reference{Name: tc.config})
			if tc.deleted {
				pc.SetDeletionTimestamp(&deleted)
				pc.SetFinalizers([]string{"test"})
			}
			inner := &reconciled{}
			cs := newClusters(watch.Options{}, nil, logr.Discard())
			cs.running["syncing"] = &running{obs: obs, done: make(chan struct{}), started: time.Now().Add(-tc.started)}
			starts := 0
			start := func(_ context.Context, pc *v1alpha1.PoolCapacity) error {
				starts++
				if tc.startErr != nil {
					return tc.startErr
				}
				cs.mu.Lock()
				cs.running[pc.GetProviderConfigReference().Name] = &running{obs: obs, done: make(chan struct{}), started: time.Now()}
				cs.mu.Unlock()
				return nil
			}
			p := parked{kube: fake.NewClientBuilder().WithScheme(s).WithObjects(pc).Build(), clusters: cs, start: start, inner: inner}
			got, err := p.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "pc"}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || inner.n != tc.wantN || starts != tc.wantStarts {
				t.Errorf("%s\nreconciled %d times, want %d; started %d observers, want %d; result -want, +got:\n%s", tc.reason, inner.n, tc.wantN, starts, tc.wantStarts, diff)
			}
		})
	}
}

// TestParkedWokenBySync checks that a parked PoolCapacity is queued when
// its cluster's observer reads its first view: the PoolCapacities a
// provider parks as it starts had reached no Connect, so the sync, which
// queues the PoolCapacities of its cluster, did not know them, and a
// thousand of them converged up to a second late, each when its retry
// came.
func TestParkedWokenBySync(t *testing.T) {
	obs, err := watch.New(&rest.Config{Host: "https://127.0.0.1:1"}, watch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.PoolCapacity{ObjectMeta: metav1.ObjectMeta{Name: "pc"}}
	pc.SetProviderConfigReference(&xpv2.Reference{Name: "syncing"})
	cs := newClusters(watch.Options{}, nil, logr.Discard())
	cs.ctx = t.Context()
	cs.running["syncing"] = &running{obs: obs, done: make(chan struct{}), started: time.Now()}
	p := parked{kube: fake.NewClientBuilder().WithScheme(s).WithObjects(pc).Build(), clusters: cs, inner: &reconciled{}}
	if _, err := p.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "pc"}}); err != nil {
		t.Fatal(err)
	}

	cs.notifyConfig("syncing")
	var queued []string
	for len(cs.events) > 0 {
		queued = append(queued, (<-cs.events).Object.GetName())
	}
	if diff := cmp.Diff([]string{"pc"}, queued); diff != "" {
		t.Errorf("the sync of the parked PoolCapacity's cluster queued -want, +got:\n%s", diff)
	}
}
