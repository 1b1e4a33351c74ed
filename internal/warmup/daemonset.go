package warmup

import (
	"maps"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// LabelImageHash is the label, on a warmup DaemonSet and its pods, whose
// value is Hash of the warmed image. With the pool and component labels it
// forms the DaemonSet's selector, so the DaemonSets of one pool select
// disjoint pods.
const LabelImageHash = "e6data.io/warmup-image"

// Paths and identities inside a warmup pod.
const (
	// HelperPath is where the helper image holds the warm binary (cmd/warm).
	HelperPath = "/warm"
	// VolumeName is the emptyDir that carries the helper into the image to
	// warm.
	VolumeName = "warm"
	// MountPath is where the emptyDir is mounted in every container. It is
	// not HelperPath, so it hides nothing of the helper image.
	MountPath = "/burstpool"
	// NoopPath is the helper's copy that the image to warm runs; started
	// under that name it exits 0 at once.
	NoopPath = MountPath + "/noop"
	// UID is the user and group every container runs as.
	UID int64 = 65532
)

// Container names of a warmup pod, in start order.
const (
	ContainerInstall = "install"
	ContainerPull    = "pull"
	ContainerPause   = "pause"
)

// Resources every container requests and is limited to. They are tiny so
// warmup pods barely count when Karpenter sizes a node, and equal so the pods
// are Guaranteed.
var (
	cpu    = resource.MustParse("5m")
	memory = resource.MustParse("16Mi")
)

// terminationGrace is how long a warmup pod may take to stop; pause exits on
// SIGTERM at once.
const terminationGrace int64 = 5

// revisionHistory is how many old revisions a warmup DaemonSet keeps.
const revisionHistory int32 = 2

// DaemonSetInput is everything DaemonSet needs to render one warmup
// DaemonSet.
type DaemonSetInput struct {
	// Pool is the pool name: the LabelPool value, the pool toleration's value
	// and the prefix of the DaemonSet name.
	Pool string
	// Namespace is the DaemonSet's namespace.
	Namespace string
	// Image is the image to warm; it is normalized.
	Image string
	// HelperImage is an image that holds the warm binary at HelperPath.
	HelperImage string
	// PullSecrets name Secrets in Namespace used to pull Image and
	// HelperImage. Blank names are ignored.
	PullSecrets []string
	// Tolerations are added after the tolerations of the pool taint (both
	// effects, NoSchedule and NoExecute, the pool's nodes carry) and of
	// the startup taint new pool nodes carry while they warm.
	Tolerations []corev1.Toleration
	// NodeSelector selects the pool's nodes, for example {LabelPool: pool}.
	NodeSelector map[string]string
	// Labels are added to the DaemonSet and its pods; the pool, component
	// and image-hash labels win over them.
	Labels map[string]string
	// PriorityClassName is the pods' priority class; empty for none.
	PriorityClassName string
	// UnusedSince, when set, is written to AnnotationUnusedSince.
	UnusedSince *time.Time
}

// DaemonSet renders the warmup DaemonSet that keeps in.Image pulled on every
// pool node; see the package documentation for the pod layout. The result is
// a typed object with TypeMeta set; the caller converts it to unstructured.
// DaemonSet does not modify in and the result shares no memory with it.
func DaemonSet(in DaemonSetInput) *appsv1.DaemonSet {
	ref := Normalize(in.Image)
	selector := map[string]string{
		qsv1alpha1.LabelPool:      in.Pool,
		qsv1alpha1.LabelComponent: qsv1alpha1.ComponentWarmup,
		LabelImageHash:            Hash(ref),
	}
	labels := maps.Clone(in.Labels)
	if labels == nil {
		labels = make(map[string]string, len(selector))
	}
	maps.Copy(labels, selector)

	annotations := map[string]string{AnnotationImage: ref}
	if in.UnusedSince != nil {
		annotations[AnnotationUnusedSince] = in.UnusedSince.UTC().Format(time.RFC3339)
	}

	mount := []corev1.VolumeMount{{Name: VolumeName, MountPath: MountPath}}
	all := intstr.FromString("100%")

	return &appsv1.DaemonSet{
		TypeMeta: metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        DaemonSetName(in.Pool, ref),
			Namespace:   in.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &all},
			},
			RevisionHistoryLimit: ptr.To(revisionHistory),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      maps.Clone(labels),
					Annotations: map[string]string{AnnotationImage: ref},
				},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To(terminationGrace),
					PriorityClassName:             in.PriorityClassName,
					NodeSelector:                  maps.Clone(in.NodeSelector),
					Tolerations:                   tolerations(in.Pool, in.Tolerations),
					ImagePullSecrets:              pullSecrets(in.PullSecrets),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To(UID),
						RunAsGroup:     ptr.To(UID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Volumes: []corev1.Volume{{
						Name:         VolumeName,
						VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
					}},
					InitContainers: []corev1.Container{
						container(ContainerInstall, in.HelperImage, []string{HelperPath, "install", NoopPath}, mount),
						// The working directory exists in every image, being a
						// mount, so the runtime need not create one in a
						// read-only root.
						withWorkingDir(container(ContainerPull, ref, []string{NoopPath}, mount), MountPath),
					},
					Containers: []corev1.Container{
						container(ContainerPause, in.HelperImage, []string{HelperPath, "pause"}, nil),
					},
				},
			},
		},
	}
}

// container returns a container that runs command in image with the
// package's resources and a locked-down security context.
func container(name, image string, command []string, mounts []corev1.VolumeMount) corev1.Container {
	rl := corev1.ResourceList{corev1.ResourceCPU: cpu.DeepCopy(), corev1.ResourceMemory: memory.DeepCopy()}
	return corev1.Container{
		Name:            name,
		Image:           image,
		Command:         command,
		ImagePullPolicy: corev1.PullIfNotPresent,
		VolumeMounts:    slices.Clone(mounts),
		Resources:       corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To(UID),
			RunAsGroup:               ptr.To(UID),
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Privileged:               ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

func withWorkingDir(c corev1.Container, dir string) corev1.Container {
	c.WorkingDir = dir
	return c
}

// tolerations returns the tolerations of the pool taint, with effect
// NoSchedule and NoExecute, and of the pool's startup taint, followed by
// extra, without an extra one equal to
// either.
func tolerations(pool string, extra []corev1.Toleration) []corev1.Toleration {
	own := []corev1.Toleration{
		{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule},
		{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoExecute},
		WarmingToleration(pool),
	}
	out := make([]corev1.Toleration, 0, len(own)+len(extra))
	out = append(out, own...)
	for _, t := range extra {
		if !slices.Contains(own, t) {
			out = append(out, *t.DeepCopy())
		}
	}
	return out
}

// WarmingToleration tolerates a new pool node's startup taint, which
// stays until its images are warm: node agents (warmup pods, which warm
// them, and the storage agent) start while it does, executors after.
func WarmingToleration(pool string) corev1.Toleration {
	return corev1.Toleration{Key: qsv1alpha1.TaintWarming, Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule}
}

func pullSecrets(names []string) []corev1.LocalObjectReference {
	var out []corev1.LocalObjectReference
	for _, n := range names {
		if n != "" {
			out = append(out, corev1.LocalObjectReference{Name: n})
		}
	}
	return out
}
