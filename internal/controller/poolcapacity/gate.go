package poolcapacity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pkg/errors"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// The executor gate is a MutatingAdmissionPolicy and its binding, one pair
// per PoolCapacity, in the cluster where the pool's executors run.
// MutatingAdmissionPolicy is admissionregistration.k8s.io/v1 from
// Kubernetes 1.36 (KEP-3962; the MutatingAdmissionPolicy feature gate is GA
// and on by default there). The API server applies it in-process: there is
// no webhook to serve and no certificate to rotate.
var (
	gatePolicyGVK  = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicy"}
	gateBindingGVK = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicyBinding"}
)

// gateFieldOwner is the field manager of the gate's policy and binding.
const gateFieldOwner = "burstpool-capacity"

// gateName is the name of the PoolCapacity's policy and of its binding.
// PoolCapacities are cluster-scoped, so their names are unique.
func gateName(pc string) string { return "burstpool-executor-gate-" + pc }

// gatePolicy is the admission policy that adds the gate g to a pod created
// unbound. A pod created with spec.nodeName is left alone: Kubernetes
// refuses scheduling gates on a bound pod. failurePolicy Ignore admits the
// pod ungated if the policy cannot be evaluated: the pod may then launch
// a node, but it is never refused.
func gatePolicy(name, g string, m gateObjectMeta) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"matchConstraints": map[string]any{
				"resourceRules": []any{map[string]any{
					"apiGroups": []any{""}, "apiVersions": []any{"v1"},
					"operations": []any{"CREATE"}, "resources": []any{"pods"},
				}},
			},
			"matchConditions": []any{map[string]any{
				"name":       "unbound",
				"expression": "!has(object.spec.nodeName) || object.spec.nodeName == ''",
			}},
			"failurePolicy":      "Ignore",
			"reinvocationPolicy": "Never",
			"mutations": []any{map[string]any{
				"patchType": "ApplyConfiguration",
				"applyConfiguration": map[string]any{
					// schedulingGates is a list map keyed by name: the apply
					// adds the gate beside any the pod has.
					"expression": fmt.Sprintf("Object{spec: Object.spec{schedulingGates: [Object.spec.schedulingGates{name: %q}]}}", g),
				},
			}},
		},
	}}
	u.SetGroupVersionKind(gatePolicyGVK)
	m.set(u)
	return u
}

// gateBinding binds the policy name to the pods g selects: every selector
// label, in one of g's namespaces (each namespace carries its name as the
// label kubernetes.io/metadata.name).
func gateBinding(name string, g capacity.ExecutorGate, m gateObjectMeta) *unstructured.Unstructured {
	ns := make([]any, 0, len(g.Namespaces))
	for _, n := range g.Namespaces {
		ns = append(ns, n)
	}
	labels := make(map[string]any, len(g.Selector))
	for k, v := range g.Selector {
		labels[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"policyName": name,
			"matchResources": map[string]any{
				"namespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{
					"key": "kubernetes.io/metadata.name", "operator": "In", "values": ns,
				}}},
				"objectSelector": map[string]any{"matchLabels": labels},
			},
		},
	}}
	u.SetGroupVersionKind(gateBindingGVK)
	m.set(u)
	return u
}

// errGateUnavailable marks a gate the cluster cannot have: it serves no
// MutatingAdmissionPolicy, or the provider may not write one (the opt-in
// role deploy/provider/rbac-executor-gate.yaml is not bound).
var errGateUnavailable = errors.New("executor gate unavailable")

// applyGate binds the gate g for the PoolCapacity pc, or removes the policy
// and binding when g is nil. Policy first, so that the binding never names
// a policy that is not there; removal the other way round.
func applyGate(ctx context.Context, c client.Client, pc string, g *capacity.ExecutorGate, m gateObjectMeta) error {
	name := gateName(pc)
	if g == nil {
		for _, gvk := range []schema.GroupVersionKind{gateBindingGVK, gatePolicyGVK} {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			u.SetName(name)
			err := c.Delete(ctx, u)
			switch {
			// A provider that may not write policies, or a cluster that
			// serves none, has none of its own to remove.
			case err == nil, kerrors.IsNotFound(err), meta.IsNoMatchError(err), kerrors.IsForbidden(err):
			default:
				return errors.Wrapf(err, "cannot delete %s %s", gvk.Kind, name)
			}
		}
		return nil
	}
	if errs := validation.IsQualifiedName(g.Gate); len(errs) > 0 {
		return errors.Errorf("executor gate %q is not a qualified name: %s", g.Gate, strings.Join(errs, "; "))
	}
	for _, u := range []*unstructured.Unstructured{gatePolicy(name, g.Gate, m), gateBinding(name, *g, m)} {
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(gateFieldOwner), client.ForceOwnership)
		switch {
		case err == nil:
		case meta.IsNoMatchError(err), kerrors.IsNotFound(err), kerrors.IsForbidden(err):
			return errors.Wrap(errGateUnavailable, err.Error())
		default:
			return errors.Wrapf(err, "cannot apply %s %s", u.GetKind(), name)
		}
	}
	return nil
}

// gates remembers, per PoolCapacity, the gate last applied, so that a
// reconcile writes the policy only when the gate changes, and again after
// bufferReassert.
type gates struct {
	mu   sync.Mutex
	last map[string]gateApplied
}

type gateApplied struct {
	gate *capacity.ExecutorGate
	at   time.Time
	// unavailable is the reason the last apply could not be made, reported
	// once per change.
	unavailable string
}

// due reports whether g must be applied for pc: it differs from the gate
// last applied, or that is older than bufferReassert. A gate removed stays
// removed until one is wanted: most pools never have one, and checking
// again would cost each of them two requests a minute.
func (s *gates) due(pc string, g *capacity.ExecutorGate, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.last[pc]
	if ok && g == nil && last.gate == nil && last.unavailable == "" {
		return false
	}
	return !ok || !sameGate(last.gate, g) || now.Sub(last.at) >= bufferReassert
}

// record remembers g as applied for pc at now, or why it could not be;
// it reports whether that reason is new.
func (s *gates) record(pc string, g *capacity.ExecutorGate, now time.Time, unavailable string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.last[pc]
	s.last[pc] = gateApplied{gate: g, at: now, unavailable: unavailable}
	return unavailable != "" && (unavailable != prev.unavailable || !sameGate(prev.gate, g))
}

func (s *gates) forget(pc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, pc)
}

func sameGate(a, b *capacity.ExecutorGate) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Gate == b.Gate && slices.Equal(a.Namespaces, b.Namespaces) && maps.Equal(a.Selector, b.Selector)
}

// bufferPoll is how often a release waiting for the buffer's autoscaler
// reads the buffer.
const bufferPoll = 50 * time.Millisecond

// bufferSeen reports whether the autoscaler has seen the buffer at b's
// replicas or fewer: the buffer's status.replicas, which the autoscaler
// writes from the spec it provisions for (Karpenter v1.14.1
// pkg/controllers/capacitybuffer/controller.go sets it in the reconcile
// that refreshes the buffer's virtual pods). A buffer that is gone holds
// nothing to wait for.
func bufferSeen(ctx context.Context, c client.Client, b capacity.BufferScale) (bool, error) {
	u, err := getBuffer(ctx, c, b)
	if kerrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	n, ok, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
	return ok && n <= int64(b.Replicas), nil
}

// release removes the gate from the executors r lists: at once those it
// releases now, and the buffered ones once the buffer's autoscaler has
// seen their count, or at r.Until. It waits in the reconcile: the wait is
// the autoscaler's reaction to one spec change, normally milliseconds,
// and ExecutorGateBound at most.
func release(ctx context.Context, c client.Client, r *capacity.Release, now time.Time) []error {
	var errs []error
	for _, u := range r.Now {
		if _, err := ungatePod(ctx, c, u); err != nil {
			errs = append(errs, err)
		}
	}
	if len(r.Buffered) == 0 || r.Buffer == nil {
		return errs
	}
	limit := min(max(r.Until.Sub(now), 0), capacity.ExecutorGateBound)
	var last error
	seen := func(ctx context.Context) (bool, error) {
		ok, err := bufferSeen(ctx, c, *r.Buffer)
		last = err
		return ok, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, bufferPoll, limit, true, seen); err != nil && last != nil {
		errs = append(errs, last)
	}
	for _, u := range r.Buffered {
		if _, err := ungatePod(ctx, c, u); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// gateObjectMeta is the gate's labels and owner.
type gateObjectMeta struct {
	labels map[string]string
	owner  []metav1.OwnerReference
}

func (m gateObjectMeta) set(u *unstructured.Unstructured) {
	u.SetLabels(m.labels)
	u.SetOwnerReferences(m.owner)
}

// gateMeta labels the gate with the pool's identity, as everything of a
// pool is labelled, and has the PoolCapacity own it, so that Kubernetes'
// garbage collector removes it with the PoolCapacity.
func gateMeta(cr *v1alpha1.PoolCapacity) gateObjectMeta {
	p := cr.Spec.ForProvider.Pool
	m := gateObjectMeta{labels: map[string]string{qsv1alpha1.LabelPool: p.Name, qsv1alpha1.LabelPoolNamespace: p.Namespace}}
	if cr.UID != "" {
		m.owner = []metav1.OwnerReference{{
			APIVersion: v1alpha1.PoolCapacityGroupVersionKind.GroupVersion().String(),
			Kind:       v1alpha1.PoolCapacityKind,
			Name:       cr.Name,
			UID:        cr.UID,
		}}
	}
	return m
}
