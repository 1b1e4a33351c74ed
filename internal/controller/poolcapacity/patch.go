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

// ungatePod removes the scheduling gate u names from its pod (a
// placeholder or an executor), provided it is still the pod (UID) and
// version the decision read. Kubernetes lets a gate be removed, never
// added, once a pod exists
// (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-scheduling-readiness/).
func ungatePod(ctx context.Context, c client.Client, u capacity.Ungate) (bool, error) {
	p := &corev1.Pod{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: u.Pod.Namespace, Name: u.Pod.Name}, p); err != nil {
		return false, client.IgnoreNotFound(errors.Wrapf(err, "cannot get pod %s", u.Pod))
	}
	i := slices.IndexFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == u.Gate })
	if string(p.UID) != u.UID || i < 0 {
		return false, nil
	}
	orig := p.DeepCopy()
	p.Spec.SchedulingGates = slices.Delete(p.Spec.SchedulingGates, i, i+1)
	done, err := patchLocked(ctx, c, p, orig)
	return done, errors.Wrapf(err, "cannot remove the scheduling gate %s of pod %s", u.Gate, u.Pod)
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
