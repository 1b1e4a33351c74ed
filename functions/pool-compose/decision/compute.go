package decision

import (
	"github.com/crossplane/function-sdk-go/resource"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

// establish works out the pool's facts; err says why its attachments
// cannot be decided (an invalid selector).
func establish(in Input) (Facts, error) {
	f := specFacts(in.Spec)
	f.Detection = Detect(in.Spec.Provisioning, in.Config, in.CRDs)
	f.Capacity = observeCapacity(in.Observed[objects.ComposedCapacity])
	if f.Capacity != nil {
		f.CapacityStale = capacityStaleness(in.Observed[objects.ComposedCapacity])
	}
	f.ExecutorsHaveRun = executorsHaveRun(in.Previous.Sizing, f.Capacity)
	f.Static = isStatic(in, f.Detection)
	f.Tenant = TenantOf(in.Config, in.Namespace)
	atts, err := Attach(in.Pool, in.Namespace, in.Spec, in.QueryServices, f.Tenant.MayAttachFrom)
	f.Attachments, f.Attached = atts, attached(atts)
	f.Scheduling = scheduling(in, f.Detection, f.Static)
	return f, err
}

// Compute decides everything about one pool. It reads only in (the clock is
// in.Now) and never fails: problems become the Failed or Pending phase,
// conditions and results.
//
// It establishes the pool's facts, then decides in this order, each
// decision a function of the inputs and of the decisions before it: the
// settings it waits for, what the claim asks beyond them, the warm set, whether another pool holds its
// names, its nodes (sizing, then the Karpenter NodePool and NodeClass or
// the cloud's node pool), the PoolCapacity, the placeholders, the storage
// agent, the admission policy, and last the status, which reads them all.
func Compute(in Input) Output {
	f, attachErr := establish(in)
	out := newAssembly()
	out.CountsUnknown = f.CapacityStale != nil
	if attachErr != nil {
		out.add(Outcome{Problem: failed("InvalidSelector", attachErr.Error())})
	}
	status := poolv1alpha1.PoolStatus{Cloud: f.Detection.Cloud, ProvisioningMethod: f.Detection.Method}

	// Settings it waits for, then a claim that asks beyond them: either
	// keeps every object as observed and decides nothing else.
	held := awaitSettings(in, f)
	out.add(held)
	if held.Problem == nil {
		held = refuseClaim(in, f) // tenancy (tenancy.go)
		out.add(held)
	}
	if held.Problem != nil {
		wf := waitingFacts(in, f)
		out.CountsUnknown = wf.CapacityStale != nil
		st, o := waitingStatus(in, wf, status, out.problem)
		out.Status = st
		out.add(o)
		return out.Output
	}

	// The warm level is decided first: the nodes (a CoreWeave pool's
	// target), the placeholders and the PoolCapacity read it.
	level, o := decideWarmLevel(in, f) // warm policies (warmlevel.go)
	f.WarmLevel = level.Executors
	out.add(o)

	warm, o := decideWarm(in, f)
	if t, taken := heldName(in.Pool, in.Namespace, in.Existing); taken {
		// Another namespace's pool holds the name: compose nothing more,
		// so nothing of that pool is touched, keep what this pool
		// composed already, and say so on the claim.
		o.Desired, o.Lazy, o.Ready = nil, nil, nil
		o.preserve(ownObjects(in.Pool, in.Namespace, in.Observed)...)
		out.add(o)
		out.add(Outcome{Problem: failed("NameTaken", t.Message(in.Pool, in.Namespace))})
		st, o := decideStatus(StatusArgs{In: in, Facts: f, Status: status, Warm: warm, Problem: out.problem, Taken: true})
		out.Status = st
		out.add(o)
		return out.Output
	}
	out.add(o)
	if f.Detection.Problem != "" {
		out.add(Outcome{Problem: failed("ProvisioningUnsupported", f.Detection.Problem)})
	}

	var nodes Nodes
	if out.failed() {
		out.add(Outcome{Preserve: nodeObjects})
	} else {
		nodes, o = decideNodes(in, f, len(warm.Images))
		out.add(o)
	}
	if _, decided := out.Desired[objects.ComposedNodeRole]; !decided {
		out.add(keepNodeIAM(in, f)) // node IAM (iam.go)
	}
	// The warm slots are decided before the PoolCapacity, which keeps
	// their CapacityBuffer, and their outcome added after it.
	warmSlots := in.Previous.WarmCapacity
	warmOutcome := Outcome{Preserve: []resource.Name{objects.ComposedPlaceholder, objects.ComposedPlaceholderPriorityClass, objects.ComposedBuffer, objects.ComposedBufferTemplate}}
	canHold := true
	if out.problem == nil {
		p := placeholderInput(in, f, nodes.Size)
		warmSlots, warmOutcome = decidePlaceholders(p)
		canHold = p.SlotOK && !p.Suspend
	}
	buffer := bufferOf(warmSlots, canHold)
	out.add(decideCapacity(in, f, warm.imageRefs(), buffer, level.Learned))
	out.add(warmOutcome)
	out.add(decideStorageAgent(in, f))
	out.add(decideAgentPriority(in, f, len(warm.DaemonSets)))
	out.add(decideAdmission(in, f))
	out.add(decideFollow(in.Now, in.WatchCircuit))

	st, o := decideStatus(StatusArgs{In: in, Facts: f, Status: status, Nodes: nodes, Warm: warm, Problem: out.problem, Waiting: out.waiting})
	st.WarmCapacity = warmSlots
	st.WarmPolicy = warmStatus(level, slotDollarsPerHour(in, f, nodes.Size))
	out.Status = st
	out.add(o)
	if msg := sizeWarning(in.RequestSize); msg != "" {
		out.add(Outcome{Results: []Result{{Warning: true, Reason: "RequestNearSizeLimit", Message: msg}}})
	}
	return out.Output
}
