package watch

import (
	"fmt"
	"testing"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
)

// executorPod is a pool executor as a QueryService operator makes it
// (docs/queryservice.md), bound to node or, when node is empty, waiting
// for room.
func executorPod(i int, node string) *corev1.Pod {
	start := metav1.NewTime(time.Unix(1_700_000_000, 0))
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "workspace-analytics", Name: fmt.Sprintf("analytics-exec-%05d", i), UID: "u", ResourceVersion: "42",
			Labels: map[string]string{qsv1alpha1.LabelPool: "burst-pool", qsv1alpha1.LabelPoolNamespace: "e6-pools", qsv1alpha1.LabelQueryService: "analytics",
				qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentExecutor}},
		Spec: corev1.PodSpec{NodeName: node,
			NodeSelector: map[string]string{qsv1alpha1.LabelPool: "burst-pool", qsv1alpha1.LabelPoolNamespace: "e6-pools"},
			Tolerations: []corev1.Toleration{
				{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: "burst-pool", Effect: corev1.TaintEffectNoSchedule},
				{Key: qsv1alpha1.TaintPoolNamespace, Operator: corev1.TolerationOpEqual, Value: "e6-pools", Effect: corev1.TaintEffectNoSchedule},
			},
			Containers: []corev1.Container{{Name: "executor", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &start, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "executor", Image: "ghcr.io/e6data/executor:3.1", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}}},
	}
	if node == "" {
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, LastTransitionTime: start}}}
	}
	return p
}

// BenchmarkPod measures the cache transform of one executor pod: what
// every pod event costs before it reaches the store.
func BenchmarkPod(b *testing.B) {
	for _, tc := range []struct{ name, node string }{{"Running", "burst-node-1"}, {"Unschedulable", ""}} {
		b.Run(tc.name, func(b *testing.B) {
			pods := make([]*corev1.Pod, 1024)
			for i := range pods {
				pods[i] = executorPod(i, tc.node)
			}
			b.ReportAllocs()
			var last *capacity.Pod
			for i := 0; b.Loop(); i++ {
				last = Pod(pods[i%len(pods)])
			}
			want := capacity.PodRunning
			if tc.node == "" {
				want = capacity.PodPending
			}
			if last.State != want || last.NodeName != tc.node {
				b.Fatalf("pod %v on %q, want %v on %q", last.State, last.NodeName, want, tc.node)
			}
		})
	}
}

// BenchmarkDecodePod measures decoding one executor pod as a watch streams
// it (protobuf, with what the API server and a ReplicaSet add: managed
// fields, a service account volume, arguments, environment and a probe),
// in full and cut (sparseSerializer), and its view.
func BenchmarkDecodePod(b *testing.B) {
	full, sparse := protobuf(b)
	data := encode(b, full, streamedPod())
	for _, tc := range []struct {
		name string
		s    runtime.Serializer
	}{{"Full", full}, {"Cut", sparse}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			var view *capacity.Pod
			for b.Loop() {
				obj, _, err := tc.s.Decode(data, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				view = Pod(obj.(*corev1.Pod))
			}
			if view.State != capacity.PodRunning || view.CPUMillis != 8000 {
				b.Fatalf("decoded %v requesting %dm, want a running executor requesting 8000m", view.State, view.CPUMillis)
			}
		})
	}
}

// streamedPod is an executor pod as a pod watch streams it.
func streamedPod() *corev1.Pod {
	p := executorPod(1, "burst-node-1")
	p.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/component":{},"f:e6data.io/pool":{},"f:e6data.io/pool-namespace":{},"f:e6data.io/query-service":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"9f0e4c1a-4f5e-4a57-9d0b-0c1d2e3f4a5b\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"executor\"}":{".":{},"f:args":{},"f:env":{".":{},"k:{\"name\":\"POD_IP\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}},"k:{\"name\":\"QUERY_SERVICE\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{},"f:readinessProbe":{},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}}}},"f:nodeSelector":{},"f:tolerations":{}}}`)}},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.1.0.1\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)}},
	}
	p.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptrTo(int64(3607))}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}}}}}
	c := &p.Spec.Containers[0]
	c.Image, c.ImagePullPolicy = "ghcr.io/e6data/executor:3.1", corev1.PullIfNotPresent
	c.Args = []string{"--role=executor", "--query-service=analytics"}
	c.Ports = []corev1.ContainerPort{{Name: "rpc", ContainerPort: 9000}, {Name: "metrics", ContainerPort: 9100}}
	c.Env = []corev1.EnvVar{{Name: "QUERY_SERVICE", Value: "analytics"},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("rpc")}}}
	c.TerminationMessagePath, c.TerminationMessagePolicy = "/dev/termination-log", corev1.TerminationMessageReadFile
	p.Status.HostIP, p.Status.PodIP = "10.0.0.1", "10.1.0.1"
	p.Status.PodIPs = []corev1.PodIP{{IP: "10.1.0.1"}}
	s := &p.Status.ContainerStatuses[0]
	s.ImageID, s.ContainerID = "ghcr.io/e6data/executor@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "containerd://0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	return p
}

// BenchmarkIntern measures interning what a provider's start meets: ten
// thousand node names met for the first time, then each ten times more
// (the pods on those nodes), by the intern table and by unique.Make, which
// it replaced.
func BenchmarkIntern(b *testing.B) {
	for _, tc := range []struct {
		name   string
		intern func(string) string
	}{{"Table", intern}, {"UniqueMake", func(s string) string { return unique.Make(s).Value() }}} {
		b.Run(tc.name, func(b *testing.B) {
			const nodes, meetings = 10_000, 11
			var last string
			for n := 0; b.Loop(); n++ {
				b.StopTimer()
				names := make([]string, nodes)
				for i := range names {
					names[i] = fmt.Sprintf("start-%d-node-%05d", n, i)
				}
				b.StartTimer()
				for range meetings {
					for _, s := range names {
						last = tc.intern(s)
					}
				}
			}
			if last == "" {
				b.Fatal("interned nothing")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nodes*meetings), "ns/intern")
		})
	}
}
