package decision

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// What holds a pool's warm slots: placeholder pods, or SIG Autoscaling's
// CapacityBuffer, which an autoscaler (Karpenter with its CapacityBuffer
// feature gate, the Cluster Autoscaler, GKE) keeps spare capacity for
// without pods to preempt.

// The settings' warmCapacity.method values.
const (
	warmAuto         = "Auto"
	warmPlaceholders = "Placeholders"
	warmBuffer       = "CapacityBuffer"
)

// warmMethods are the valid warmCapacity.method values.
var warmMethods = []string{warmAuto, warmPlaceholders, warmBuffer}

// CapacityBuffer API facts (karpenter v1.14.1
// pkg/apis/crds/autoscaling.x-k8s.io_capacitybuffers.yaml, and
// pkg/apis/autoscaling/v1beta1/constants.go; objects/workloads.go holds
// the version and kind).
const (
	CRDCapacityBuffer = "capacitybuffers.autoscaling.x-k8s.io"
	// CondReadyForProvisioning is the condition an autoscaler's buffer
	// controller sets True once it has resolved the buffer's pod template
	// and replicas, with the generation it resolved: Karpenter's
	// (pkg/controllers/capacitybuffer/controller.go
	// resolveAndUpdateStatus, reason Resolved), and only with its
	// CapacityBuffer feature gate on (pkg/controllers/controllers.go).
	// Nothing else writes the buffer's status.
	CondReadyForProvisioning = "ReadyForProvisioning"
)

// CondWarmCapacity is the XPool condition that says what holds the warm
// slots and why: True while a CapacityBuffer does.
const CondWarmCapacity = "WarmCapacity"

// Reasons of the WarmCapacity condition.
const (
	ReasonBufferProcessed   = "CapacityBufferProcessed"
	reasonBufferForced      = "CapacityBufferConfigured"
	reasonPlaceholdersSet   = "PlaceholdersConfigured"
	reasonBufferNotServed   = "CapacityBufferNotServed"
	reasonAwaitingAutoscale = "AwaitingAutoscaler"
	ReasonBufferIgnored     = "CapacityBufferNotProcessed"
)

// BufferObservation is what the pool's observed CapacityBuffer says.
type BufferObservation struct {
	Observed   bool
	Generation int64
	// ProcessedGeneration is the observedGeneration of a True
	// ReadyForProvisioning condition; 0 when the condition is not True.
	ProcessedGeneration int64
	// ReplicasOwned tells that the capacity provider has taken over the
	// buffer's spec.replicas (its e6data.io/replicas-owner annotation).
	ReplicasOwned bool
}

// processed tells whether an autoscaler resolved the buffer's current
// spec.
func (b BufferObservation) processed() bool {
	return b.Observed && b.ProcessedGeneration > 0 && b.ProcessedGeneration >= b.Generation
}

// observeBuffer reads an observed CapacityBuffer.
func observeBuffer(u *structpb.Struct) BufferObservation {
	if u == nil {
		return BufferObservation{}
	}
	b := BufferObservation{Observed: true, Generation: observed.Number(observed.Field(u, "metadata", "generation")),
		ReplicasOwned: observed.String(observed.Field(u, "metadata", "annotations").GetStructValue(), qsv1alpha1.AnnotationReplicasOwner) != ""}
	for _, v := range observed.Field(u, "status", "conditions").GetListValue().GetValues() {
		c := v.GetStructValue()
		if observed.String(c, "type") == CondReadyForProvisioning && observed.String(c, "status") == string(metav1.ConditionTrue) {
			b.ProcessedGeneration = observed.Number(observed.Field(c, "observedGeneration"))
		}
	}
	return b
}

// ServesVersion tells whether an observed CustomResourceDefinition serves
// version v.
func ServesVersion(crd *structpb.Struct, v string) bool {
	for _, x := range observed.Field(crd, "spec", "versions").GetListValue().GetValues() {
		if s := x.GetStructValue(); observed.String(s, "name") == v && observed.Field(s, "served").GetBoolValue() {
			return true
		}
	}
	return false
}

// WarmMethodInput is what the warm-slot method is decided from.
type WarmMethodInput struct {
	Now time.Time
	// Setting is warmCapacity.method; Where names it for messages.
	Setting, Where string
	Timeout        time.Duration
	// Served tells whether the cluster serves CapacityBuffer v1beta1.
	Served bool
	// Buffer names the pool's CapacityBuffer ("ns/name") for messages.
	Buffer   string
	Observed BufferObservation
	Previous *poolv1alpha1.WarmCapacityStatus
}

// WarmMethod is the decision: what holds the warm slots, whether the
// CapacityBuffer is composed, and since when the pool waits for an
// autoscaler to process it.
type WarmMethod struct {
	Method        string
	ComposeBuffer bool
	AwaitingSince *metav1.Time
	Condition     Condition
	RequeueAfter  time.Duration
	// Until is how long the decision holds as the clock moves on
	// (Output.Until).
	Until time.Time
}

// decideWarmMethod decides what holds the warm slots:
//
//   - placeholders when the settings say so, or when the cluster does not
//     serve CapacityBuffer v1beta1;
//   - the CapacityBuffer when the settings say so and the kind is served,
//     whether an autoscaler processes it or not;
//   - under Auto, the CapacityBuffer once an autoscaler has processed its
//     current spec (ReadyForProvisioning True at its generation). A served
//     CRD does not mean anything acts on it (Karpenter's gate is off by
//     default), so until then the buffer is composed with no replicas, as a
//     probe, and placeholders hold the slots. A buffer that held the slots
//     keeps them while its new spec waits to be processed, for at most
//     Timeout; after Timeout unprocessed, placeholders hold them and the
//     buffer is kept, empty, to notice an autoscaler that starts later.
func decideWarmMethod(in WarmMethodInput) WarmMethod {
	placeholders := func(reason, msg string) WarmMethod {
		return WarmMethod{Method: warmPlaceholders, Condition: Condition{Type: CondWarmCapacity, Status: metav1.ConditionFalse, Reason: reason, Message: msg}}
	}
	switch {
	case in.Setting == warmPlaceholders:
		return placeholders(reasonPlaceholdersSet, fmt.Sprintf("%s is %s: placeholder pods hold the warm slots", in.Where, warmPlaceholders))
	case !in.Served:
		msg := fmt.Sprintf("the cluster does not serve %s %s (CRD %s): placeholder pods hold the warm slots", objects.BufferAPIVersion, objects.BufferKind, CRDCapacityBuffer)
		if in.Setting == warmBuffer {
			msg = fmt.Sprintf("%s is %s, but %s", in.Where, warmBuffer, msg)
		}
		return placeholders(reasonBufferNotServed, msg)
	case in.Setting == warmBuffer:
		msg := fmt.Sprintf("%s is %s: CapacityBuffer %s holds the warm slots", in.Where, warmBuffer, in.Buffer)
		if !in.Observed.processed() {
			msg += ", though no autoscaler has processed its current spec yet"
		}
		return WarmMethod{Method: warmBuffer, ComposeBuffer: true, Condition: Condition{Type: CondWarmCapacity, Status: metav1.ConditionTrue, Reason: reasonBufferForced, Message: msg}}
	case in.Observed.processed():
		return WarmMethod{Method: warmBuffer, ComposeBuffer: true, Condition: Condition{Type: CondWarmCapacity, Status: metav1.ConditionTrue, Reason: ReasonBufferProcessed,
			Message: fmt.Sprintf("an autoscaler processed CapacityBuffer %s (ReadyForProvisioning True at generation %d): it holds the warm slots, and no placeholder pods run", in.Buffer, in.Observed.Generation)}}
	}
	since := in.Now
	prev := warmPlaceholders
	if p := in.Previous; p != nil {
		if p.AwaitingSince != nil {
			since = p.AwaitingSince.Time
		}
		if p.Method != "" {
			prev = p.Method
		}
	}
	w := WarmMethod{Method: prev, ComposeBuffer: true, AwaitingSince: &metav1.Time{Time: since}}
	if since.Equal(in.Now) {
		// A first wait starts now.
		w.Until = in.Now
	}
	if waited := in.Now.Sub(since); waited < in.Timeout {
		// The wait is counted down from now.
		w.Until = in.Now
		holder, st := "placeholder pods hold the warm slots and the buffer asks for none", metav1.ConditionFalse
		if prev == warmBuffer {
			holder, st = "it keeps holding the warm slots meanwhile", metav1.ConditionTrue
		}
		w.Condition = Condition{Type: CondWarmCapacity, Status: st, Reason: reasonAwaitingAutoscale,
			Message: fmt.Sprintf("waiting up to %s for an autoscaler to process CapacityBuffer %s (its ReadyForProvisioning condition True at its generation): %s", in.Timeout, in.Buffer, holder)}
		w.RequeueAfter = in.Timeout - waited
		return w
	}
	w.Method = warmPlaceholders
	w.Condition = Condition{Type: CondWarmCapacity, Status: metav1.ConditionFalse, Reason: ReasonBufferIgnored,
		Message: fmt.Sprintf("no autoscaler processed CapacityBuffer %s within %s (its ReadyForProvisioning condition is not True at its generation): placeholder pods hold the warm slots, and the buffer, empty, stays to notice an autoscaler that starts acting on it. Karpenter acts on CapacityBuffers only with its feature gate on (FEATURE_GATES CapacityBuffer=true); set %s to %s to stop probing",
			in.Buffer, in.Timeout, in.Where, warmPlaceholders)}
	return w
}
