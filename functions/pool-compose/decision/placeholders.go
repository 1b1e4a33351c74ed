package decision

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/internal/sizing"
)

// PlaceholderInput is what the placeholders are decided from.
type PlaceholderInput struct {
	Pool, Namespace string
	// WarmLevel is the slots to keep warm (minExecutors, or what the warm
	// policy sets: Facts.WarmLevel); Occupied are the executors running,
	// which hold slots themselves.
	WarmLevel, Occupied int32
	// Policy tells that a warm policy (spec.warmPolicy) set WarmLevel.
	Policy  bool
	Suspend bool
	// Slot is one executor slot; SlotOK is false while no size is known.
	Slot   sizing.Resources
	SlotOK bool
	// PerNode is executorsPerNode, at least 1.
	PerNode    int32
	Config     v1beta1.Placeholder
	Scheduling objects.Scheduling
	// PriorityClassObserved and DeploymentObserved tell which of the
	// placeholder objects exist.
	PriorityClassObserved, DeploymentObserved bool
	// Warm decides what holds the slots: placeholders or a CapacityBuffer.
	Warm WarmMethodInput
}

// decidePlaceholders decides what holds the warm level's slots
// (minExecutors, or what the warm policy sets), and says so in status:
// the warm level less the executors running, none while
// suspended, each one slot. Placeholders are a PriorityClass and a
// Deployment of pause pods; where an autoscaler acts on SIG Autoscaling's
// CapacityBuffer, a CapacityBuffer of that many chunks of a PodTemplate
// holds them instead, and no placeholder pod runs (decideWarmMethod).
func decidePlaceholders(p PlaceholderInput) (*poolv1alpha1.WarmCapacityStatus, Outcome) {
	var o Outcome
	replicas := max(0, p.WarmLevel-p.Occupied)
	if p.Suspend || !p.SlotOK {
		replicas = 0
	}
	m := decideWarmMethod(p.Warm)
	o.Conditions = append(o.Conditions, m.Condition)
	o.RequeueAfter, o.Until = m.RequeueAfter, m.Until
	st := &poolv1alpha1.WarmCapacityStatus{Method: m.Method, Slots: replicas, AwaitingSince: m.AwaitingSince}
	if m.ComposeBuffer {
		st.CapacityBuffer = p.Pool + objects.SuffixBuffer
	}
	class := p.Config.PriorityClassName
	if class == "" {
		class = p.Pool + objects.SuffixPlaceholder
		pool, ns, value := p.Pool, p.Namespace, *p.Config.Priority
		o.desireLazy(objects.ComposedPlaceholderPriorityClass, "PriorityClass", class, Lazy{
			Key:   lazyKey("priorityclass", []any{class, pool, ns, value}),
			Build: func() *unstructured.Unstructured { return objects.PriorityClass(class, pool, ns, value) },
		}, p.PriorityClassObserved, true)
	}
	if !p.SlotOK {
		// The PriorityClass holds no capacity, so it is kept ready for
		// when a slot size is known; the warm slots wait for one.
		switch {
		case p.WarmLevel > 0 && p.Policy:
			o.event(true, "NoWarmSlotSize", fmt.Sprintf("the warm level is %d (status.warmPolicy) but no executor size is known yet: attach a compatible QueryService or set spec.instanceConfig.instanceType", p.WarmLevel))
		case p.WarmLevel > 0:
			o.event(true, "NoWarmSlotSize", "minExecutors is set but no executor size is known yet: attach a compatible QueryService or set spec.instanceConfig.instanceType")
		}
		o.preserve(objects.ComposedPlaceholder)
		if m.ComposeBuffer {
			o.preserve(objects.ComposedBuffer, objects.ComposedBufferTemplate)
		}
		return st, o
	}
	a := objects.PlaceholderArgs{
		Pool: p.Pool, Namespace: p.Namespace, Replicas: replicas, Slot: p.Slot,
		Image: p.Config.Image, PriorityClassName: class, Scheduling: p.Scheduling, Spread: p.PerNode == 1,
	}
	if m.Method == warmPlaceholders {
		// Placeholders wait for nodes; the pool does not wait for them.
		o.desireLazy(objects.ComposedPlaceholder, "Deployment", a.Pool+objects.SuffixPlaceholder, Lazy{Key: lazyKey("placeholder", a), Build: func() *unstructured.Unstructured { return objects.Placeholder(a) }},
			p.DeploymentObserved, false)
	}
	if m.ComposeBuffer {
		// The composition creates the buffer at 0 replicas (the CRD
		// requires them) and never raises them: the capacity provider
		// keeps them at the slots the pool still wants, counting the
		// executors as they are created and the placeholders until they
		// are gone, which the composition cannot see. A buffer raised
		// here at the switch, before the provider took the field over,
		// would ask for the slots placeholders still hold, and the
		// autoscaler would launch nodes for them.
		b := a
		b.Replicas = 0
		b.ReplicasOwned = p.Warm.Observed.ReplicasOwned
		o.desireLazy(objects.ComposedBufferTemplate, "PodTemplate", b.Pool+objects.SuffixBuffer, Lazy{Key: lazyKey("buffertemplate", b), Build: func() *unstructured.Unstructured { return objects.BufferTemplate(b) }},
			true, false)
		// Ready once it exists, as the placeholder Deployment is: whether
		// an autoscaler acts on it is the WarmCapacity condition's to say,
		// and a buffer nothing processes (Karpenter's gate off) must not
		// keep the composite from Ready.
		o.desireLazy(objects.ComposedBuffer, objects.BufferKind, b.Pool+objects.SuffixBuffer, Lazy{Key: lazyKey("buffer", b), Build: func() *unstructured.Unstructured { return objects.CapacityBuffer(b) }},
			p.Warm.Observed.Observed, false)
	}
	return st, o
}

// bufferOf is the CapacityBuffer the PoolCapacity keeps at the warm
// slots the pool still wants, as st (decidePlaceholders's status, or the
// previous one) names it: none when the pool composes none; it holds the
// slots while the warm capacity method is CapacityBuffer and canHold (an
// executor size is known and the pool is not suspended).
func bufferOf(st *poolv1alpha1.WarmCapacityStatus, canHold bool) *capv1alpha1.WarmBuffer {
	if st == nil || st.CapacityBuffer == "" {
		return nil
	}
	return &capv1alpha1.WarmBuffer{Name: st.CapacityBuffer, Holds: st.Method == warmBuffer && canHold}
}

// placeholderInput gathers the placeholders' input; the slot is sized from
// the attached QueryServices and the pool's size.
func placeholderInput(in Input, f Facts, size *sizing.Result) PlaceholderInput {
	p := PlaceholderInput{
		Pool: in.Pool, Namespace: in.Namespace, WarmLevel: f.WarmLevel, Policy: in.Spec.WarmPolicy != nil, Occupied: f.Capacity.occupied(),
		Suspend: in.Spec.Suspend, PerNode: f.PerNode, Scheduling: f.Scheduling, Config: *in.Config.Placeholder,
		PriorityClassObserved: in.Observed[objects.ComposedPlaceholderPriorityClass] != nil,
		DeploymentObserved:    in.Observed[objects.ComposedPlaceholder] != nil,
		Warm: WarmMethodInput{
			Now: in.Now, Setting: in.Config.WarmCapacity.Method, Where: in.Settings.where("warmCapacity.method"),
			Timeout: autoscalerTimeout(in.Config), Served: in.CRDs[CRDCapacityBuffer],
			Buffer: in.Namespace + "/" + in.Pool + objects.SuffixBuffer, Observed: observeBuffer(in.Observed[objects.ComposedBuffer]),
			Previous: in.Previous.WarmCapacity,
		},
	}
	explicit := ""
	if ic := in.Spec.InstanceConfig; ic != nil {
		explicit = ic.InstanceType
	}
	p.Slot, p.SlotOK = slot(f.Attached, size, f.PerNode, explicit)
	spot := in.Spec.InstanceConfig != nil && in.Spec.InstanceConfig.SpotEnabled
	p.Scheduling = warmSlotScheduling(f.Scheduling, f.Detection.Method, spot) // disruption.go
	return p
}

// slot is one executor slot: the largest compatible executor request, or,
// when none is known and the pool's instance type is explicit (explicit is
// size's type), an equal share of a node of size. A type the pool only
// guessed (a family's smallest, say, before any QueryService attaches)
// sizes no slot: warm capacity of a guessed shape may be capacity no
// executor can use.
func slot(attached []Attachment, size *sizing.Result, perNode int32, explicit string) (sizing.Resources, bool) {
	var r sizing.Resources
	compatible := map[string]bool{}
	if size != nil {
		for _, c := range size.Compatibility {
			compatible[c.QueryService] = c.Compatible
		}
	}
	found := false
	for _, a := range attached {
		if size != nil && !compatible[a.Key()] {
			continue
		}
		ex := a.QS.Spec.Executor.Resources
		if ex.CPU != nil && ex.CPU.Cmp(r.CPU) > 0 {
			r.CPU, found = ex.CPU.DeepCopy(), true
		}
		if ex.Memory != nil && ex.Memory.Cmp(r.Memory) > 0 {
			r.Memory, found = ex.Memory.DeepCopy(), true
		}
	}
	if found && !r.CPU.IsZero() && !r.Memory.IsZero() {
		return r, true
	}
	if size == nil || size.Allocatable.CPU.IsZero() || explicit == "" || explicit != size.InstanceType {
		return r, false
	}
	cpu := resource.NewMilliQuantity(size.Allocatable.CPU.MilliValue()/int64(perNode), resource.DecimalSI)
	mem := resource.NewQuantity(size.Allocatable.Memory.Value()/int64(perNode)/(1<<20)*(1<<20), resource.BinarySI)
	return sizing.Resources{CPU: *cpu, Memory: *mem}, true
}

// autoscalerTimeout is the warmCapacity.autoscalerTimeout setting, which
// ValidateInput checked.
func autoscalerTimeout(cfg *v1beta1.Input) time.Duration {
	d, err := time.ParseDuration(cfg.WarmCapacity.AutoscalerTimeout)
	if err != nil {
		d, _ = time.ParseDuration(defaultAutoscalerTimeout)
	}
	return d
}
