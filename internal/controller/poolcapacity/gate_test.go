package poolcapacity

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// TestGatesDue: the executor gate is applied when it changes and again
// after reassert, but a pool without one is checked once: most pools
// never have a gate, and deleting nothing every minute would cost each of
// them two requests and an Update.
func TestGatesDue(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	later := t0.Add(2 * reassert)
	g := &capacity.ExecutorGate{Gate: "e6data.io/pool-slot", Namespaces: []string{"team-a"}, Selector: map[string]string{"e6data.io/pool": "p"}}
	other := &capacity.ExecutorGate{Gate: "e6data.io/pool-slot", Namespaces: []string{"team-a", "team-b"}, Selector: g.Selector}
	cases := map[string]struct {
		reason   string
		recorded bool
		last     *capacity.ExecutorGate
		lastWhy  string
		want     *capacity.ExecutorGate
		at       time.Time
		due      bool
	}{
		"NeverApplied":       {reason: "A PoolCapacity not seen since the provider started is checked once.", want: nil, at: t0, due: true},
		"NoneStaysNone":      {reason: "No gate wanted, none applied: nothing to do, even much later.", recorded: true, want: nil, at: later},
		"GateWanted":         {reason: "A gate wanted where none is.", recorded: true, want: g, at: t0, due: true},
		"SameGate":           {reason: "The same gate, applied a moment ago.", recorded: true, last: g, want: g, at: t0},
		"SameGateReasserted": {reason: "The same gate, applied long ago: applied again, in case it was removed.", recorded: true, last: g, want: g, at: later, due: true},
		"NamespacesChanged":  {reason: "A QueryService attached from another namespace.", recorded: true, last: g, want: other, at: t0, due: true},
		"GateGone":           {reason: "The gate is no longer wanted: removed.", recorded: true, last: g, want: nil, at: t0, due: true},
		"UnavailableRetried": {reason: "Removing failed for a reason worth retrying: tried again after the interval.", recorded: true, lastWhy: "forbidden", want: nil, at: later, due: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := newMemo[gateState]()
			if tc.recorded {
				gateRecord(m, "pc", tc.last, t0, tc.lastWhy)
			}
			if got := gateDue(m, "pc", tc.want, tc.at); got != tc.due {
				t.Errorf("%s\ndue = %t, want %t", tc.reason, got, tc.due)
			}
		})
	}
}

// TestGateCensus: a provider that starts lists the ExecutorGates once and
// removes the gate only of the pools that have one, not of every pool: a
// thousand pools, most never gated, cost a thousand DELETEs and as many
// UpdatedExternalResource events at every start before it.
func TestGateCensus(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	listErr := func(err error) interceptor.Funcs {
		return interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return err }}
	}
	cases := map[string]struct {
		reason    string
		gates     []string
		fail      interceptor.Funcs
		pcs       []string
		at        time.Duration // after the census
		wantKnown []string      // PoolCapacities whose gate is known removed
	}{
		"NoneExists": {
			reason: "No ExecutorGate exists: every pool's gate is known removed, with no DELETE.",
			pcs:    []string{"a", "b", "c"}, wantKnown: []string{"a", "b", "c"},
		},
		"OneExists": {
			reason: "The pool whose ExecutorGate exists removes it, if it wants none, as before.",
			gates:  []string{"b"}, pcs: []string{"a", "b", "c"}, wantKnown: []string{"a", "c"},
		},
		"NoCRD": {
			reason: "A cluster without the ExecutorGate CRD holds none.",
			fail:   listErr(&meta.NoKindMatchError{GroupKind: v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ExecutorGateKind).GroupKind()}),
			pcs:    []string{"a"}, wantKnown: []string{"a"},
		},
		"Forbidden": {
			reason: "A census the provider may not take leaves every gate to be removed as before.",
			fail:   listErr(kerrors.NewForbidden(v1alpha1.SchemeGroupVersion.WithResource("executorgates").GroupResource(), "", errors.New("no"))),
			pcs:    []string{"a"},
		},
		"TooOld": {
			reason: "A census older than reassert is not trusted: another provider may have gated the pool since.",
			pcs:    []string{"a"}, at: reassert,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := v1alpha1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			b := fake.NewClientBuilder().WithScheme(s)
			for _, n := range tc.gates {
				b = b.WithObjects(&v1alpha1.ExecutorGate{ObjectMeta: metav1.ObjectMeta{Name: n}})
			}
			lists := 0
			fail := tc.fail.List
			c := interceptor.NewClient(b.Build(), interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
				lists++
				if fail != nil {
					return fail(ctx, c, l, opts...)
				}
				return c.List(ctx, l, opts...)
			}})
			census, gates := &gateCensus{}, newMemo[gateState]()
			census.absent(context.Background(), c, "", t0) // taken as the provider starts
			var known []string
			for _, pc := range tc.pcs {
				knowGate(context.Background(), census, gates, c, pc, t0.Add(tc.at))
				if _, ok := gates.get(pc); ok {
					known = append(known, pc)
				}
			}
			if diff := cmp.Diff(tc.wantKnown, known); diff != "" || lists != 1 {
				t.Errorf("%s\n%d LISTs, want 1; gates known removed -want, +got:\n%s", tc.reason, lists, diff)
			}
			for _, pc := range known {
				if gateDue(gates, pc, nil, t0.Add(tc.at)) {
					t.Errorf("%s\nthe gate of %s, known removed, is due for removal", tc.reason, pc)
				}
			}
		})
	}
}
