package poolcapacity

import (
	"context"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

func opensNodes(_ target, _ *v1alpha1.PoolCapacity, p *planned) bool { return len(p.plan.Open) > 0 }

// openNodes opens the warm nodes the plan lists, and records an event for
// each node opened.
func openNodes(ctx context.Context, t target, cr *v1alpha1.PoolCapacity, p *planned) []error {
	var errs []error
	for _, o := range p.plan.Open {
		done, err := openNode(ctx, t.client, o)
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
		t.record.Event(cr, ev)
		if t.local {
			// The same event on the node, for kubectl describe node
			// (which, as the kubelet does, names a node's events with
			// the node's name for UID); a workload cluster's nodes are
			// not in this cluster.
			t.record.Event(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: o.Node, UID: types.UID(o.Node)}}, ev)
		}
	}
	return errs
}

// openNode removes the startup taint o names from its node. The patch
// carries the resource version the node was read at, so a node that
// changed since is left for the next reconcile; a node already open or
// gone is nothing to do. It needs patch on nodes, and only the provider
// has it: warmup pods run with no API credentials at all.
func openNode(ctx context.Context, c client.Client, o capacity.Opening) (bool, error) {
	n := &corev1.Node{}
	if err := c.Get(ctx, types.NamespacedName{Name: o.Node}, n); err != nil {
		return false, client.IgnoreNotFound(errors.Wrapf(err, "cannot get pool node %s", o.Node))
	}
	i := slices.IndexFunc(n.Spec.Taints, func(t corev1.Taint) bool {
		return t.Key == o.Taint.Key && t.Value == o.Taint.Value && string(t.Effect) == o.Taint.Effect
	})
	if i < 0 {
		return false, nil
	}
	orig := n.DeepCopy()
	n.Spec.Taints = slices.Delete(n.Spec.Taints, i, i+1)
	done, err := patchLocked(ctx, c, n, orig)
	return done, errors.Wrapf(err, "cannot remove the startup taint %s from pool node %s", o.Taint.Key, o.Node)
}
