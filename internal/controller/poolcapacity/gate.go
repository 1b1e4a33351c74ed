package poolcapacity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/pkg/errors"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
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

// gatePolicyBinding binds the policy name to the pods g selects: every selector
// label, in one of g's namespaces (each namespace carries its name as the
// label kubernetes.io/metadata.name).
func gatePolicyBinding(name string, g capacity.ExecutorGate, m gateObjectMeta) *unstructured.Unstructured {
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
	for _, u := range []*unstructured.Unstructured{gatePolicy(name, g.Gate, m), gatePolicyBinding(name, *g, m)} {
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

// bindsGate reports whether the plan's gate must be applied: it differs
// from the gate last applied, or that is older than reassert. A gate
// removed stays removed until one is wanted: most pools never have one,
// and checking again would cost each of them two requests a minute. The
// gate is bound only in the PoolCapacity's own cluster, where its owner
// reference has the garbage collector remove it with the PoolCapacity: a
// PoolCapacity being deleted does not reach a workload cluster (Connect),
// so a gate there could outlive it.
func bindsGate(t target, cr *v1alpha1.PoolCapacity, p *planned) bool {
	return t.local && gateDue(t.gates, cr.Name, p.plan.Gate, p.now)
}

func gateDue(m *memo[gateState], pc string, g *capacity.ExecutorGate, now time.Time) bool {
	last, ok := m.get(pc)
	if ok && g == nil && last.value.gate == nil && last.value.unavailable == "" {
		return false
	}
	return !ok || !sameGate(last.value.gate, g) || now.Sub(last.at) >= reassert
}

// bindGate binds the plan's executor gate, or removes it, and warns once
// per change when the cluster cannot have it.
func bindGate(ctx context.Context, t target, cr *v1alpha1.PoolCapacity, p *planned) []error {
	g := p.plan.Gate
	err := applyGate(ctx, t.client, cr.Name, g, gateMeta(cr))
	switch {
	case errors.Is(err, errGateUnavailable):
		if gateRecord(t.gates, cr.Name, g, p.now, err.Error()) {
			t.record.Event(cr, event.Warning(event.Reason("ExecutorGateUnavailable"), errors.Wrap(err,
				"new executors are not held back, so a burst into a CapacityBuffer can launch a node for the warm slots it takes, and an evicted executor's replacement can take the slot freed for another QueryService; "+
					"Kubernetes 1.36 serves MutatingAdmissionPolicy, and deploy/provider/rbac-executor-gate.yaml lets the provider bind one")))
		}
	case err != nil:
		return []error{err}
	default:
		gateRecord(t.gates, cr.Name, g, p.now, "")
	}
	return nil
}

// gateRecord remembers g as applied for pc at now, or why it could not
// be; it reports whether that reason is new.
func gateRecord(m *memo[gateState], pc string, g *capacity.ExecutorGate, now time.Time, unavailable string) bool {
	prev, _ := m.get(pc)
	m.set(pc, gateState{gate: g, unavailable: unavailable}, now)
	return unavailable != "" && (unavailable != prev.value.unavailable || !sameGate(prev.value.gate, g))
}

func sameGate(a, b *capacity.ExecutorGate) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Gate == b.Gate && slices.Equal(a.Namespaces, b.Namespaces) && maps.Equal(a.Selector, b.Selector)
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
