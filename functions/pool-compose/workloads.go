package main

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/internal/warmup"
)

// Scheduling is where the pool's own pods go: the node selector of pool
// nodes and the tolerations of their taints. Every pod the function emits
// uses it.
type Scheduling struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// affinity pins pods to pool nodes with a required node affinity that
// repeats the node selector, so a scheduler extension that ignores
// nodeSelector still keeps them there.
func (s Scheduling) affinity() *corev1.Affinity {
	if len(s.NodeSelector) == 0 {
		return nil
	}
	var exprs []corev1.NodeSelectorRequirement
	for _, k := range slices.Sorted(maps.Keys(s.NodeSelector)) {
		exprs = append(exprs, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{s.NodeSelector[k]}})
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}},
		},
	}}
}

// PriorityClass returns the low priority that placeholders run at: it never
// preempts anything, and every real executor preempts it.
func PriorityClass(name, pool, ns string, value int32) *unstructured.Unstructured {
	return priorityClass(name, pool, ns, value, corev1.PreemptNever,
		"burstpool placeholders that hold warm executor slots of pool "+pool+"; executors preempt them.")
}

// priorityClass is a pool's PriorityClass.
func priorityClass(name, pool, ns string, value int32, policy corev1.PreemptionPolicy, description string) *unstructured.Unstructured {
	pc := &schedulingv1.PriorityClass{
		TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
		ObjectMeta:       metav1.ObjectMeta{Name: name, Labels: nodeIdentity(pool, ns)},
		Value:            value,
		PreemptionPolicy: ptr.To(policy),
		Description:      description,
	}
	return toUnstructured(pc)
}

// PlaceholderArgs is what the placeholder Deployment is made of.
type PlaceholderArgs struct {
	Pool, Namespace   string
	Replicas          int32
	Slot              sizing.Resources
	Image             string
	PriorityClassName string
	Scheduling        Scheduling
	// Spread keeps placeholders one per node (required pod anti-affinity
	// on the hostname), for pools of one executor per node: each warm slot
	// is then a warm node.
	Spread bool
}

// Placeholder returns the Deployment whose pods each hold one executor slot
// on pool nodes: Karpenter keeps nodes for them, and a real executor
// preempts one to take its place.
func Placeholder(a PlaceholderArgs) *unstructured.Unstructured {
	sel, labels := componentLabels(a.Pool, a.Namespace, qsv1alpha1.ComponentPlaceholder)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: a.Pool + sfxPlaceholder, Namespace: a.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(a.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: placeholderPod(a),
		},
	}
	// Created gated, so no autoscaler launches a node for a placeholder
	// the pool is giving back; the capacity provider releases it while the
	// pool wants the slot (PoolCapacity spec.forProvider.warmSlots). A
	// CapacityBuffer's PodTemplate is not gated: an autoscaler provisions
	// for the buffer itself.
	d.Spec.Template.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: qsv1alpha1.GateWarmSlot}}
	return toUnstructured(d)
}

// placeholderPod is one warm slot as a pod: a pause container that
// requests the slot, on pool nodes, at the placeholders' priority. The
// placeholder Deployment runs it; a CapacityBuffer's PodTemplate declares
// it as the shape of one buffer chunk.
func placeholderPod(a PlaceholderArgs) corev1.PodTemplateSpec {
	_, labels := componentLabels(a.Pool, a.Namespace, qsv1alpha1.ComponentPlaceholder)
	rl := corev1.ResourceList{corev1.ResourceCPU: a.Slot.CPU, corev1.ResourceMemory: a.Slot.Memory}
	affinity := a.Scheduling.affinity()
	if a.Spread {
		if affinity == nil {
			affinity = &corev1.Affinity{}
		}
		affinity.PodAntiAffinity = &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: withIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelComponent, qsv1alpha1.ComponentPlaceholder)},
				TopologyKey:   labelHostname,
			}},
		}
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			PriorityClassName:             a.PriorityClassName,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			NodeSelector:                  maps.Clone(a.Scheduling.NodeSelector),
			Affinity:                      affinity,
			Tolerations:                   a.Scheduling.Tolerations,
			SecurityContext:               restricted(),
			Containers: []corev1.Container{{
				Name:            "pause",
				Image:           a.Image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Resources:       corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()},
				SecurityContext: containerSecurity(),
			}},
		},
	}
}

// StorageAgentArgs is what the storage agent DaemonSet is made of.
type StorageAgentArgs struct {
	Pool, Namespace string
	Image           string
	Resources       sizing.Resources
	Scheduling      Scheduling
	// PriorityClassName is the agent pods' priority class.
	PriorityClassName string
}

// storageAgentDefaults are the agent's requests when the Pool sets none.
var storageAgentDefaults = sizing.Resources{CPU: resource.MustParse("100m"), Memory: resource.MustParse("256Mi")}

// StorageAgent returns the DaemonSet that runs the storage agent on every
// pool node. Its pods are hardened as the warmup pods are: no service
// account token, no service links, the restricted Pod Security profile
// (non-root, RuntimeDefault seccomp, no privilege escalation, no
// capabilities). The one exception is a writable root filesystem: the
// agent's job (a cache, for example) is to write, and the Pool offers it no
// volume to write to. It gets no host path and no privileges, so an agent
// that needs the node's disks or devices is the platform's to deploy.
func StorageAgent(a StorageAgentArgs) *unstructured.Unstructured {
	sel, labels := componentLabels(a.Pool, a.Namespace, qsv1alpha1.ComponentStorageAgent)
	rl := corev1.ResourceList{corev1.ResourceCPU: a.Resources.CPU, corev1.ResourceMemory: a.Resources.Memory}
	ds := &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: a.Pool + sfxStorageAgent, Namespace: a.Namespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					NodeSelector:                 maps.Clone(a.Scheduling.NodeSelector),
					Affinity:                     a.Scheduling.affinity(),
					Tolerations:                  append(slices.Clone(a.Scheduling.Tolerations), warmup.WarmingToleration(a.Pool)),
					SecurityContext:              restricted(),
					PriorityClassName:            a.PriorityClassName,
					Containers: []corev1.Container{{
						Name:            "agent",
						Image:           a.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Resources:       corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()},
						SecurityContext: writableRoot(containerSecurity()),
					}},
				},
			},
		},
	}
	return toUnstructured(ds)
}

// componentLabels are the selector of a pool component's pods and the
// labels of the component and its pods.
func componentLabels(pool, ns, component string) (selector, labels map[string]string) {
	selector = map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelComponent: component}
	labels = maps.Clone(selector)
	maps.Copy(labels, nodeIdentity(pool, ns))
	return selector, labels
}

// restricted is the pod security context of the Kubernetes restricted
// profile.
func restricted() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](65532),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// containerSecurity is the container security context of the restricted
// profile.
func containerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// writableRoot is sc with a writable root filesystem.
func writableRoot(sc *corev1.SecurityContext) *corev1.SecurityContext {
	sc.ReadOnlyRootFilesystem = ptr.To(false)
	return sc
}

// toUnstructured converts a typed object, leaving out the empty status and
// creationTimestamp that typed objects always carry.
func toUnstructured(o runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		// Typed Kubernetes objects always convert.
		panic(err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	// A workload's pod template sits in its spec; a PodTemplate's at the
	// top.
	for _, parent := range []any{m["spec"], m} {
		if p, ok := parent.(map[string]any); ok {
			if tmpl, ok := p["template"].(map[string]any); ok {
				if md, ok := tmpl["metadata"].(map[string]any); ok {
					delete(md, "creationTimestamp")
				}
			}
		}
	}
	return &unstructured.Unstructured{Object: m}
}
