package watch

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/warmup"
)

// managedFields is what the API server records of who wrote an object's
// fields; nothing of the provider reads it.
var managedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
	FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{}}}`)}}}

// TestTransformPodFields changes a pod one field at a time and checks the
// record the cache keeps of it: a field the provider reads reaches the
// capacity view as want says; any other field (managed fields, the
// container specs, addresses) leaves the record as it was.
func TestTransformPodFields(t *testing.T) {
	at := metav1.NewTime(time.Unix(1_700_000_500, 0))
	cpu := func(v string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}}
	}
	terminated := &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, Message: "out of memory", FinishedAt: at}
	cases := map[string]fieldCase[*corev1.Pod, *capacity.Pod]{
		"Namespace": {
			reason: "metadata.namespace is half the pod's key.",
			edit:   func(p *corev1.Pod) { p.Namespace = "other" },
			want:   func(v *capacity.Pod) { v.Namespace = "other" },
		},
		"Name": {
			reason: "metadata.name is the other half.",
			edit:   func(p *corev1.Pod) { p.Name = "other" },
			want:   func(v *capacity.Pod) { v.Name = "other" },
		},
		"UID": {
			reason: "metadata.uid is the eviction's precondition.",
			edit:   func(p *corev1.Pod) { p.UID = "v" },
			want:   func(v *capacity.Pod) { v.UID = "v" },
		},
		"Labels": {
			reason: "metadata.labels: the pool label groups the pod, the others meet selectors and name its QueryService.",
			edit:   func(p *corev1.Pod) { p.Labels = map[string]string{qsv1alpha1.LabelPool: "other", "team": "a"} },
			want: func(v *capacity.Pod) {
				v.Pool, v.Labels = "other", map[string]string{qsv1alpha1.LabelPool: "other", "team": "a"}
			},
		},
		"ImageAnnotation": {
			reason: "The image annotation names what a warmup pod warms.",
			edit:   func(p *corev1.Pod) { p.Annotations = map[string]string{warmup.AnnotationImage: "img:2"} },
			want:   func(v *capacity.Pod) { v.Image = "img:2" },
		},
		"CreationTimestamp": {
			reason: "metadata.creationTimestamp dates the pod.",
			edit:   func(p *corev1.Pod) { p.CreationTimestamp = at },
			want:   func(v *capacity.Pod) { v.Created = at.Time },
		},
		"DeletionTimestamp": {
			reason: "metadata.deletionTimestamp makes the pod Deleted.",
			edit:   func(p *corev1.Pod) { p.DeletionTimestamp = &at },
			want:   func(v *capacity.Pod) { v.State, v.DeletedAt = capacity.PodDeleted, at.Time },
		},
		"ResourceVersion": {
			reason: "metadata.resourceVersion orders a relist against the watch.",
			edit:   func(p *corev1.Pod) { p.ResourceVersion = "43" },
			want:   func(v *capacity.Pod) { v.ResourceVersion = "43" },
		},
		"Controller": {
			reason: "The controller among metadata.ownerReferences is the owner an eviction backs off by.",
			edit: func(p *corev1.Pod) {
				p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", Controller: ptr.To(true)}, {Kind: "Other", Name: "o"}}
			},
			want: func(v *capacity.Pod) { v.Owner = "ReplicaSet/rs" },
		},
		"NodeName": {
			reason: "spec.nodeName binds the pod to its node.",
			edit:   func(p *corev1.Pod) { p.Spec.NodeName = "n2" },
			want:   func(v *capacity.Pod) { v.NodeName = "n2" },
		},
		"Requests": {
			reason: "The containers' requests are the pod's share of its node.",
			edit: func(p *corev1.Pod) {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Resources: cpu("2")})
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: cpu("20")}}
			},
			want: func(v *capacity.Pod) { v.CPUMillis = 20000 },
		},
		// kube-scheduler reckons a pod's requests with
		// k8s.io/component-helpers/resource.PodRequests (its
		// NodeResourcesFit plugin): the three cases below are how it
		// departs from the sum of the containers.
		"PodLevelRequests": {
			reason: "spec.resources (PodLevelResources, KEP-2837) replaces the containers' requests it names: an executor requesting only at pod level still requests.",
			edit: func(p *corev1.Pod) {
				p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("12"), corev1.ResourceMemory: resource.MustParse("48Gi")}}
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
			},
			want: func(v *capacity.Pod) { v.CPUMillis, v.MemoryBytes = 12000, 48<<30 },
		},
		"Sidecar": {
			reason: "A restartable init container (a sidecar, KEP-753) runs beside the containers, so its requests add to theirs.",
			edit: func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: cpu("1")}}
			},
			want: func(v *capacity.Pod) { v.CPUMillis = 9000 },
		},
		"Overhead": {
			reason: "spec.overhead (a RuntimeClass's) is requested on top of the containers.",
			edit: func(p *corev1.Pod) {
				p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
			},
			want: func(v *capacity.Pod) { v.CPUMillis = 8250 },
		},
		"SchedulingGates": {
			reason: "spec.schedulingGates hold the pod back from the scheduler.",
			edit:   func(p *corev1.Pod) { p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "hold"}} },
			want:   func(v *capacity.Pod) { v.Gates = []string{"hold"} },
		},
		"AimOfAnUnboundPod": {
			reason: "An unbound pending pod's node selector and tolerations say which nodes it asks for.",
			edit: func(p *corev1.Pod) {
				p.Spec.NodeName, p.Status = "", corev1.PodStatus{Phase: corev1.PodPending}
				p.Spec.NodeSelector = map[string]string{qsv1alpha1.LabelPool: "burst-pool"}
			},
			want: func(v *capacity.Pod) {
				v.NodeName, v.State, v.Started, v.Running, v.Transitioned, v.Containers = "", capacity.PodPending, time.Time{}, time.Time{}, time.Time{}, nil
				v.Aim = &capacity.Aim{NodeSelector: map[string]string{qsv1alpha1.LabelPool: "burst-pool"}, Tolerations: executorPod(1, "").Spec.Tolerations}
			},
		},
		"Phase": {
			reason: "status.phase is the pod's state.",
			edit:   func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded },
			want:   func(v *capacity.Pod) { v.State, v.Running = capacity.PodSucceeded, time.Time{} },
		},
		"ReasonAndMessage": {
			reason: "status.reason and status.message say why a pod failed (Evicted, NodeLost).",
			edit:   func(p *corev1.Pod) { p.Status.Reason, p.Status.Message = "Evicted", "low on memory" },
			want:   func(v *capacity.Pod) { v.Reason, v.Message = "Evicted", "low on memory" },
		},
		"StartTime": {
			reason: "status.startTime is when the pod started.",
			edit:   func(p *corev1.Pod) { p.Status.StartTime = &at },
			want:   func(v *capacity.Pod) { v.Started = at.Time },
		},
		"Conditions": {
			reason: "The conditions' transitions date failures; DisruptionTarget and an Unschedulable PodScheduled are kept.",
			edit: func(p *corev1.Pod) {
				p.Status.Conditions = append(p.Status.Conditions,
					corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler", Message: "preempted", LastTransitionTime: at},
					corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable})
			},
			want: func(v *capacity.Pod) {
				v.Transitioned, v.Unschedulable = at.Time, true
				v.Disruption = &capacity.Disruption{Reason: "PreemptionByScheduler", Message: "preempted", At: at.Time}
			},
		},
		"ContainerStarted": {
			reason: "state.running.startedAt of the containers is when the pod first ran.",
			edit:   func(p *corev1.Pod) { p.Status.ContainerStatuses[0].State.Running.StartedAt = at },
			want:   func(v *capacity.Pod) { v.Running = at.Time },
		},
		"RestartCount": {
			reason: "A restarted container's start is no longer the pod's first.",
			edit:   func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = 1 },
			want:   func(v *capacity.Pod) { v.Running = time.Time{} },
		},
		"ContainerStates": {
			reason: "Each container's name, image, waiting state, termination and last termination diagnose failures; init containers too.",
			edit: func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "executor", Image: "img:3", LastTerminationState: corev1.ContainerState{Terminated: terminated},
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off"}}}
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "pull", Image: "img:1", State: corev1.ContainerState{Terminated: terminated}}}
			},
			want: func(v *capacity.Pod) {
				last := &capacity.Termination{Reason: "OOMKilled", ExitCode: 137, Message: "out of memory", FinishedAt: at.Time}
				v.Running = time.Time{}
				v.Containers = []capacity.Container{{Name: "pull", Init: true, Image: "img:1", Terminated: last},
					{Name: "executor", Image: "img:3", WaitingReason: "CrashLoopBackOff", WaitingMessage: "back-off", LastTerminated: last}}
			},
		},
		"ManagedFields": {
			reason: "Managed fields are not read.",
			edit:   func(p *corev1.Pod) { p.ManagedFields = managedFields },
		},
		"OtherMetadata": {
			reason: "Other annotations, finalizers and non-controller owners are not read.",
			edit: func(p *corev1.Pod) {
				p.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "executor"}
				p.Finalizers = []string{"example.com/hold"}
				p.OwnerReferences = []metav1.OwnerReference{{Kind: "Other", Name: "o"}}
				p.GenerateName = "analytics-exec-"
			},
		},
		"ContainerSpecs": {
			reason: "What the containers run, their environment, ports, probes and volumes are not read.",
			edit: func(p *corev1.Pod) {
				c := &p.Spec.Containers[0]
				c.Image, c.Args, c.Env = "img:4", []string{"--role=executor"}, []corev1.EnvVar{{Name: "A", Value: "b"}}
				c.Ports = []corev1.ContainerPort{{ContainerPort: 9000}}
				c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
				p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				p.Spec.ServiceAccountName = "executor"
			},
		},
		"PlacementOfABoundPod": {
			reason: "Where a bound pod asked to go is decided and not read.",
			edit: func(p *corev1.Pod) {
				p.Spec.NodeSelector = map[string]string{"zone": "a"}
				p.Spec.Tolerations = nil
			},
		},
		"StatusDetails": {
			reason: "Addresses, QoS class, container IDs and readiness are not read.",
			edit: func(p *corev1.Pod) {
				p.Status.PodIP, p.Status.HostIP, p.Status.QOSClass = "10.1.0.1", "10.0.0.1", corev1.PodQOSBurstable
				s := &p.Status.ContainerStatuses[0]
				s.ImageID, s.ContainerID, s.Ready, s.Started = "img@sha256:0", "containerd://0", false, ptr.To(true)
			},
		},
	}
	testFields(t, executorPod(1, "n1"), (*corev1.Pod).DeepCopy, Pod, TransformPod, cases)
}

// TestTransformNodeFields is TestTransformPodFields for nodes.
func TestTransformNodeFields(t *testing.T) {
	at := metav1.NewTime(time.Unix(1_700_000_500, 0))
	cases := map[string]fieldCase[*corev1.Node, *capacity.Node]{
		"Name": {
			reason: "metadata.name is the node's key.",
			edit:   func(n *corev1.Node) { n.Name = "other" },
			want:   func(v *capacity.Node) { v.Name = "other" },
		},
		"Labels": {
			reason: "metadata.labels: the pool label groups the node; the others meet selectors, name its type and capacity type.",
			edit:   func(n *corev1.Node) { n.Labels = map[string]string{qsv1alpha1.LabelPool: "q", "zone": "a"} },
			want: func(v *capacity.Node) {
				v.Pool, v.Labels = "q", map[string]string{qsv1alpha1.LabelPool: "q", "zone": "a"}
			},
		},
		"Timestamps": {
			reason: "metadata.creationTimestamp dates the node; a deletion timestamp makes it Deleting.",
			edit:   func(n *corev1.Node) { n.CreationTimestamp, n.DeletionTimestamp = at, &at },
			want:   func(v *capacity.Node) { v.Created, v.Deleting = at.Time, true },
		},
		"ResourceVersion": {
			reason: "metadata.resourceVersion orders a relist against the watch.",
			edit:   func(n *corev1.Node) { n.ResourceVersion = "8" },
			want:   func(v *capacity.Node) { v.ResourceVersion = "8" },
		},
		"Unschedulable": {
			reason: "spec.unschedulable cordons the node.",
			edit:   func(n *corev1.Node) { n.Spec.Unschedulable = true },
			want:   func(v *capacity.Node) { v.Cordoned, v.Schedulable = true, false },
		},
		"Taints": {
			reason: "spec.taints that keep pods off the node are kept for tolerations to judge.",
			edit: func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
			},
			want: func(v *capacity.Node) {
				v.Schedulable, v.Taints = false, []capacity.Taint{{Key: "dedicated", Value: "a", Effect: "NoSchedule"}}
			},
		},
		"Ready": {
			reason: "The Ready condition.",
			edit:   func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse },
			want:   func(v *capacity.Node) { v.Ready = false },
		},
		"Allocatable": {
			reason: "status.allocatable is what pods may request on the node.",
			edit: func(n *corev1.Node) {
				n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
			},
			want: func(v *capacity.Node) { v.AllocatableCPUMillis, v.AllocatableMemoryBytes = 4000, 8<<30 },
		},
		"ManagedFields": {
			reason: "Managed fields are not read.",
			edit:   func(n *corev1.Node) { n.ManagedFields = managedFields },
		},
		"StatusDetails": {
			reason: "Capacity, addresses, system info, images and other conditions are not read.",
			edit: func(n *corev1.Node) {
				n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}
				n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
				n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.36.3"}
				n.Status.Images = []corev1.ContainerImage{{Names: []string{"img:1"}, SizeBytes: 1}}
				n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue})
				n.Spec.ProviderID, n.Annotations = "aws:///zone/i-0", map[string]string{"a": "b"}
			},
		},
	}
	base := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ResourceVersion: "7", Labels: map[string]string{qsv1alpha1.LabelPool: "p"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi")}}}
	testFields(t, base, (*corev1.Node).DeepCopy, Node, TransformNode, cases)
}

// A fieldCase changes one field of an object (edit) and says how the
// capacity view of the unchanged object changes with it (want); want is
// nil when the provider does not read the field.
type fieldCase[O, V any] struct {
	reason string
	edit   func(O)
	want   func(V)
}

// testFields runs each case on a copy of base and compares the view the
// cache transform keeps of it with what the case wants.
func testFields[O metav1.Object, V any](t *testing.T, base O, copyOf func(O) O, view func(O) V, transform func(any) (any, error), cases map[string]fieldCase[O, V]) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := view(base)
			if tc.want != nil {
				tc.want(want)
			}
			obj := copyOf(base)
			tc.edit(obj)
			got := cachedView[V](t, transform, obj)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// cachedView runs obj through the cache transform and returns the view its
// record holds, checking that the record keeps the object's key and
// version and nothing more of its metadata.
func cachedView[V any](t *testing.T, transform func(any) (any, error), obj metav1.Object) V {
	t.Helper()
	out, err := transform(obj)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := out.(*record[V])
	if !ok {
		t.Fatalf("the transform returned a %T, want a record", out)
	}
	if r.GetNamespace() != obj.GetNamespace() || r.GetName() != obj.GetName() || r.GetResourceVersion() != obj.GetResourceVersion() {
		t.Errorf("the record is keyed %s/%s at %s, want %s/%s at %s", r.GetNamespace(), r.GetName(), r.GetResourceVersion(),
			obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion())
	}
	if r.GetManagedFields() != nil || r.GetLabels() != nil || r.GetAnnotations() != nil || r.GetOwnerReferences() != nil {
		t.Error("the record keeps metadata beyond the key and version")
	}
	if again, _ := transform(out); again != out {
		t.Error("the transform changed a record it had made")
	}
	return r.view
}

// TestShared checks that executors of one template share one map of
// labels and one list of containers, and an executor with other labels or
// a container that failed does not.
func TestShared(t *testing.T) {
	a, b, c := executorPod(1, "n"), executorPod(2, "n"), executorPod(3, "n")
	c.Labels = map[string]string{qsv1alpha1.LabelPool: "burst-pool", qsv1alpha1.LabelQueryService: "sales"}
	c.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}
	pa, pb, pc := Pod(a), Pod(b), Pod(c)
	if !sameMap(pa.Labels, pb.Labels) {
		t.Error("two executors of one template keep two maps of labels")
	}
	if sameMap(pa.Labels, pc.Labels) {
		t.Error("an executor with other labels shares the map of one without them")
	}
	if &pa.Containers[0] != &pb.Containers[0] {
		t.Error("two executors of one template keep two lists of containers")
	}
	if &pa.Containers[0] == &pc.Containers[0] {
		t.Error("an executor whose container failed shares the containers of one whose did not")
	}
	if diff := cmp.Diff(a.Labels, pa.Labels); diff != "" {
		t.Errorf("labels (-pod +view):\n%s", diff)
	}
	a.Labels[qsv1alpha1.LabelQueryService] = "changed"
	if pa.Labels[qsv1alpha1.LabelQueryService] != "analytics" {
		t.Error("the view's labels change with the pod's")
	}
}

// sameMap reports whether a and b are one map: a key written to one shows
// in the other.
func sameMap(a, b map[string]string) bool {
	const probe = "burstpool.test/probe"
	a[probe] = "x"
	_, shared := b[probe]
	delete(a, probe)
	return shared
}
