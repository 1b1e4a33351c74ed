package poolcapacity

import (
	"context"

	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// scalesBuffer reports whether the plan's buffer scale differs from the
// one last applied for the PoolCapacity, or that one is older than
// reassert.
func scalesBuffer(t target, cr *v1alpha1.PoolCapacity, p *planned) bool {
	b := p.plan.Buffer
	if b == nil {
		return false
	}
	last, ok := t.buffers.get(cr.Name)
	return !ok || last.value != *b || p.now.Sub(last.at) >= reassert
}

// applyBufferScale scales the pool's CapacityBuffer as the plan says.
func applyBufferScale(ctx context.Context, t target, cr *v1alpha1.PoolCapacity, p *planned) []error {
	b := *p.plan.Buffer
	done, err := scaleBuffer(ctx, t.client, b)
	if done {
		t.buffers.set(cr.Name, b, p.now)
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// bufferGVK is SIG Autoscaling's CapacityBuffer (karpenter v1.14.1
// pkg/apis/autoscaling/v1beta1, which mirrors the Cluster Autoscaler's
// API).
var bufferGVK = schema.GroupVersionKind{Group: "autoscaling.x-k8s.io", Version: "v1beta1", Kind: "CapacityBuffer"}

// bufferFieldOwner is the field manager of the buffer's spec.replicas.
const bufferFieldOwner = "burstpool-capacity"

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
