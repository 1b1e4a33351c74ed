package watch

import (
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/warmup"
)

// A record is all an informer keeps of a pool pod or node: the capacity
// view of it (a *capacity.Pod or a *capacity.Node), and what the informer
// itself reads of what it stores: the namespace and name it keys it by, and
// the resource version that tells a resync from an update (client-go
// tools/cache, MetaNamespaceKeyFunc in store.go and the handlers'
// dispatch in shared_informer.go). Keeping it instead of the object, or
// even the object's metadata, makes a cache of a hundred thousand pods
// several times smaller. Nothing reads these objects back through the
// cache. A record never changes: its setters change nothing, and its other
// getters answer what a record does not keep with zero values.
type record[V any] struct {
	namespace, name, version string
	view                     V
}

// DeepCopyObject returns the record itself: it never changes, and its
// capacity view is immutable.
func (r *record[V]) DeepCopyObject() runtime.Object { return r }

// GetObjectKind returns no kind: an informer stores one kind only.
func (*record[V]) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (r *record[V]) GetNamespace() string                        { return r.namespace }
func (r *record[V]) GetName() string                             { return r.name }
func (r *record[V]) GetResourceVersion() string                  { return r.version }
func (*record[V]) GetGenerateName() string                       { return "" }
func (*record[V]) GetUID() types.UID                             { return "" }
func (*record[V]) GetGeneration() int64                          { return 0 }
func (*record[V]) GetSelfLink() string                           { return "" }
func (*record[V]) GetCreationTimestamp() metav1.Time             { return metav1.Time{} }
func (*record[V]) GetDeletionTimestamp() *metav1.Time            { return nil }
func (*record[V]) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (*record[V]) GetLabels() map[string]string                  { return nil }
func (*record[V]) GetAnnotations() map[string]string             { return nil }
func (*record[V]) GetFinalizers() []string                       { return nil }
func (*record[V]) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (*record[V]) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (*record[V]) SetNamespace(string)                           {}
func (*record[V]) SetName(string)                                {}
func (*record[V]) SetGenerateName(string)                        {}
func (*record[V]) SetUID(types.UID)                              {}
func (*record[V]) SetResourceVersion(string)                     {}
func (*record[V]) SetGeneration(int64)                           {}
func (*record[V]) SetSelfLink(string)                            {}
func (*record[V]) SetCreationTimestamp(metav1.Time)              {}
func (*record[V]) SetDeletionTimestamp(*metav1.Time)             {}
func (*record[V]) SetDeletionGracePeriodSeconds(*int64)          {}
func (*record[V]) SetLabels(map[string]string)                   {}
func (*record[V]) SetAnnotations(map[string]string)              {}
func (*record[V]) SetFinalizers([]string)                        {}
func (*record[V]) SetOwnerReferences([]metav1.OwnerReference)    {}
func (*record[V]) SetManagedFields([]metav1.ManagedFieldsEntry)  {}

// TransformPod is a cache transform that replaces a pod by a record holding
// its capacity view.
func TransformPod(obj any) (any, error) { return transform(obj, Pod) }

// TransformNode is a cache transform that replaces a node by a record
// holding its capacity view.
func TransformNode(obj any) (any, error) { return transform(obj, Node) }

// transform replaces an object of type O by a record holding view of it, and
// leaves anything else (a record already) as it is.
func transform[O metav1.Object, V any](obj any, view func(O) V) (any, error) {
	if o, ok := obj.(O); ok {
		return &record[V]{namespace: intern(o.GetNamespace()), name: o.GetName(), version: o.GetResourceVersion(), view: view(o)}, nil
	}
	return obj, nil
}

// maxInterned bounds how many strings the intern table holds. Once it
// would hold more it forgets them all, as a sharedTable does, so that
// names no object carries any longer (nodes replaced, pods that each carry
// a label value of their own) do not accumulate; objects keep the strings
// they were given.
const maxInterned = 1 << 16

// interned holds the canonical copy of each string intern was given.
// unique.Make did this before: each string it first meets costs it a weak
// pointer and a cleanup, tens of microseconds when a start meets ten
// thousand node names at once (BenchmarkIntern).
var interned = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// intern returns the canonical copy of s, so that the label keys and values
// that thousands of pods repeat are stored once.
func intern(s string) string {
	if s == "" {
		return ""
	}
	interned.Lock()
	defer interned.Unlock()
	if c, ok := interned.m[s]; ok {
		return c
	}
	if len(interned.m) >= maxInterned {
		clear(interned.m)
	}
	c := strings.Clone(s)
	interned.m[c] = c
	return c
}

func internLabels(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[intern(k)] = intern(v)
	}
	return out
}

// Pod returns the capacity view of a pod.
func Pod(p *corev1.Pod) *capacity.Pod {
	out := &capacity.Pod{
		Namespace: intern(p.Namespace),
		Name:      p.Name,
		UID:       string(p.UID),
		Pool:      intern(p.Labels[qsv1alpha1.LabelPool]),
		Labels:    sharedLabels(p.Labels),
		Image:     intern(p.Annotations[warmup.AnnotationImage]),
		NodeName:  intern(p.Spec.NodeName),
		State:     state(p),
		Reason:    p.Status.Reason,
		Message:   p.Status.Message,
		Started:   p.CreationTimestamp.Time,
		Created:   p.CreationTimestamp.Time,
		Running:   running(p),

		ResourceVersion: p.ResourceVersion,
	}
	if p.Status.StartTime != nil {
		out.Started = p.Status.StartTime.Time
	}
	if p.DeletionTimestamp != nil {
		out.DeletedAt = p.DeletionTimestamp.Time
	}
	for _, c := range p.Status.Conditions {
		if c.LastTransitionTime.After(out.Transitioned) {
			out.Transitioned = c.LastTransitionTime.Time
		}
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			out.Disruption = &capacity.Disruption{Reason: c.Reason, Message: c.Message, At: c.LastTransitionTime.Time}
		}
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			out.Unschedulable = true
		}
	}
	if p.Spec.NodeName == "" && out.State == capacity.PodPending {
		out.Aim = aim(&p.Spec)
	}
	out.CPUMillis, out.MemoryBytes = requests(p)
	for _, g := range p.Spec.SchedulingGates {
		out.Gates = append(out.Gates, intern(g.Name))
	}
	if o := metav1.GetControllerOf(p); o != nil {
		out.Owner = intern(o.Kind + "/" + o.Name)
	}
	n := len(p.Status.InitContainerStatuses) + len(p.Status.ContainerStatuses)
	if n > 0 {
		out.Containers = make([]capacity.Container, 0, n)
		for _, c := range p.Status.InitContainerStatuses {
			out.Containers = append(out.Containers, container(c, true))
		}
		for _, c := range p.Status.ContainerStatuses {
			out.Containers = append(out.Containers, container(c, false))
		}
		out.Containers = sharedContainers(out.Containers)
	}
	return out
}

// aim returns which nodes a pod asks for: its node selector, its required
// node affinity and its tolerations, with interned strings, and the one
// copy of them that every pod asking for the same (the executors of one
// template) shares.
func aim(spec *corev1.PodSpec) *capacity.Aim {
	a := &capacity.Aim{NodeSelector: internLabels(spec.NodeSelector)}
	if na := spec.Affinity; na != nil && na.NodeAffinity != nil && na.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms := na.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		a.Affinity = make([]capacity.Term, 0, len(terms))
		for _, t := range terms {
			term := make(capacity.Term, 0, len(t.MatchExpressions)+len(t.MatchFields))
			for _, r := range t.MatchExpressions {
				term = append(term, requirement(r, false))
			}
			for _, r := range t.MatchFields {
				term = append(term, requirement(r, true))
			}
			a.Affinity = append(a.Affinity, term)
		}
	}
	if len(spec.Tolerations) > 0 {
		a.Tolerations = make([]corev1.Toleration, 0, len(spec.Tolerations))
		for _, t := range spec.Tolerations {
			tol := corev1.Toleration{Key: intern(t.Key), Operator: corev1.TolerationOperator(intern(string(t.Operator))),
				Value: intern(t.Value), Effect: corev1.TaintEffect(intern(string(t.Effect)))}
			if t.TolerationSeconds != nil {
				s := *t.TolerationSeconds
				tol.TolerationSeconds = &s
			}
			a.Tolerations = append(a.Tolerations, tol)
		}
	}
	return aims.intern(a)
}

func requirement(r corev1.NodeSelectorRequirement, field bool) capacity.Requirement {
	out := capacity.Requirement{Key: intern(r.Key), Operator: corev1.NodeSelectorOperator(intern(string(r.Operator))), Field: field}
	if len(r.Values) > 0 {
		out.Values = make([]string, len(r.Values))
		for i, v := range r.Values {
			out.Values[i] = intern(v)
		}
	}
	return out
}

// requests returns the CPU (in millicores) and memory (in bytes) a pod
// requests, as kube-scheduler reckons them (its NodeResourcesFit plugin
// calls the same function): its containers together, or its largest
// init container when that is more, with restartable init containers
// (sidecars) added to what runs beside them (KEP-753); its pod-level
// requests in place of its containers' where it sets them (KEP-2837,
// PodLevelResources); and its overhead. Reckoned from containers alone,
// an executor that requests only at pod level would show as requesting
// nothing.
//
// A pod with none of those (an executor, mostly) is summed here without
// the maps PodRequests builds, which would add half to its transform
// (BenchmarkPod); TestRequestsAsScheduler holds the two equal.
func requests(p *corev1.Pod) (cpu, mem int64) {
	if !plainRequests(&p.Spec) {
		reqs := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		return reqs.Cpu().MilliValue(), reqs.Memory().Value()
	}
	for _, c := range p.Spec.Containers {
		cpu += c.Resources.Requests.Cpu().MilliValue()
		mem += c.Resources.Requests.Memory().Value()
	}
	for _, c := range p.Spec.InitContainers {
		cpu = max(cpu, c.Resources.Requests.Cpu().MilliValue())
		mem = max(mem, c.Resources.Requests.Memory().Value())
	}
	return cpu, mem
}

// plainRequests reports whether what spec requests is its containers'
// sum, or its largest init container's: no pod-level requests, no
// overhead, no sidecar.
func plainRequests(spec *corev1.PodSpec) bool {
	if spec.Resources != nil && len(spec.Resources.Requests) > 0 || len(spec.Overhead) > 0 {
		return false
	}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			return false
		}
	}
	return true
}

func state(p *corev1.Pod) capacity.PodState {
	if p.DeletionTimestamp != nil {
		return capacity.PodDeleted
	}
	switch p.Status.Phase {
	case corev1.PodPending, "":
		return capacity.PodPending
	case corev1.PodRunning:
		return capacity.PodRunning
	case corev1.PodSucceeded:
		return capacity.PodSucceeded
	case corev1.PodFailed:
		return capacity.PodFailed
	default:
		return capacity.PodUnknown
	}
}

// running returns when p's containers first all ran: the latest
// state.running.startedAt of its containers while p is Running, every
// container runs and none has restarted; zero otherwise.
func running(p *corev1.Pod) time.Time {
	var at time.Time
	if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
		return at
	}
	for _, c := range p.Status.ContainerStatuses {
		r := c.State.Running
		if r == nil || c.RestartCount > 0 {
			return time.Time{}
		}
		if r.StartedAt.After(at) {
			at = r.StartedAt.Time
		}
	}
	return at
}

func container(c corev1.ContainerStatus, init bool) capacity.Container {
	out := capacity.Container{Name: intern(c.Name), Init: init, Image: intern(c.Image)}
	if w := c.State.Waiting; w != nil {
		out.WaitingReason, out.WaitingMessage = w.Reason, w.Message
	}
	out.Terminated = termination(c.State.Terminated)
	out.LastTerminated = termination(c.LastTerminationState.Terminated)
	return out
}

func termination(t *corev1.ContainerStateTerminated) *capacity.Termination {
	if t == nil {
		return nil
	}
	return &capacity.Termination{Reason: t.Reason, ExitCode: t.ExitCode, Message: t.Message, FinishedAt: t.FinishedAt.Time}
}

// Node returns the capacity view of a node.
func Node(n *corev1.Node) *capacity.Node {
	out := &capacity.Node{
		Name:        intern(n.Name),
		Created:     n.CreationTimestamp.Time,
		Pool:        intern(n.Labels[qsv1alpha1.LabelPool]),
		Labels:      internLabels(n.Labels),
		Deleting:    n.DeletionTimestamp != nil,
		Schedulable: !n.Spec.Unschedulable,

		ResourceVersion: n.ResourceVersion,

		AllocatableCPUMillis:   n.Status.Allocatable.Cpu().MilliValue(),
		AllocatableMemoryBytes: n.Status.Allocatable.Memory().Value(),
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Ready = c.Status == corev1.ConditionTrue
		}
	}
	out.Cordoned = n.Spec.Unschedulable
	for _, t := range n.Spec.Taints {
		if !blocksScheduling(t) {
			continue
		}
		out.Schedulable = false
		if drains(t) {
			// Being drained or disrupted: no toleration makes it a slot.
			out.Cordoned = true
			continue
		}
		out.Taints = append(out.Taints, capacity.Taint{Key: intern(t.Key), Value: intern(t.Value), Effect: string(t.Effect)})
	}
	return out
}

// drains reports whether a taint is Kubernetes' or Karpenter's own, put on
// nodes on their way out (disruption, shutdown, out of service).
func drains(t corev1.Taint) bool {
	domain, _, _ := strings.Cut(t.Key, "/")
	return domain == "karpenter.sh" || domain == "node.kubernetes.io" || domain == "node.cloudprovider.kubernetes.io"
}

// blocksScheduling reports whether a taint keeps executors off a node. The
// pool's own taints (its name and its namespace) do not: pool executors
// tolerate them. Nor do the taints
// that mirror the Ready condition, which Ready already accounts for and
// which trail it (the API server adds not-ready to every new node).
func blocksScheduling(t corev1.Taint) bool {
	switch t.Key {
	case qsv1alpha1.TaintPool, qsv1alpha1.TaintPoolNamespace, corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable:
		return false
	}
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}
