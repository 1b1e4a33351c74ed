package objects

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/sizing"
	"github.com/burstpool/burstpool/internal/warmup"
)

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
		ObjectMeta:       metav1.ObjectMeta{Name: name, Labels: Identity(pool, ns)},
		Value:            value,
		PreemptionPolicy: ptr.To(policy),
		Description:      description,
	}
	return ToUnstructured(pc)
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
	// ReplicasOwned tells that the capacity provider owns the
	// CapacityBuffer's spec.replicas (its e6data.io/replicas-owner
	// annotation): the buffer is built without them.
	ReplicasOwned bool
}

// Placeholder returns the Deployment whose pods each hold one executor slot
// on pool nodes: Karpenter keeps nodes for them, and a real executor
// preempts one to take its place.
func Placeholder(a PlaceholderArgs) *unstructured.Unstructured {
	sel, labels := componentLabels(a.Pool, a.Namespace, qsv1alpha1.ComponentPlaceholder)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: a.Pool + SuffixPlaceholder, Namespace: a.Namespace, Labels: labels},
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
	return ToUnstructured(d)
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
				LabelSelector: &metav1.LabelSelector{MatchLabels: WithIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelComponent, qsv1alpha1.ComponentPlaceholder)},
				TopologyKey:   LabelHostname,
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

// StorageAgentDefaults are the agent's requests when the Pool sets none.
var StorageAgentDefaults = sizing.Resources{CPU: resource.MustParse("100m"), Memory: resource.MustParse("256Mi")}

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
		ObjectMeta: metav1.ObjectMeta{Name: a.Pool + SuffixStorageAgent, Namespace: a.Namespace, Labels: labels},
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
	return ToUnstructured(ds)
}

// componentLabels are the selector of a pool component's pods and the
// labels of the component and its pods.
func componentLabels(pool, ns, component string) (selector, labels map[string]string) {
	selector = map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelComponent: component}
	labels = maps.Clone(selector)
	maps.Copy(labels, Identity(pool, ns))
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

// agentPriority is the value of the PriorityClass the pool's node agents
// run at: above executors (which run above the placeholders' -10, at the
// default 0 or a class of their QueryService's), below the cluster's
// critical classes (system-cluster-critical is 2000000000) and within the
// 1000000000 user-defined classes may take.
const agentPriority = 1000000

// AgentPriorityClass returns the PriorityClass of a pool's node agents.
func AgentPriorityClass(name, pool, ns string) *unstructured.Unstructured {
	return priorityClass(name, pool, ns, agentPriority, corev1.PreemptLowerPriority,
		"burstpool node agents (warmup, storage agent) of pool "+pool+"; they preempt executors on a full node.")
}

// BufferTemplate returns the PodTemplate that declares one warm slot, the
// shape of one chunk of the pool's CapacityBuffer.
func BufferTemplate(a PlaceholderArgs) *unstructured.Unstructured {
	_, labels := componentLabels(a.Pool, a.Namespace, componentBuffer)
	t := &corev1.PodTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PodTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: a.Pool + SuffixBuffer, Namespace: a.Namespace, Labels: labels},
		Template:   placeholderPod(a),
	}
	return ToUnstructured(t)
}

// CapacityBuffer returns the pool's CapacityBuffer: a.Replicas chunks of
// its PodTemplate, which the autoscaler keeps room for on pool nodes (the
// template's node selector and tolerations). Once the capacity provider
// owns the replicas (a.ReplicasOwned), they are left out, so that
// Crossplane's server-side apply gives up its claim on them and never
// resets what the provider set.
func CapacityBuffer(a PlaceholderArgs) *unstructured.Unstructured {
	_, labels := componentLabels(a.Pool, a.Namespace, componentBuffer)
	l := make(map[string]any, len(labels))
	for k, v := range labels {
		l[k] = v
	}
	spec := map[string]any{
		"provisioningStrategy": bufferActiveCapacity,
		"podTemplateRef":       map[string]any{"name": a.Pool + SuffixBuffer},
	}
	if !a.ReplicasOwned {
		spec["replicas"] = int64(a.Replicas)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": BufferAPIVersion,
		"kind":       BufferKind,
		"metadata":   map[string]any{"name": a.Pool + SuffixBuffer, "namespace": a.Namespace, "labels": l},
		"spec":       spec,
	}}
}

// componentBuffer labels the pool's CapacityBuffer and PodTemplate.
const componentBuffer = "capacity-buffer"

// The CapacityBuffer API (karpenter v1.14.1
// pkg/apis/crds/autoscaling.x-k8s.io_capacitybuffers.yaml, which serves
// v1beta1; pkg/apis/autoscaling/v1beta1/constants.go, which mirrors the
// Cluster Autoscaler's cluster-autoscaler/capacitybuffer/constants.go).
const (
	BufferVersion    = "v1beta1"
	BufferAPIVersion = "autoscaling.x-k8s.io/" + BufferVersion
	BufferKind       = "CapacityBuffer"
	// bufferActiveCapacity is the strategy under which the autoscaler
	// provisions capacity for the buffer's chunks (the API's default).
	bufferActiveCapacity = "buffer.x-k8s.io/active-capacity"
)
