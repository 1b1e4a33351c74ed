package poolcapacity

import (
	"context"
	"slices"

	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/internal/capacity"
)

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

// ungatePod removes the scheduling gate u names from its placeholder pod,
// provided it is still the pod (UID) and version the decision read.
// Kubernetes lets a gate be removed, never added, once a pod exists
// (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-scheduling-readiness/).
func ungatePod(ctx context.Context, c client.Client, u capacity.Ungate) (bool, error) {
	p := &corev1.Pod{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: u.Pod.Namespace, Name: u.Pod.Name}, p); err != nil {
		return false, client.IgnoreNotFound(errors.Wrapf(err, "cannot get placeholder pod %s", u.Pod))
	}
	i := slices.IndexFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == u.Gate })
	if string(p.UID) != u.UID || i < 0 {
		return false, nil
	}
	orig := p.DeepCopy()
	p.Spec.SchedulingGates = slices.Delete(p.Spec.SchedulingGates, i, i+1)
	done, err := patchLocked(ctx, c, p, orig)
	return done, errors.Wrapf(err, "cannot remove the scheduling gate of placeholder pod %s", u.Pod)
}

// patchLocked patches obj from orig, read at the resource version the
// patch then requires: an object changed or gone since is patched
// nothing, without an error, and left for the next reconcile.
func patchLocked(ctx context.Context, c client.Client, obj, orig client.Object) (bool, error) {
	err := c.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	if kerrors.IsNotFound(err) || kerrors.IsConflict(err) {
		return false, nil
	}
	return err == nil, err
}
