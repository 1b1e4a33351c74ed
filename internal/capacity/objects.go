package capacity

import (
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
)

// PodState is the closed set of states a pod can be in, as the snapshot sees
// it.
type PodState uint8

// Pod states. Deleted means the pod is terminating: it carries a deletion
// timestamp, whatever its phase.
const (
	PodPending PodState = iota
	PodRunning
	PodSucceeded
	PodFailed
	PodUnknown
	PodDeleted
)

// String returns the state's name.
func (s PodState) String() string {
	switch s {
	case PodPending:
		return "Pending"
	case PodRunning:
		return "Running"
	case PodSucceeded:
		return "Succeeded"
	case PodFailed:
		return "Failed"
	case PodDeleted:
		return "Deleted"
	default:
		return "Unknown"
	}
}

// PodKey identifies a pod.
type PodKey struct {
	Namespace string
	Name      string
}

// String returns namespace/name.
func (k PodKey) String() string { return k.Namespace + "/" + k.Name }

// Termination is a container's terminated state.
type Termination struct {
	Reason     string
	ExitCode   int32
	Message    string
	FinishedAt time.Time
}

// Container is the part of a container status the core reads.
type Container struct {
	Name  string
	Init  bool
	Image string

	// WaitingReason and WaitingMessage come from state.waiting.
	WaitingReason  string
	WaitingMessage string

	// Terminated is state.terminated; LastTerminated is lastState.terminated.
	Terminated     *Termination
	LastTerminated *Termination
}

// Pod is the part of a pod the core reads. A Pod in a snapshot is never
// modified; updates replace it.
type Pod struct {
	Namespace string
	Name      string
	UID       string

	// Pool is the value of the pod's pool label; the snapshot groups by it.
	Pool   string
	Labels map[string]string

	// Image is the e6data.io/image annotation (warmup pods name the image
	// they warm there).
	Image string

	NodeName string
	State    PodState

	// Reason and Message are status.reason and status.message, for example
	// Evicted or NodeLost.
	Reason  string
	Message string

	// Started is status.startTime, or the creation time before the pod
	// started.
	Started time.Time

	// Created is metadata.creationTimestamp.
	Created time.Time

	// Running is when the pod's containers first all ran: the latest
	// state.running.startedAt of its containers, while the pod is Running
	// and none of them has restarted (a restart moves startedAt, and the
	// first start is then no longer in the status). Zero otherwise.
	Running time.Time

	// Transitioned is the latest lastTransitionTime of the pod's
	// conditions: when its status last changed in a way the kubelet or the
	// scheduler records. It dates failures whose containers carry no finish
	// time (image pulls, evictions), from the pod alone.
	Transitioned time.Time

	// DeletedAt is the deletion timestamp of a terminating pod.
	DeletedAt time.Time

	// Disruption is the pod's DisruptionTarget condition, when it is True:
	// the pod is being removed by preemption, an eviction (a node drain) or
	// the taint manager.
	Disruption *Disruption

	// CPUMillis and MemoryBytes are what the pod requests, as the
	// scheduler reckons it (containers, sidecars, pod-level requests,
	// overhead).
	CPUMillis   int64
	MemoryBytes int64

	// ResourceVersion is the version of the pod the view was made from.
	ResourceVersion string

	// Owner is the pod's controller, as kind/name (ReplicaSet/sales-exec-7d9f),
	// or empty.
	Owner string

	// Unschedulable is true while the scheduler finds no node with room
	// for the pod: its PodScheduled condition is False with reason
	// Unschedulable. A pod held by scheduling gates (reason
	// SchedulingGated) or not yet tried by the scheduler is not.
	Unschedulable bool

	// Aim is which nodes an unbound pod asks for; nil once it is bound.
	Aim *Aim

	// Gates are the names of the pod's scheduling gates: while it has any,
	// the scheduler does not try it, and no autoscaler provisions for it.
	Gates []string

	Containers []Container
}

// A Disruption is why a pod is being removed from its node.
type Disruption struct {
	Reason  string
	Message string
	At      time.Time
}

// An Aim is what of a pod's spec decides which nodes it may go to. Pods
// that ask for the same nodes may share one Aim, so it is never modified.
type Aim struct {
	// NodeSelector is spec.nodeSelector.
	NodeSelector map[string]string
	// Affinity is the required node affinity (requiredDuringScheduling
	// IgnoredDuringExecution): its terms, of which one must hold; nil when
	// the pod requires none.
	Affinity    []Term
	Tolerations []corev1.Toleration
}

// A Term is a node selector term: every requirement holds of a node it
// matches, and a term without requirements matches none.
type Term []Requirement

// A Requirement is a node selector requirement on a node label, or, from
// matchFields, on a node field (Field; only metadata.name exists).
type Requirement struct {
	Key      string
	Operator corev1.NodeSelectorOperator
	Values   []string
	Field    bool
}

// Key returns the pod's key.
func (p *Pod) Key() PodKey { return PodKey{Namespace: p.Namespace, Name: p.Name} }

// Node is the part of a node the core reads.
type Node struct {
	Name string

	// Created is metadata.creationTimestamp: when the node object was
	// registered, which for a node launched on demand is after the pod it
	// was launched for.
	Created time.Time

	// Pool is the value of the node's pool label.
	Pool   string
	Labels map[string]string

	// Ready is the Ready condition.
	Ready bool
	// Schedulable is false when the node is cordoned or carries a NoSchedule
	// or NoExecute taint other than the pool's own taint.
	Schedulable bool
	// Cordoned is spec.unschedulable; Taints are the NoSchedule and
	// NoExecute taints that made the node not Schedulable, which a pool's
	// executors may tolerate.
	Cordoned bool
	Taints   []Taint
	// Deleting is true when the node carries a deletion timestamp.
	Deleting bool

	// AllocatableCPUMillis and AllocatableMemoryBytes are
	// status.allocatable: what pods may request on the node. Zero when the
	// node reports none.
	AllocatableCPUMillis   int64
	AllocatableMemoryBytes int64

	// ResourceVersion is the version of the node the view was made from.
	ResourceVersion string
}

// Taint is a node taint that keeps pods off the node.
type Taint struct {
	Key, Value, Effect string
}

// tolerated reports whether tolerations tolerate every taint of ts.
func tolerated(tolerations []corev1.Toleration, ts []Taint) bool {
	for _, t := range ts {
		ok := false
		for _, tol := range tolerations {
			if tolerates(tol, t) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// tolerates is Kubernetes' toleration matching for one taint.
func tolerates(tol corev1.Toleration, t Taint) bool {
	if tol.Effect != "" && string(tol.Effect) != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual, "":
		return tol.Key != "" && tol.Value == t.Value
	}
	return false
}

// aims reports whether an unbound pod asks for the pool's nodes: every
// node it may go to carries the pool's node selector (its node selector
// holds it, or each of its required node-affinity terms pins the missing
// labels with a single-valued In), and it tolerates every taint the pool's
// executors are given tolerations for (PoolCapacity
// spec.forProvider.tolerations, the Pool's status.executorScheduling).
// Whether a pool node would take it is placer's to say.
func aims(spec v1alpha1.PoolCapacityParameters, a *Aim) bool {
	if a == nil {
		return false
	}
	for k, v := range spec.NodeSelector {
		got, ok := a.NodeSelector[k]
		switch {
		case ok && got != v:
			return false
		case ok:
		case len(a.Affinity) == 0 || slices.ContainsFunc(a.Affinity, func(t Term) bool { return !t.pins(k, v) }):
			return false
		}
	}
	taints := make([]Taint, 0, len(spec.Tolerations))
	for _, tol := range spec.Tolerations {
		if tol.Key == "" {
			continue
		}
		t := Taint{Key: tol.Key, Value: tol.Value, Effect: string(tol.Effect)}
		if t.Effect == "" {
			t.Effect = string(corev1.TaintEffectNoSchedule)
		}
		taints = append(taints, t)
	}
	return tolerated(a.Tolerations, taints)
}

// Matches reports whether labels carry every key and value of sel, as a
// selector of equalities matches.
func Matches(sel, labels map[string]string) bool { return matches(sel, labels) }

// matches reports whether labels carry every key and value of sel.
func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// firstByPod sorts list by the namespace and name of its pods and keeps
// the first limit; the count counts them all.
func firstByPod[T any](list []T, limit int, key func(T) PodKey) ([]T, int32) {
	sort.Slice(list, func(i, j int) bool {
		a, b := key(list[i]), key(list[j])
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	n := int32(len(list))
	if len(list) > limit {
		list = list[:limit]
	}
	return list, n
}
