package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// status fills the XPool's status and conditions from the decisions and the
// observed state.
func (s *state) status(warm WarmPlan) {
	st := &s.out.Status
	s.observedStatus()
	st.CachedImages = warm.Images
	st.Sizing = s.sizingStatus()
	st.ExecutorScheduling = s.executorScheduling()
	s.queryServices()
	s.imagesCondition(warm)
	st.Phase, st.Message = s.phase(warm)
	if s.in.Spec.Suspend {
		s.condition(CondSuspended, metav1.ConditionTrue, string(st.Phase), st.Message)
	} else {
		s.condition(CondSuspended, metav1.ConditionFalse, "NotSuspended", "")
	}
}

// waitingStatus is the status of a pool that waits for its settings: what
// was observed and decided before stays, and the phase says what to fix.
func (s *state) waitingStatus() {
	st := &s.out.Status
	s.observedStatus()
	st.AttachedQueryServices = s.in.Previous.AttachedQueryServices
	st.Sizing = s.in.Previous.Sizing
	st.ExecutorScheduling = s.in.Previous.ExecutorScheduling
	st.Phase, st.Message = s.phase(WarmPlan{})
}

// observedStatus fills the instance type and the capacity the PoolCapacity
// observed.
func (s *state) observedStatus() {
	st := &s.out.Status
	if s.size != nil {
		st.DerivedInstanceType = s.size.InstanceType
		st.DerivedFrom = s.size.DerivedFrom
	} else {
		st.DerivedInstanceType = s.in.Previous.DerivedInstanceType
		st.DerivedFrom = s.in.Previous.DerivedFrom
	}
	if o := s.capObs; o != nil {
		st.TotalExecutors = o.TotalExecutors
		st.AvailableExecutors = o.AvailableExecutors
		st.OccupiedExecutors = o.OccupiedExecutors
		st.PendingExecutors = o.PendingExecutors
		st.CurrentNodes = o.Nodes.Ready
		st.Allocations = o.allocations()
		st.ExecutorFailures = o.executorFailures()
		st.UnauthorizedExecutors = o.unauthorizedExecutors()
		s.condition(CondCapacityKnown, metav1.ConditionTrue, "Observed", "")
	} else {
		s.condition(CondCapacityKnown, metav1.ConditionFalse, "NotObservedYet", "the PoolCapacity has not reported the pool's nodes and executors yet")
	}
}

// queryServices reports each QueryService the pool knows of, and emits an
// event for each that newly became incompatible.
func (s *state) queryServices() {
	var compat map[string]Compatibility
	if s.size != nil {
		compat = make(map[string]Compatibility, len(s.size.Compatibility))
		for _, c := range s.size.Compatibility {
			compat[c.QueryService] = c
		}
	}
	// Indexes, not copies: a pool may report a thousand.
	prevAt := make(map[string]int, len(s.in.Previous.AttachedQueryServices))
	for i, q := range s.in.Previous.AttachedQueryServices {
		prevAt[q.QueryService.Namespace+"/"+q.QueryService.Name] = i
	}
	prev := func(key string) (poolv1alpha1.AttachedQueryService, bool) {
		i, ok := prevAt[key]
		if !ok {
			return poolv1alpha1.AttachedQueryService{}, false
		}
		return s.in.Previous.AttachedQueryServices[i], true
	}
	now := metav1.NewTime(s.in.Now.UTC().Truncate(1e9))
	shares := s.shares()
	var incompatible []string
	s.out.Status.AttachedQueryServices = make([]poolv1alpha1.AttachedQueryService, 0, len(s.atts))
	for _, a := range s.atts {
		key := a.Key()
		q := poolv1alpha1.AttachedQueryService{
			QueryService: poolv1alpha1.QueryServiceReference{Name: a.Name, Namespace: a.Namespace},
			Attached:     a.Attached, Message: a.Reason, LastChecked: &now,
			MaxPoolExecutors: shares[a.Key()],
		}
		c, ok := compat[key]
		ok = ok && a.Attached
		if a.QS != nil && (!ok || c.RequiredCPU == "") {
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
			if c.RequiredCPU != "" {
				q.RequiredCPU, q.RequiredMemory = c.RequiredCPU, c.RequiredMemory
			}
			if !c.Compatible {
				incompatible = append(incompatible, key)
				if p, seen := prev(key); !seen || p.Compatible || !p.Attached {
					s.event(true, "QueryServiceIncompatible", fmt.Sprintf("QueryService %s does not fit the pool's %s nodes: %s", key, c.InstanceType, c.Message))
				}
			}
		}
		if p, seen := prev(key); seen && p.LastChecked != nil && p == withChecked(q, p.LastChecked) {
			q.LastChecked = p.LastChecked
		}
		s.out.Status.AttachedQueryServices = append(s.out.Status.AttachedQueryServices, q)
	}
	switch {
	case len(incompatible) > 0:
		s.condition(CondCompatible, metav1.ConditionFalse, "Incompatible", fmt.Sprintf("executors of %s do not fit the pool's nodes: see status.attachedQueryServices", strings.Join(incompatible, ", ")))
	case len(s.attached()) == 0:
		s.condition(CondCompatible, metav1.ConditionFalse, "NoneAttached", "no QueryService is attached: allow one and set its spec.executor.poolRef to this pool")
	default:
		s.condition(CondCompatible, metav1.ConditionTrue, "AllCompatible", "")
	}
}

// withChecked returns q with LastChecked replaced, to compare reports.
func withChecked(q poolv1alpha1.AttachedQueryService, t *metav1.Time) poolv1alpha1.AttachedQueryService {
	q.LastChecked = t
	return q
}

// imagesCondition summarizes warmup.
func (s *state) imagesCondition(warm WarmPlan) {
	var pending, failed []string
	for _, img := range warm.Images {
		switch img.WarmupStatus {
		case poolv1alpha1.WarmupFailed:
			failed = append(failed, img.Image+": "+img.Message)
		case poolv1alpha1.WarmupPending:
			pending = append(pending, img.Image)
		}
	}
	switch {
	case len(failed) > 0:
		s.condition(CondImagesWarm, metav1.ConditionFalse, "WarmupFailed", "cannot warm "+strings.Join(failed, "; "))
	case len(pending) > 0:
		s.condition(CondImagesWarm, metav1.ConditionFalse, "WarmupPending", "warming "+strings.Join(pending, ", "))
	case len(warm.Images) == 0:
		s.condition(CondImagesWarm, metav1.ConditionTrue, "NoImages", "the warm set is empty")
	default:
		s.condition(CondImagesWarm, metav1.ConditionTrue, "AllWarm", "")
	}
}

// phase derives the pool's phase from the decisions and the observed
// state.
func (s *state) phase(warm WarmPlan) (poolv1alpha1.PoolPhase, string) {
	prev := s.in.Previous.Phase
	switch {
	case s.in.Deleting:
		return poolv1alpha1.PhaseDeleting, "the pool is being deleted"
	case s.failed:
		return poolv1alpha1.PhaseFailed, s.problem
	case s.problem != "":
		return poolv1alpha1.PhasePending, s.problem
	case s.in.Spec.Suspend:
		if isKarpenter(s.det.Method) {
			if n := s.presentNodes(); n > 0 {
				return poolv1alpha1.PhaseSuspending, fmt.Sprintf("suspended: no new nodes; %d pool node(s) remain until their executors finish", n)
			}
		} else if s.capObs == nil {
			return poolv1alpha1.PhaseSuspending, "suspended: no new executors; waiting for the PoolCapacity to report the executors still running"
		} else if e, p := s.remainingExecutors(); e+p > 0 {
			// Nodes that burstpool does not remove (existing nodes, LKE and
			// DOKS pools at their minimum) stay: the pool is suspended once
			// no executor or placeholder runs on them.
			return poolv1alpha1.PhaseSuspending, fmt.Sprintf("suspended: no new executors; %d executor(s) and %d placeholder(s) remain", e, p)
		}
		return poolv1alpha1.PhaseSuspended, "suspended: the pool launches no nodes; warm images are kept"
	}
	if msg := s.noExistingNodes(); msg != "" {
		return poolv1alpha1.PhasePending, msg
	}
	var warming []string
	for _, img := range warm.Images {
		if img.WarmupStatus == poolv1alpha1.WarmupPending && img.UnusedSince == nil {
			warming = append(warming, "warmup of "+img.Image)
		}
	}
	active := fmt.Sprintf("the pool runs up to %d executors", s.in.Spec.MaxExecutors)
	switch {
	case len(s.notReady) == 0 && len(warming) == 0:
		return poolv1alpha1.PhaseActive, active
	case len(s.notReady) == 0 && prev == poolv1alpha1.PhaseActive:
		// A new image warming does not take an active pool out of service:
		// executors run, and pull the image themselves meanwhile.
		return poolv1alpha1.PhaseActive, active + "; " + strings.Join(warming, ", ") + " in progress"
	}
	msg := "waiting for " + strings.Join(append(slices.Clone(s.notReady), warming...), ", ")
	if prev == poolv1alpha1.PhaseSuspended || prev == poolv1alpha1.PhaseSuspending || prev == poolv1alpha1.PhaseResuming {
		return poolv1alpha1.PhaseResuming, "resuming: " + msg
	}
	return poolv1alpha1.PhaseCreating, msg
}

// remainingExecutors is the number of pool executors (running or pending)
// and warm-slot placeholders still present.
func (s *state) remainingExecutors() (executors, placeholders int64) {
	if o := s.capObs; o != nil {
		executors = int64(o.OccupiedExecutors) + int64(o.PendingExecutors)
	}
	return executors, number(field(s.in.Observed[rnPlaceholder], "status", "replicas"))
}

// noExistingNodes says why a pool on existing nodes cannot run executors
// when the PoolCapacity sees none of its nodes, naming the nodeSelector and
// the labels it looks for; "" otherwise.
func (s *state) noExistingNodes() string {
	if !s.static() || s.capObs == nil || s.capObs.nodes() > 0 || len(s.sched.NodeSelector) == 0 {
		return ""
	}
	return fmt.Sprintf("no node matches spec.nodeSelector %s with the pool labels %s: create the node pool in your cloud with the label %s, then label its nodes: kubectl label nodes -l %s %s",
		selectorString(s.in.Spec.NodeSelector), labelArgs(s.in.Pool, s.in.Namespace), selectorString(s.in.Spec.NodeSelector),
		selectorString(s.in.Spec.NodeSelector), labelArgs(s.in.Pool, s.in.Namespace))
}

// presentNodes is the number of pool nodes still up, from the PoolCapacity
// or, before it reports, the NodePool.
func (s *state) presentNodes() int64 {
	if s.capObs != nil {
		return int64(s.capObs.nodes())
	}
	return nodePoolNodes(s.in.Observed[rnNodePool])
}

// executorScheduling is the pool's half of the executor contract: the
// labels, node selector and tolerations its executors need; nil while
// nothing picks the pool's nodes or the pool composes nothing.
func (s *state) executorScheduling() *poolv1alpha1.ExecutorScheduling {
	if len(s.sched.NodeSelector) == 0 || s.taken {
		return nil
	}
	es := &poolv1alpha1.ExecutorScheduling{
		Labels:       withIdentity(s.in.Pool, s.in.Namespace, qsv1alpha1.LabelExecutorType, qsv1alpha1.ExecutorTypePool),
		NodeSelector: maps.Clone(s.sched.NodeSelector),
	}
	for _, t := range s.sched.Tolerations {
		es.Tolerations = append(es.Tolerations, poolv1alpha1.Toleration{
			Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: string(t.Effect), TolerationSeconds: t.TolerationSeconds,
		})
	}
	return es
}

// sizingStatus reports how the pool was sized: the lock, the architecture
// and every type its nodes may use.
func (s *state) sizingStatus() *poolv1alpha1.SizingStatus {
	sz := &poolv1alpha1.SizingStatus{ExecutorsHaveRun: s.locked}
	if s.size == nil {
		if p := s.in.Previous.Sizing; p != nil {
			sz.Architecture, sz.ArchitectureFrom = p.Architecture, p.ArchitectureFrom
		}
		if !sz.ExecutorsHaveRun && sz.Architecture == "" {
			return nil
		}
		return sz
	}
	r := s.size
	sz.Kept, sz.ExecutorsPerNode, sz.Architecture = r.Kept, r.PerNode, r.Arch
	sz.ArchitectureFrom = s.archFrom()
	for _, o := range r.Offered {
		sz.InstanceTypes = append(sz.InstanceTypes, poolv1alpha1.OfferedInstanceType{Name: o.Name, ExecutorsPerNode: o.PerNode, Reason: o.Reason})
	}
	return sz
}

// archFrom says where the sized pool's architecture came from.
func (s *state) archFrom() string {
	ic := s.in.Spec.InstanceConfig
	switch {
	case ic != nil && ic.InstanceType != "":
		return "spec.instanceConfig.instanceType " + ic.InstanceType
	case s.in.Spec.InheritNodeConfigFrom != nil:
		return "the instance type inherited from " + s.size.DerivedFrom
	case ic != nil && ic.InstanceFamily != "":
		return "spec.instanceConfig.instanceFamily " + ic.InstanceFamily
	}
	return s.arch.From
}
