package decision

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/sizing"
)

// StatusArgs is what the XPool's status is decided from: the inputs, the
// facts and the decisions before it.
type StatusArgs struct {
	In    Input
	Facts Facts
	// Status holds what is decided before any object: the cloud and the
	// provisioning method.
	Status  poolv1alpha1.PoolStatus
	Nodes   Nodes
	Warm    WarmPlan
	Problem *Problem
	// Waiting are the desired objects the pool waits for.
	Waiting []string
	// Taken is set when another pool holds the pool's names, so it
	// composes nothing more.
	Taken bool
}

// decideStatus fills the XPool's status and conditions from the decisions
// and the observed state.
func decideStatus(a StatusArgs) (poolv1alpha1.PoolStatus, Outcome) {
	in, f := a.In, a.Facts
	var o Outcome
	st := a.Status
	st.NodePoolName, st.NodeClassName = a.Nodes.NodePoolName, a.Nodes.NodeClassName
	observedStatus(&st, in.Previous, a.Nodes.Size, currentCapacity(f))
	o.Conditions = append(o.Conditions, capacityCondition(f.Capacity, f.CapacityStale), burstsCondition(currentCapacity(f)),
		vendorVerdict(in.Observed)) // verdict.go
	st.CachedImages = a.Warm.Images
	st.Sizing = sizingStatus(in, f.ExecutorsHaveRun, a.Nodes)
	if !a.Taken {
		st.ExecutorScheduling = executorScheduling(in.Pool, in.Namespace, f.Scheduling, executorAnnotations(f.Detection.Method))
	}
	var c Condition
	st.AttachedQueryServices, c, o.Results, o.Until = reportQueryServices(in, f, a.Nodes.Size)
	o.Conditions = append(o.Conditions, c, boundedCondition(in, imagesCondition(a.Warm.Images, openedCold(f.Capacity)), a.Warm.LeftOut))
	st.Phase, st.Message = phase(PhaseInput{
		Deleting: in.Deleting, Problem: a.Problem, Suspend: in.Spec.Suspend, Karpenter: isKarpenter(f.Detection.Method),
		Capacity: f.Capacity, NodePoolNodes: nodePoolNodes(in.Observed[objects.ComposedNodePool]),
		Placeholders: observed.Number(observed.Field(in.Observed[objects.ComposedPlaceholder], "status", "replicas")),
		NoNodes:      noExistingNodes(in, f), Waiting: a.Waiting, Images: a.Warm.Images,
		Previous: in.Previous.Phase, MaxExecutors: in.Spec.MaxExecutors,
	})
	if in.Spec.Suspend {
		o.condition(CondSuspended, metav1.ConditionTrue, string(st.Phase), st.Message)
	} else {
		o.condition(CondSuspended, metav1.ConditionFalse, "NotSuspended", "")
	}
	return st, o
}

// waitingFacts are the facts of a pool that waits for its settings. A
// remote pool whose settings named its workload cluster is composed
// locally while it waits, so its PoolCapacity is read under its remote
// composed-resource name.
func waitingFacts(in Input, f Facts) Facts {
	if f.Capacity == nil && in.Observed[objects.ComposedRemoteCapacity] != nil {
		f.Capacity = observeCapacity(in.Observed[objects.ComposedRemoteCapacity])
		if f.Capacity != nil {
			f.CapacityStale = capacityStaleness(in.Observed[objects.ComposedRemoteCapacity])
		}
	}
	return f
}

// waitingStatus is the status of a pool that waits for its settings: what
// was observed and decided before stays, and the phase says what to fix.
func waitingStatus(in Input, f Facts, st poolv1alpha1.PoolStatus, p *Problem) (poolv1alpha1.PoolStatus, Outcome) {
	observedStatus(&st, in.Previous, nil, currentCapacity(f))
	st.AttachedQueryServices = in.Previous.AttachedQueryServices
	st.Sizing = in.Previous.Sizing
	st.ExecutorScheduling = in.Previous.ExecutorScheduling
	// Every object is kept as it is, and so is the warm level.
	st.WarmPolicy = in.Previous.WarmPolicy
	st.Phase, st.Message = phase(PhaseInput{Problem: p})
	return st, Outcome{Conditions: []Condition{capacityCondition(f.Capacity, f.CapacityStale), burstsCondition(currentCapacity(f))}}
}

// observedStatus fills the instance type (size's, else the previous one)
// and the capacity the PoolCapacity observed.
func observedStatus(st *poolv1alpha1.PoolStatus, prev poolv1alpha1.PoolStatus, size *sizing.Result, o *CapacityObservation) {
	if size != nil {
		st.DerivedInstanceType = size.InstanceType
		st.DerivedFrom = size.DerivedFrom
	} else {
		st.DerivedInstanceType = prev.DerivedInstanceType
		st.DerivedFrom = prev.DerivedFrom
	}
	if o != nil {
		st.TotalExecutors = o.TotalExecutors
		st.AvailableExecutors = o.AvailableExecutors
		st.OccupiedExecutors = o.OccupiedExecutors
		st.PendingExecutors = o.PendingExecutors
		st.CurrentNodes = o.Nodes.Ready
		st.Allocations = o.allocations()
		st.ExecutorFailures = o.executorFailures()
		st.UnauthorizedExecutors = o.unauthorizedExecutors()
		st.Cost = o.cost()
	}
}

// currentCapacity is what the PoolCapacity observed when it is current;
// nil when it has not reported or its figures are stale, so no status
// shows them.
func currentCapacity(f Facts) *CapacityObservation {
	if f.CapacityStale != nil {
		return nil
	}
	return f.Capacity
}

// capacityCondition says whether the PoolCapacity has reported yet, and
// whether what it reported is current.
func capacityCondition(o *CapacityObservation, stale *Staleness) Condition {
	if o != nil && stale != nil {
		c := stale.Condition
		since := stale.Since
		if since == "" {
			since = "an unknown time"
		}
		return Condition{Type: CondCapacityKnown, Status: metav1.ConditionFalse, Reason: "Stale", Message: fmt.Sprintf(
			"the PoolCapacity has not known the pool's nodes and executors to be current since %s (its %s condition is %s: %s): "+
				"the pool's executor and node counts are left out of its status until it does", since, c.Type, c.Status, conditionWords(c))}
	}
	if o != nil {
		return Condition{Type: CondCapacityKnown, Status: metav1.ConditionTrue, Reason: "Observed"}
	}
	return Condition{Type: CondCapacityKnown, Status: metav1.ConditionFalse, Reason: "NotObservedYet", Message: "the PoolCapacity has not reported the pool's nodes and executors yet"}
}

// Reasons of the BurstsUnblocked condition.
const (
	reasonNothingOverdue     = "NothingOverdue"
	reasonExecutorsGated     = "ExecutorsGatedPastBound"
	reasonNodesWarming       = "NodesWarmingPastOpenAfter"
	reasonCapacityNotCurrent = "CapacityNotCurrent"
)

// burstsCondition says whether the pool's bursts wait on the capacity
// provider past their bounds, from the PoolCapacity's
// status.atProvider.overdue: executors still at the executor gate past its
// bound first (they are what a burst waits for), then pool nodes still
// closed past warmup.openAfter. Unknown while the PoolCapacity's figures
// are not current (o is nil); its CapacityObserved condition says why.
func burstsCondition(o *CapacityObservation) Condition {
	if o == nil {
		return Condition{Type: CondBurstsUnblocked, Status: metav1.ConditionUnknown, Reason: reasonCapacityNotCurrent,
			Message: "whether executors or pool nodes wait on the capacity provider past their bounds is not known while the PoolCapacity's figures are not current: see the CapacityObserved condition"}
	}
	late := o.Overdue
	if late == nil || (late.Executors == 0 && late.Nodes == 0) {
		return Condition{Type: CondBurstsUnblocked, Status: metav1.ConditionTrue, Reason: reasonNothingOverdue}
	}
	var what, fix []string
	reason := reasonNodesWarming
	if late.Executors > 0 {
		reason = reasonExecutorsGated
		what = append(what, fmt.Sprintf("%d executor(s) still carry the scheduling gate %s well past the bound at which the capacity provider releases them",
			late.Executors, qsv1alpha1.GateExecutor))
		fix = append(fix, "delete the pool's ExecutorGate and remove the gate from each waiting executor (docs/capacity.md, If the provider stops)")
	}
	if late.Nodes > 0 {
		nodes := strings.Join(late.NodeNames, ", ")
		if more := int(late.Nodes) - len(late.NodeNames); more > 0 {
			nodes += fmt.Sprintf(" and %d more", more)
		}
		what = append(what, fmt.Sprintf("%d pool node(s) still carry the startup taint %s well past warmup.openAfter: %s", late.Nodes, qsv1alpha1.TaintWarming, nodes))
		fix = append(fix, fmt.Sprintf("open each node with kubectl taint node <node> %s-", qsv1alpha1.TaintWarming))
	}
	return Condition{Type: CondBurstsUnblocked, Status: metav1.ConditionFalse, Reason: reason, Message: strings.Join(what, "; ") +
		": check that the capacity provider runs and one replica holds its Lease provider-burstpool-capacity, and the PoolCapacity's Synced condition; to unblock the burst now, " +
		strings.Join(fix, ", and ")}
}

// reportQueryServices reports each QueryService the pool knows of, with
// an event for each that newly became incompatible, and whether the
// attached ones fit the pool's nodes. until is in.Now when a report was
// checked now (its lastChecked is the clock's reading, not the previous
// report's), else the zero time: the reports hold at any later time.
func reportQueryServices(in Input, f Facts, size *sizing.Result) (_ []poolv1alpha1.AttachedQueryService, _ Condition, _ []Result, until time.Time) {
	var compat map[string]sizing.Compatibility
	if size != nil {
		compat = make(map[string]sizing.Compatibility, len(size.Compatibility))
		for _, c := range size.Compatibility {
			compat[c.QueryService] = c
		}
	}
	// Indexes, not copies: a pool may report a thousand.
	prevAt := make(map[string]int, len(in.Previous.AttachedQueryServices))
	for i, q := range in.Previous.AttachedQueryServices {
		prevAt[q.QueryService.Namespace+"/"+q.QueryService.Name] = i
	}
	prev := func(key string) (poolv1alpha1.AttachedQueryService, bool) {
		i, ok := prevAt[key]
		if !ok {
			return poolv1alpha1.AttachedQueryService{}, false
		}
		return in.Previous.AttachedQueryServices[i], true
	}
	now := metav1.NewTime(in.Now.UTC().Truncate(1e9))
	shares := shares(in, f.Attached)
	var (
		incompatible []string
		events       []Result
	)
	out := make([]poolv1alpha1.AttachedQueryService, 0, len(f.Attachments))
	for _, a := range f.Attachments {
		key := a.Key()
		q := poolv1alpha1.AttachedQueryService{
			QueryService: poolv1alpha1.QueryServiceReference{Name: a.Name, Namespace: a.Namespace},
			Attached:     a.Attached, Message: a.Reason, LastChecked: &now,
			MaxPoolExecutors: shares[a.Key()],
		}
		c, ok := compat[key]
		ok = ok && a.Attached
		// Only a QueryService that points here, from a namespace the
		// settings let the pool attach, has both sides' consent to the
		// pool showing its size.
		if a.QS != nil && a.PointsHere && a.Consented && !ok {
			r := a.QS.Spec.Executor.Resources
			if r.CPU != nil {
				q.RequiredCPU = r.CPU.String()
			}
			if r.Memory != nil {
				q.RequiredMemory = r.Memory.String()
			}
		}
		if ok {
			q.Compatible, q.InstanceType, q.Message = c.Compatible, c.InstanceType, c.Message
			q.RequiredCPU, q.RequiredMemory = c.RequiredCPU.String(), c.RequiredMemory.String()
			if !c.Compatible {
				incompatible = append(incompatible, key)
				if p, seen := prev(key); !seen || p.Compatible || !p.Attached {
					events = append(events, Result{Warning: true, Reason: "QueryServiceIncompatible", Message: fmt.Sprintf("QueryService %s does not fit the pool's %s nodes: %s", key, c.InstanceType, c.Message)})
				}
			}
		}
		if p, seen := prev(key); seen && p.LastChecked != nil && p == withChecked(q, p.LastChecked) {
			q.LastChecked = p.LastChecked
		}
		if q.LastChecked == &now {
			until = in.Now
		}
		out = append(out, q)
	}
	switch {
	case len(incompatible) > 0:
		return out, Condition{Type: CondCompatible, Status: metav1.ConditionFalse, Reason: "Incompatible", Message: fmt.Sprintf("executors of %s do not fit the pool's nodes: see status.attachedQueryServices", strings.Join(incompatible, ", "))}, events, until
	case len(f.Attached) == 0:
		return out, Condition{Type: CondCompatible, Status: metav1.ConditionFalse, Reason: "NoneAttached", Message: "no QueryService is attached: allow one and set its spec.executor.poolRef to this pool"}, events, until
	}
	return out, Condition{Type: CondCompatible, Status: metav1.ConditionTrue, Reason: "AllCompatible"}, events, until
}

// withChecked returns q with LastChecked replaced, to compare reports.
func withChecked(q poolv1alpha1.AttachedQueryService, t *metav1.Time) poolv1alpha1.AttachedQueryService {
	q.LastChecked = t
	return q
}

// openedCold are the pool nodes the capacity provider opened to executors
// at warmup.openAfter before their images were warm.
func openedCold(c *CapacityObservation) []capv1alpha1.ColdNode {
	if c == nil {
		return nil
	}
	return c.OpenedCold
}

// imagesCondition summarizes warmup: images that fail, then images still
// warming, then nodes opened before their images were warm.
func imagesCondition(images []poolv1alpha1.CachedImage, cold []capv1alpha1.ColdNode) Condition {
	var pending, failed []string
	for _, img := range images {
		switch img.WarmupStatus {
		case poolv1alpha1.WarmupFailed:
			failed = append(failed, img.Image+": "+img.Message)
		case poolv1alpha1.WarmupPending:
			pending = append(pending, img.Image)
		}
	}
	switch {
	case len(failed) > 0:
		return Condition{Type: CondImagesWarm, Status: metav1.ConditionFalse, Reason: "WarmupFailed", Message: "cannot warm " + strings.Join(failed, "; ")}
	case len(pending) > 0:
		return Condition{Type: CondImagesWarm, Status: metav1.ConditionFalse, Reason: "WarmupPending", Message: "warming " + strings.Join(pending, ", ")}
	case len(cold) > 0:
		nodes := make([]string, 0, len(cold))
		for _, n := range cold {
			nodes = append(nodes, fmt.Sprintf("%s (without %s)", n.Node, strings.Join(n.Images, ", ")))
		}
		return Condition{Type: CondImagesWarm, Status: metav1.ConditionFalse, Reason: "NodesOpenedCold",
			Message: "pool nodes took executors after warmup.openAfter before their images were warm, so those executors pull first: " + strings.Join(nodes, "; ") +
				"; see the warmup pods on them, or raise warmup.openAfter in the EnvironmentConfig"}
	case len(images) == 0:
		return Condition{Type: CondImagesWarm, Status: metav1.ConditionTrue, Reason: "NoImages", Message: "the warm set is empty"}
	}
	return Condition{Type: CondImagesWarm, Status: metav1.ConditionTrue, Reason: "AllWarm"}
}

// PhaseInput is what the pool's phase is derived from.
type PhaseInput struct {
	Deleting bool
	// Problem is the pool's problem; nil when it has none.
	Problem   *Problem
	Suspend   bool
	Karpenter bool
	// Capacity is what the PoolCapacity observed; nil before it reports.
	Capacity *CapacityObservation
	// NodePoolNodes are the nodes the observed NodePool counts, for a
	// suspended Karpenter pool before the PoolCapacity reports.
	NodePoolNodes int64
	// Placeholders are the observed placeholder pods.
	Placeholders int64
	// NoNodes says why a pool on existing nodes has none ("" when it
	// has).
	NoNodes string
	// Waiting are the desired objects that are not ready yet.
	Waiting []string
	Images  []poolv1alpha1.CachedImage
	// Previous is the phase the pool had.
	Previous     poolv1alpha1.PoolPhase
	MaxExecutors int32
}

// phase derives the pool's phase and its message: Deleting, then Failed or
// Pending with the problem, then Suspending until nothing of a suspended
// pool runs; Active once every object is ready and every image warm, and
// Creating (or Resuming after a suspension) until then.
func phase(p PhaseInput) (poolv1alpha1.PoolPhase, string) {
	switch {
	case p.Deleting:
		return poolv1alpha1.PhaseDeleting, "the pool is being deleted"
	case p.Problem != nil && p.Problem.Failed:
		return poolv1alpha1.PhaseFailed, p.Problem.Message
	case p.Problem != nil:
		return poolv1alpha1.PhasePending, p.Problem.Message
	case p.Suspend:
		if p.Karpenter {
			if n := presentNodes(p.Capacity, p.NodePoolNodes); n > 0 {
				return poolv1alpha1.PhaseSuspending, fmt.Sprintf("suspended: no new nodes; %d pool node(s) remain until their executors finish", n)
			}
		} else if p.Capacity == nil {
			return poolv1alpha1.PhaseSuspending, "suspended: no new executors; waiting for the PoolCapacity to report the executors still running"
		} else if e := int64(p.Capacity.OccupiedExecutors) + int64(p.Capacity.PendingExecutors); e+p.Placeholders > 0 {
			// Nodes that burstpool does not remove (existing nodes, LKE and
			// DOKS pools at their minimum) stay: the pool is suspended once
			// no executor or placeholder runs on them.
			return poolv1alpha1.PhaseSuspending, fmt.Sprintf("suspended: no new executors; %d executor(s) and %d placeholder(s) remain", e, p.Placeholders)
		}
		return poolv1alpha1.PhaseSuspended, "suspended: the pool launches no nodes; warm images are kept"
	}
	if p.NoNodes != "" {
		return poolv1alpha1.PhasePending, p.NoNodes
	}
	var warming []string
	for _, img := range p.Images {
		if img.WarmupStatus == poolv1alpha1.WarmupPending && img.UnusedSince == nil {
			warming = append(warming, "warmup of "+img.Image)
		}
	}
	active := fmt.Sprintf("the pool runs up to %d executors", p.MaxExecutors)
	switch {
	case len(p.Waiting) == 0 && len(warming) == 0:
		return poolv1alpha1.PhaseActive, active
	case len(p.Waiting) == 0 && p.Previous == poolv1alpha1.PhaseActive:
		// A new image warming does not take an active pool out of service:
		// executors run, and pull the image themselves meanwhile.
		return poolv1alpha1.PhaseActive, active + "; " + strings.Join(warming, ", ") + " in progress"
	}
	msg := "waiting for " + strings.Join(append(slices.Clone(p.Waiting), warming...), ", ")
	switch p.Previous {
	case poolv1alpha1.PhaseSuspended, poolv1alpha1.PhaseSuspending, poolv1alpha1.PhaseResuming:
		return poolv1alpha1.PhaseResuming, "resuming: " + msg
	}
	return poolv1alpha1.PhaseCreating, msg
}

// presentNodes is the number of pool nodes still up, from the PoolCapacity
// or, before it reports, the NodePool.
func presentNodes(o *CapacityObservation, nodePoolNodes int64) int64 {
	if o != nil {
		return int64(o.nodes())
	}
	return nodePoolNodes
}

// noExistingNodes says why a pool on existing nodes cannot run executors
// when the PoolCapacity sees none of its nodes, naming the nodeSelector and
// the labels it looks for; "" otherwise.
func noExistingNodes(in Input, f Facts) string {
	if !f.Static || f.Capacity == nil || f.Capacity.nodes() > 0 || len(f.Scheduling.NodeSelector) == 0 {
		return ""
	}
	sel, labels := selectorString(in.Spec.NodeSelector), labelArgs(in.Pool, in.Namespace)
	return fmt.Sprintf("no node matches spec.nodeSelector %s with the pool labels %s: create the node pool in your cloud with the label %s, then label its nodes: %s",
		sel, labels, sel, nodeCommands(in.Pool, in.Namespace, sel))
}

// executorScheduling is the pool's half of the executor contract: the
// labels, node selector and tolerations its executors need; nil while
// nothing picks the pool's nodes. Annotations are what keep an executor's
// node while it runs (executorAnnotations).
func executorScheduling(pool, ns string, sched objects.Scheduling, annotations map[string]string) *poolv1alpha1.ExecutorScheduling {
	if len(sched.NodeSelector) == 0 {
		return nil
	}
	es := &poolv1alpha1.ExecutorScheduling{
		Labels:       objects.WithIdentity(pool, ns, qsv1alpha1.LabelExecutorType, qsv1alpha1.ExecutorTypePool),
		NodeSelector: maps.Clone(sched.NodeSelector),
		Annotations:  annotations,
	}
	for _, t := range sched.Tolerations {
		es.Tolerations = append(es.Tolerations, poolv1alpha1.Toleration{
			Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: string(t.Effect), TolerationSeconds: t.TolerationSeconds,
		})
	}
	return es
}

// sizingStatus reports how the pool was sized: the lock, the architecture
// and every type its nodes may use.
func sizingStatus(in Input, executorsHaveRun bool, n Nodes) *poolv1alpha1.SizingStatus {
	sz := &poolv1alpha1.SizingStatus{ExecutorsHaveRun: executorsHaveRun}
	r := n.Size
	if r == nil {
		if p := in.Previous.Sizing; p != nil {
			sz.Architecture, sz.ArchitectureFrom = p.Architecture, p.ArchitectureFrom
		}
		if !sz.ExecutorsHaveRun && sz.Architecture == "" {
			return nil
		}
		return sz
	}
	sz.Kept, sz.ExecutorsPerNode, sz.Architecture = r.Kept, clampInt32(r.PerNode), r.Arch
	sz.ArchitectureFrom = archFrom(in.Spec, r, n.Arch)
	for _, o := range r.Offered {
		sz.InstanceTypes = append(sz.InstanceTypes, poolv1alpha1.OfferedInstanceType{Name: o.Name, ExecutorsPerNode: clampInt32(o.PerNode), Reason: o.Reason})
	}
	return sz
}

// archFrom says where the sized pool's architecture came from.
func archFrom(spec poolv1alpha1.PoolSpec, size *sizing.Result, arch archChoice) string {
	ic := spec.InstanceConfig
	switch {
	case ic != nil && ic.InstanceType != "":
		return "spec.instanceConfig.instanceType " + ic.InstanceType
	case spec.InheritNodeConfigFrom != nil:
		return "the instance type inherited from " + size.DerivedFrom
	case ic != nil && ic.InstanceFamily != "":
		return "spec.instanceConfig.instanceFamily " + ic.InstanceFamily
	}
	return arch.From
}
