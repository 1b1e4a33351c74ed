package poolcapacity

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
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

// ungatePod removes the scheduling gate u names from its pod (a placeholder
// or an executor),
// provided it is still the pod (UID) and version the decision read.
// Kubernetes lets a gate be removed, never added, once a pod exists
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

// bufferGVK is SIG Autoscaling's CapacityBuffer (karpenter v1.14.1
// pkg/apis/autoscaling/v1beta1, which mirrors the Cluster Autoscaler's
// API).
var bufferGVK = schema.GroupVersionKind{Group: "autoscaling.x-k8s.io", Version: "v1beta1", Kind: "CapacityBuffer"}

// scaleBuffer sets the CapacityBuffer's spec.replicas by server-side
// apply, as the field manager bufferFieldOwner, with the annotation that
// tells the composition to leave the field to it. The apply is forced: the
// composition set replicas when it created the buffer, and from here the
// provider owns them (Kubernetes server-side apply: a forced apply moves a
// field's ownership to the applier, and an applier that stops sending a
// field it shares gives up only its own claim). A buffer not there yet
// (Crossplane has not created it) is nothing to do: it is read first, so
// the apply never creates one.
func scaleBuffer(ctx context.Context, c client.Client, b capacity.BufferScale) (bool, error) {
	u, err := getBuffer(ctx, c, b)
	if err != nil {
		return false, client.IgnoreNotFound(err)
	}
	n, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if ok && n == int64(b.Replicas) && u.GetAnnotations()[qsv1alpha1.AnnotationReplicasOwner] == bufferFieldOwner {
		return true, nil
	}
	apply := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{
			"namespace": b.Namespace, "name": b.Name,
			"annotations": map[string]any{qsv1alpha1.AnnotationReplicasOwner: bufferFieldOwner},
		},
		"spec": map[string]any{"replicas": int64(b.Replicas)},
	}}
	apply.SetGroupVersionKind(bufferGVK)
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner(bufferFieldOwner), client.ForceOwnership)
	return err == nil, errors.Wrapf(err, "cannot set the replicas of CapacityBuffer %s/%s to %d", b.Namespace, b.Name, b.Replicas)
}

// getBuffer reads the CapacityBuffer b names.
func getBuffer(ctx context.Context, c client.Client, b capacity.BufferScale) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(bufferGVK)
	err := c.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: b.Name}, u)
	return u, errors.Wrapf(err, "cannot get CapacityBuffer %s/%s", b.Namespace, b.Name)
}

// bufferFieldOwner is the field manager of the buffer's spec.replicas.
const bufferFieldOwner = "burstpool-capacity"

// bufferReassert is how long an applied buffer scale is trusted: after it,
// the same scale is applied again, so a replica count changed by hand or
// lost to a restore comes back.
const bufferReassert = time.Minute

// bufferScales remembers, per PoolCapacity, the buffer scale last applied,
// so that a reconcile patches the buffer only when its scale changes.
type bufferScales struct {
	mu   sync.Mutex
	last map[string]scaled
}

type scaled struct {
	scale capacity.BufferScale
	at    time.Time
}

// due returns b when it differs from the scale last applied for the
// PoolCapacity named pc, or that one is older than bufferReassert; nil
// otherwise.
func (s *bufferScales) due(pc string, b *capacity.BufferScale, now time.Time) *capacity.BufferScale {
	if b == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, ok := s.last[pc]; ok && last.scale == *b && now.Sub(last.at) < bufferReassert {
		return nil
	}
	return b
}

// record records that b was applied for the PoolCapacity named pc.
func (s *bufferScales) record(pc string, b capacity.BufferScale, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last[pc] = scaled{scale: b, at: now}
}

// forget drops what is remembered of a deleted PoolCapacity.
func (s *bufferScales) forget(pc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, pc)
}
