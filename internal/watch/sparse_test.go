package watch

import (
	"bytes"
	"math/rand"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/randfill"

	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/warmup"
)

// observerProtobuf is what the observer's client encodes and decodes
// protobuf with.
func observerProtobuf(t testing.TB) runtime.SerializerInfo {
	t.Helper()
	for _, info := range (sparseCodecs{clientgoscheme.Codecs.WithoutConversion()}).SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeProtobuf {
			return info
		}
	}
	t.Fatal("the observer's client has no protobuf serializer")
	return runtime.SerializerInfo{}
}

// protobuf returns the protobuf serializer a client of core objects
// decodes with, and the sparse one the observer's client uses in its place.
func protobuf(t testing.TB) (full, sparse runtime.Serializer) {
	t.Helper()
	info := observerProtobuf(t)
	s, ok := info.Serializer.(sparseSerializer)
	if !ok {
		t.Fatalf("the observer's client's protobuf serializer is a %T, want a sparseSerializer", info.Serializer)
	}
	return s.Serializer, s
}

// encode returns obj as the API server sends it, its kind named.
func encode(t testing.TB, s runtime.Serializer, obj runtime.Object) []byte {
	t.Helper()
	gvks, _, err := clientgoscheme.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	var b bytes.Buffer
	if err := s.Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// randomPods returns n pods with every field filled at random, some left
// empty, so that each field of a pod is set in some of them.
func randomPods(n int) []*corev1.Pod {
	f := randfill.New().RandSource(rand.NewSource(1)).NilChance(0.2).NumElements(0, 3).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1_000_000), resource.DecimalSI)
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.NewTime(time.Unix(1_700_000_000+c.Int63n(1_000_000), 0))
		},
	)
	out := make([]*corev1.Pod, n)
	for i := range out {
		p := &corev1.Pod{}
		f.Fill(p)
		p.TypeMeta = metav1.TypeMeta{}
		// The few values Pod reads by name, so that random pods reach
		// every branch of it.
		states := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodFailed, ""}
		p.Status.Phase = states[i%len(states)]
		if i%2 == 0 {
			p.Spec.NodeName = ""
		}
		if i%3 == 0 {
			p.DeletionTimestamp = nil
		}
		for j := range p.Status.Conditions {
			types := []corev1.PodConditionType{corev1.PodScheduled, corev1.DisruptionTarget, corev1.PodReady}
			p.Status.Conditions[j].Type = types[(i+j)%len(types)]
			p.Status.Conditions[j].Status = []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse}[(i+j)%2]
			p.Status.Conditions[j].Reason = corev1.PodReasonUnschedulable
		}
		for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
			for j := range cs {
				cs[j].Resources.Requests = corev1.ResourceList{
					corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(100*(i+j)), resource.DecimalSI),
					corev1.ResourceMemory: *resource.NewQuantity(int64(1<<20*(i+j)), resource.BinarySI),
				}
			}
		}
		if i%3 == 1 {
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("1Gi")}}
			p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
		}
		for j := range p.Spec.InitContainers {
			if (i+j)%2 == 0 {
				p.Spec.InitContainers[j].RestartPolicy = ptrTo(corev1.ContainerRestartPolicyAlways)
			}
		}
		if p.Annotations != nil {
			p.Annotations[warmup.AnnotationImage] = p.Name
		}
		if len(p.OwnerReferences) > 0 {
			p.OwnerReferences[0].Controller = ptrTo(true)
		}
		out[i] = p
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// TestSparsePod decodes pods filled at random in every field both ways, in
// full and cut, and finds the same capacity view: no field Pod reads is
// cut. It also checks that the cut leaves out what it names.
func TestSparsePod(t *testing.T) {
	full, sparse := protobuf(t)
	var before, after int
	for i, p := range randomPods(500) {
		data := encode(t, full, p)
		want, _, err := full.Decode(data, nil, nil)
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		got, gvk, err := sparse.Decode(data, nil, nil)
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		if gvk == nil || *gvk != podKind {
			t.Errorf("pod %d: decoded as %v, want %v", i, gvk, podKind)
		}
		gp, wp := got.(*corev1.Pod), want.(*corev1.Pod)
		if diff := cmp.Diff(Pod(wp), Pod(gp)); diff != "" {
			t.Fatalf("pod %d: the view of the cut pod differs (-full +cut):\n%s", i, diff)
		}
		if diff := cmp.Diff(transformed(wp), transformed(gp), cmp.AllowUnexported(record[*capacity.Pod]{})); diff != "" {
			t.Fatalf("pod %d: the record of the cut pod differs (-full +cut):\n%s", i, diff)
		}
		if len(gp.ManagedFields) > 0 || len(gp.Spec.Volumes) > 0 {
			t.Errorf("pod %d: the cut pod kept %d managed fields and %d volumes", i, len(gp.ManagedFields), len(gp.Spec.Volumes))
		}
		for _, c := range append(gp.Spec.Containers, gp.Spec.InitContainers...) {
			if len(c.Env) > 0 || len(c.Command) > 0 || c.ReadinessProbe != nil {
				t.Errorf("pod %d: container %q kept its environment, command or probe", i, c.Name)
			}
		}
		before += wp.Size()
		after += gp.Size()
	}
	if after >= before/2 {
		t.Errorf("the cut pods are %d bytes of %d: most of a random pod is in the parts cut", after, before)
	}
}

// transformed is the record the pod informer's cache keeps of p.
func transformed(p *corev1.Pod) *record[*capacity.Pod] {
	r, err := TransformPod(p)
	if err != nil {
		panic(err)
	}
	return r.(*record[*capacity.Pod])
}

// TestSparseOthers checks that what is not a pod, or not well-formed,
// decodes as the full serializer decodes it, and that a watch's bookmark
// keeps the annotation that ends its initial events.
func TestSparseOthers(t *testing.T) {
	full, sparse := protobuf(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: managedFields}, Spec: corev1.NodeSpec{Unschedulable: true}}
	bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	pod := encode(t, full, executorPod(1, "n"))
	cases := map[string]struct {
		data []byte
		into runtime.Object
	}{
		"Node":              {data: encode(t, full, node)},
		"Bookmark":          {data: encode(t, full, bookmark)},
		"PodIntoPod":        {data: pod, into: &corev1.Pod{Spec: corev1.PodSpec{NodeName: "stale"}}},
		"PodIntoNode":       {data: pod, into: &corev1.Node{}},
		"Truncated":         {data: pod[:len(pod)-3]},
		"NotProtobuf":       {data: []byte(`{"kind":"Pod","apiVersion":"v1"}`)},
		"PodList":           {data: encode(t, full, &corev1.PodList{Items: []corev1.Pod{*executorPod(2, "n")}})},
		"ExecutorPodInFull": {data: pod},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			copyOf := func(o runtime.Object) runtime.Object {
				if o == nil {
					return nil
				}
				return o.DeepCopyObject()
			}
			want, _, werr := full.Decode(tc.data, nil, copyOf(tc.into))
			got, _, gerr := sparse.Decode(tc.data, nil, copyOf(tc.into))
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("error %v, the full serializer's %v", gerr, werr)
			}
			if werr != nil {
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-full +sparse):\n%s", diff)
			}
		})
	}
}

// TestRequestsAsScheduler checks that what a pod requests is what
// kube-scheduler reckons (k8s.io/component-helpers/resource.PodRequests)
// for pods filled at random, those that requests sums itself included.
func TestRequestsAsScheduler(t *testing.T) {
	plain := 0
	for i, p := range randomPods(500) {
		if plainRequests(&p.Spec) {
			plain++
		}
		want := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		cpu, mem := requests(p)
		if cpu != want.Cpu().MilliValue() || mem != want.Memory().Value() {
			t.Errorf("pod %d requests %dm CPU and %d bytes, the scheduler reckons %dm and %d", i, cpu, mem, want.Cpu().MilliValue(), want.Memory().Value())
		}
	}
	if plain == 0 || plain == 500 {
		t.Errorf("%d of 500 random pods request plainly: the test covers only one way", plain)
	}
}
