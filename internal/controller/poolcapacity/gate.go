package poolcapacity

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/pkg/errors"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// The executor gate's admission policies are static: a
// MutatingAdmissionPolicy that adds the gate to new executors and a
// ValidatingAdmissionPolicy that keeps it from being walked around, with
// their bindings, which the platform applies once
// (deploy/provider/executor-gate.yaml). Their parameter is an ExecutorGate,
// one per PoolCapacity that holds executors back, which is all the provider
// writes. MutatingAdmissionPolicy is admissionregistration.k8s.io/v1 from
// Kubernetes 1.36 (KEP-3962; the MutatingAdmissionPolicy feature gate is GA
// and on by default there). The API server applies it in-process: there is
// no webhook to serve and no certificate to rotate.
var gatePolicyGVK = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingAdmissionPolicy"}

// gatePolicyName is the name of the static MutatingAdmissionPolicy that
// adds the executor gate, and of its binding.
const gatePolicyName = "burstpool-executor-gate"

// gateFieldOwner is the field manager of the ExecutorGates.
const gateFieldOwner = "burstpool-capacity"

// executorGate is the PoolCapacity pc's ExecutorGate, named after it
// (PoolCapacities are cluster-scoped, so their names are unique): the
// parameters with which the static policies gate the pods g selects, every
// selector label in one of g's namespaces, and let the provider of
// namespace providerNS alone release them.
func executorGate(pc string, pool v1alpha1.PoolRef, g capacity.ExecutorGate, providerNS string, m gateObjectMeta) (*unstructured.Unstructured, error) {
	eg := &v1alpha1.ExecutorGate{
		ObjectMeta: metav1.ObjectMeta{Name: pc},
		Spec: v1alpha1.ExecutorGateSpec{
			Pool: pool, Gate: g.Gate, Namespaces: g.Namespaces, Selector: g.Selector, ProviderNamespace: providerNS,
		},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(eg)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot convert ExecutorGate %s", pc)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(v1alpha1.ExecutorGateGroupVersionKind)
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	m.set(u)
	return u, nil
}

// errGateUnavailable marks a gate the cluster cannot have: it serves no
// MutatingAdmissionPolicy, the static policies of
// deploy/provider/executor-gate.yaml are not applied, or the provider may
// not write ExecutorGates.
var errGateUnavailable = errors.New("executor gate unavailable")

// applyGate writes the ExecutorGate of g for the PoolCapacity pc, or
// removes it when g is nil, and checks that the static policy it
// parameterises is there to gate executors.
func applyGate(ctx context.Context, c client.Client, pc string, pool v1alpha1.PoolRef, g *capacity.ExecutorGate, providerNS string, m gateObjectMeta) error {
	if g == nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(v1alpha1.ExecutorGateGroupVersionKind)
		u.SetName(pc)
		err := c.Delete(ctx, u)
		switch {
		// A provider that may not write ExecutorGates, or a cluster
		// without their CRD, has none of its own to remove.
		case err == nil, kerrors.IsNotFound(err), meta.IsNoMatchError(err), kerrors.IsForbidden(err):
			return nil
		default:
			return errors.Wrapf(err, "cannot delete ExecutorGate %s", pc)
		}
	}
	if errs := validation.IsQualifiedName(g.Gate); len(errs) > 0 {
		return errors.Errorf("executor gate %q is not a qualified name: %s", g.Gate, strings.Join(errs, "; "))
	}
	u, err := executorGate(pc, pool, *g, providerNS, m)
	if err != nil {
		return err
	}
	err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(gateFieldOwner), client.ForceOwnership)
	switch {
	case err == nil:
	case meta.IsNoMatchError(err), kerrors.IsForbidden(err):
		return errors.Wrap(errGateUnavailable, err.Error())
	default:
		return errors.Wrapf(err, "cannot apply ExecutorGate %s", pc)
	}
	// The ExecutorGate gates nothing without the static policy: a cluster
	// that serves none, or one where it was not applied, is told of.
	pol := &unstructured.Unstructured{}
	pol.SetGroupVersionKind(gatePolicyGVK)
	err = c.Get(ctx, client.ObjectKey{Name: gatePolicyName}, pol)
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err):
		return errors.Wrap(errGateUnavailable, "the cluster serves no admissionregistration.k8s.io/v1 MutatingAdmissionPolicy")
	case kerrors.IsNotFound(err):
		return errors.Wrapf(errGateUnavailable, "MutatingAdmissionPolicy %s is missing (deploy/provider/executor-gate.yaml)", gatePolicyName)
	case kerrors.IsForbidden(err):
		return errors.Wrap(errGateUnavailable, err.Error())
	default:
		return errors.Wrapf(err, "cannot get MutatingAdmissionPolicy %s", gatePolicyName)
	}
}

// bindsGate reports whether the plan's gate must be applied: it differs
// from the gate last applied, or that is older than reassert. A gate
// removed stays removed until one is wanted: most pools never have one,
// and checking again would cost each of them a request a minute. The
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
	err := applyGate(ctx, t.client, cr.Name, cr.Spec.ForProvider.Pool, g, t.namespace, gateMeta(cr))
	switch {
	case errors.Is(err, errGateUnavailable):
		if gateRecord(t.gates, cr.Name, g, p.now, err.Error()) {
			t.record.Event(cr, event.Warning(event.Reason("ExecutorGateUnavailable"), errors.Wrap(err,
				"new executors are not held back, so a burst into a CapacityBuffer can launch a node for the warm slots it takes, and an evicted executor's replacement can take the slot freed for another QueryService; "+
					"Kubernetes 1.36 serves MutatingAdmissionPolicy, and deploy/provider/executor-gate.yaml holds the policies that gate executors")))
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

// A gateCensus is which ExecutorGates the provider's own cluster held when
// the provider first looked, taken with one LIST. A provider that starts
// remembers no gate it applied, so without the census every pool would
// remove its gate, which for most pools never existed, as its first
// reconcile: with a thousand pools, a thousand DELETEs and as many
// UpdatedExternalResource events in the seconds every PoolCapacity waits
// on its first status.
type gateCensus struct {
	mu    sync.Mutex
	taken time.Time
	// known is false when the census could not be taken: every gate is
	// then removed as before.
	known bool
	names map[string]bool
}

// absent reports whether the census, taken first if it was not, found no
// ExecutorGate of the PoolCapacity called pc, and is younger than
// reassert: a gate applied later by another provider (a leader that
// lost its Lease a moment before) is removed at the reassert after.
// The census is taken at most once; when it cannot be, absent is false.
func (g *gateCensus) absent(ctx context.Context, c client.Reader, pc string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.taken.IsZero() {
		g.taken = now
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ExecutorGateKind + "List"))
		err := c.List(ctx, l)
		switch {
		case err == nil:
			g.known = true
			g.names = make(map[string]bool, len(l.Items))
			for _, eg := range l.Items {
				g.names[eg.Name] = true
			}
		case meta.IsNoMatchError(err):
			// A cluster without the CRD holds no ExecutorGate.
			g.known = true
		}
	}
	return g.known && now.Sub(g.taken) < reassert && !g.names[pc]
}

// knowGate records the executor gate of the PoolCapacity called pc as
// removed, at now, when the provider has applied none since it started
// and the census found none: as bindGate would have left it.
func knowGate(ctx context.Context, census *gateCensus, gates *memo[gateState], c client.Reader, pc string, now time.Time) {
	if census == nil {
		return
	}
	if _, ok := gates.get(pc); ok {
		return
	}
	if census.absent(ctx, c, pc, now) {
		gates.set(pc, gateState{}, now)
	}
}
