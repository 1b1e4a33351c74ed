package adversarial

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// placementGolden is the function's rendering of the reference's 4.1 pool
// (e6-pools/burst-pool, attaching workspace-analytics-prod/analytics-cluster
// and workspace-reporting/reporting-cluster) on the kwok AWS plane. The
// function's golden test keeps it equal to what the code renders, so the
// admission policy, binding, node template and executor contract these
// tests install are the function's own output.
var placementGolden = filepath.Join("functions", "pool-compose", "testdata", "reference", "4.1-basic-burst-pool", "kwok-aws.yaml")

// Names of the plane the placement tests build.
const (
	poolNS     = "e6-pools"
	attachedNS = "workspace-analytics-prod"
	attachedQS = "analytics-cluster"
	hostileNS  = "workspace-rogue"
	hostileQS  = "rogue-cluster"
	otherNode  = "plain-node"
)

var poolNodes = []string{"burst-pool-node-a", "burst-pool-node-b"}

// Waits of the placement tests, named once.
const (
	// bindWindow is how long a pod that an attack left unbound is watched
	// for a binding. kube-scheduler requeues a pod on its own update event
	// (scheduling queue's MoveAllToActiveOrBackoffQueue on pod update), so
	// on main's objects the attacks' pods bind within about a second here;
	// the window is many times that.
	bindWindow = 20 * time.Second
	// evictWindow is how long a pod bound by spec.nodeName to a pool node
	// has to be gone. The taint-eviction controller of
	// kube-controller-manager deletes a pod that does not tolerate a
	// NoExecute taint of its node as soon as it sees it (no
	// tolerationSeconds: pkg/controller/tainteviction/taint_eviction.go),
	// and kwok then finishes the deletion; kwok runs no kubelet, so the
	// kubelet's own refusal (pkg/kubelet/lifecycle/predicate.go,
	// UntoleratedTaint) is not what the test sees.
	evictWindow = 45 * time.Second
	// runWindow bounds kwok marking the pool's new nodes Ready, and a
	// legitimate executor being bound and run on one: the scheduler binds
	// a pod it can place at once, and kwok runs a bound pod and readies a
	// node within a second here; a minute leaves room for a control plane
	// that has only just started.
	runWindow = 60 * time.Second
	// stayWindow is how long an executor that tolerates the pool's
	// NoExecute taint is watched staying on its pool node: the
	// taint-eviction controller deletes a pod that does not tolerate it as
	// soon as it sees it (evictWindow), within a second here.
	stayWindow = 5 * time.Second
)

// placement is the plane of the placement tests: a real API server,
// kube-scheduler, kube-controller-manager and kwok, with the 4.1 pool's
// admission objects and kwok nodes made from its NodePool template.
type placement struct {
	kube   kubernetes.Interface
	golden *rendering
}

// rendering is the part of a golden rendering the tests read.
type rendering struct {
	Desired struct {
		Composite struct {
			Resource struct {
				Status struct {
					ExecutorScheduling struct {
						Labels       map[string]string   `json:"labels"`
						NodeSelector map[string]string   `json:"nodeSelector"`
						Tolerations  []corev1.Toleration `json:"tolerations"`
					} `json:"executorScheduling"`
				} `json:"status"`
			} `json:"resource"`
		} `json:"composite"`
		Resources map[string]struct {
			Resource map[string]any `json:"resource"`
		} `json:"resources"`
	} `json:"desired"`
}

// object returns the desired composed resource name.
func (r *rendering) object(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	o, ok := r.Desired.Resources[name]
	if !ok {
		t.Fatalf("%s renders no %s", placementGolden, name)
	}
	return &unstructured.Unstructured{Object: o.Resource}
}

// nodeTemplate is the labels and taints of the NodePool's node template.
func (r *rendering) nodeTemplate(t *testing.T) (map[string]string, []corev1.Taint) {
	t.Helper()
	np := r.object(t, "nodepool")
	labels, _, err := unstructured.NestedStringMap(np.Object, "spec", "template", "metadata", "labels")
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := unstructured.NestedSlice(np.Object, "spec", "template", "spec", "taints")
	if err != nil {
		t.Fatal(err)
	}
	var taints []corev1.Taint
	for _, x := range raw {
		var tt corev1.Taint
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(x.(map[string]any), &tt); err != nil {
			t.Fatal(err)
		}
		taints = append(taints, tt)
	}
	return labels, taints
}

// upPlacement starts the plane (without Karpenter and Crossplane) and
// installs the pool's objects; it stops when t ends.
func upPlacement(t *testing.T) *placement {
	t.Helper()
	ctx := t.Context()
	root := gomod.RootForTest(t)
	b, err := os.ReadFile(filepath.Join(root, placementGolden))
	if err != nil {
		t.Fatal(err)
	}
	p := &placement{golden: &rendering{}}
	if err := yaml.Unmarshal(b, p.golden); err != nil {
		t.Fatalf("%s: %v", placementGolden, err)
	}

	var bins localcp.Binaries
	for _, x := range []struct {
		name string
		dst  *string
	}{
		{"etcd", &bins.Etcd}, {"kube-apiserver", &bins.KubeAPIServer}, {"kube-controller-manager", &bins.KubeControllerManager},
		{"kube-scheduler", &bins.KubeScheduler}, {"kwok", &bins.Kwok},
	} {
		if *x.dst, err = localcp.Tool(ctx, root, x.name); err != nil {
			t.Fatalf("cannot get the %s binary (run `hack/tool.sh %s`): %v", x.name, x.name, err)
		}
	}
	c, err := localcp.Up(ctx, localcp.Config{Dir: t.TempDir(), Binaries: bins, SkipKarpenter: true, SkipCrossplane: true, StopWithParent: true})
	if err != nil {
		t.Fatalf("cannot start the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Down(); err != nil {
			t.Errorf("cannot stop the control plane: %v", err)
		}
	})
	if p.kube, err = kubernetes.NewForConfig(c.Config); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}

	cl, err := client.New(c.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fixture.CreateNamespaces(t, cl, poolNS, attachedNS, hostileNS)
	for _, o := range []struct{ name, resource string }{
		{"access-policy", "validatingadmissionpolicies"},
		{"access-policy-binding", "validatingadmissionpolicybindings"},
	} {
		gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: o.resource}
		if _, err := dyn.Resource(gvr).Create(ctx, p.golden.object(t, o.name), metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Fatalf("cannot create the rendered %s: %v", o.name, err)
		}
	}
	labels, taints := p.golden.nodeTemplate(t)
	for _, n := range poolNodes {
		p.createNode(t, n, labels, taints)
	}
	p.createNode(t, otherNode, nil, nil)
	p.waitEnforced(t)
	return p
}

// createNode creates a kwok-managed node with the labels and taints a
// node launched from the pool's NodePool template carries.
func (p *placement) createNode(t *testing.T, name string, labels map[string]string, taints []corev1.Taint) {
	t.Helper()
	rl := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	key, value, _ := strings.Cut(localcp.KwokNodeAnnotation, "=")
	l := map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "arm64", "type": "kwok"}
	for k, v := range labels {
		l[k] = v
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{key: value}},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status:     corev1.NodeStatus{Capacity: rl, Allocatable: rl},
	}
	if _, err := p.kube.CoreV1().Nodes().Create(t.Context(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitEnforced waits until the API server enforces the policy (it loads a
// new policy within seconds) and the scheduler sees the pool's nodes
// Ready, probing with a pool-targeting pod of an unattached QueryService.
func (p *placement) waitEnforced(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	probe := p.executor(hostileNS, hostileQS)
	fixture.Eventually(t, fixture.PolicyEnforced, "the rendered policy rejecting an executor of an unattached QueryService", func() error {
		created, err := p.kube.CoreV1().Pods(hostileNS).Create(ctx, probe, metav1.CreateOptions{})
		if err == nil {
			_ = p.kube.CoreV1().Pods(hostileNS).Delete(ctx, created.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			return fmt.Errorf("executor %s admitted", created.Name)
		}
		if kerrors.IsInvalid(err) || kerrors.IsForbidden(err) {
			return nil
		}
		return err
	})
	fixture.Eventually(t, runWindow, "kwok making the pool's nodes Ready", func() error {
		for _, name := range poolNodes {
			n, err := p.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !nodeReady(n) {
				return fmt.Errorf("node %s is not Ready", name)
			}
		}
		return nil
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// plainPod is a pod in ns that aims at nothing.
func plainPod(ns, name string) *corev1.Pod {
	return fixture.Pod(fixture.PodOptions{Namespace: ns, Name: name, CPU: "100m", GracePeriodSeconds: ptr.To[int64](0)})
}

// executor is a pod of QueryService ns/qs that follows the pool's executor
// contract as the Pool publishes it (status.executorScheduling): its
// labels, node selector and tolerations.
func (p *placement) executor(ns, qs string) *corev1.Pod {
	es := p.golden.Desired.Composite.Resource.Status.ExecutorScheduling
	pod := plainPod(ns, "")
	pod.GenerateName = qs + "-executor-"
	pod.Labels = map[string]string{"e6data.io/query-service": qs}
	for k, v := range es.Labels {
		pod.Labels[k] = v
	}
	pod.Spec.NodeSelector = es.NodeSelector
	pod.Spec.Tolerations = es.Tolerations
	return pod
}

// poolTolerations are the tolerations the Pool publishes for its
// executors, optionally only those of taint key.
func (p *placement) poolTolerations(key string) []corev1.Toleration {
	var out []corev1.Toleration
	for _, tol := range p.golden.Desired.Composite.Resource.Status.ExecutorScheduling.Tolerations {
		if key == "" || tol.Key == key {
			out = append(out, tol)
		}
	}
	return out
}

// onPool reports the pool node pod name runs on ("" when none), and whether
// it exists.
func (p *placement) onPool(ctx context.Context, ns, name string) (string, bool, error) {
	pod, err := p.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if kerrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	for _, n := range poolNodes {
		if pod.Spec.NodeName == n && pod.DeletionTimestamp == nil {
			return n, true, nil
		}
	}
	return "", true, nil
}

// neverBinds fails t when pod ns/name is on a pool node at any poll within
// bindWindow.
func (p *placement) neverBinds(t *testing.T, ns, name string) {
	t.Helper()
	deadline := time.Now().Add(bindWindow)
	for time.Now().Before(deadline) {
		node, _, err := p.onPool(t.Context(), ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if node != "" {
			t.Errorf("pod %s/%s was bound to pool node %s", ns, name, node)
			return
		}
		time.Sleep(fixture.PollInterval)
	}
}

// goneFromPool fails t unless pod ns/name is off the pool's nodes (deleted,
// or being deleted) within evictWindow.
func (p *placement) goneFromPool(t *testing.T, ns, name string) {
	t.Helper()
	took := fixture.Eventually(t, evictWindow, fmt.Sprintf("pod %s/%s off the pool's nodes", ns, name), func() error {
		node, _, err := p.onPool(t.Context(), ns, name)
		if err == nil && node != "" {
			return fmt.Errorf("bound to pool node %s", node)
		}
		return err
	})
	t.Logf("pod %s/%s off the pool's nodes after %s", ns, name, took.Round(100*time.Millisecond))
}

// refused reports whether the API server refused an attack's request at
// admission (err is nil when it was applied); any other error fails t.
func refused(t *testing.T, err error) bool {
	t.Helper()
	if err == nil {
		return false
	}
	if kerrors.IsInvalid(err) || kerrors.IsForbidden(err) {
		t.Logf("refused: %v", err)
		return true
	}
	t.Fatalf("the update failed for another reason than admission: %v", err)
	return false
}

// update applies mutate to pod ns/name, retrying on conflicts.
func (p *placement) update(ctx context.Context, ns, name string, mutate func(*corev1.Pod)) error {
	for {
		pod, err := p.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(pod)
		_, err = p.kube.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{})
		if !kerrors.IsConflict(err) {
			return err
		}
	}
}

// TestPlacement replays, as a hostile tenant in workspace-rogue, the
// issue's attack "Run foreign pods on a pool's nodes" against the 4.1
// pool e6-pools/burst-pool in Deny mode, on a real API server,
// kube-scheduler and kube-controller-manager with kwok nodes: one subtest
// per way in. None of the tenant's pods may end bound to, or running on, a
// pool node, while an executor of an attached QueryService runs there.
func TestPlacement(t *testing.T) {
	p := upPlacement(t)

	// The attached executor is the control: the plane binds pool pods, so
	// an attack's pod that stays off the pool was kept off.
	t.Run("AttachedExecutorRuns", func(t *testing.T) {
		ctx := t.Context()
		pod, err := p.kube.CoreV1().Pods(attachedNS).Create(ctx, p.executor(attachedNS, attachedQS), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("an executor of an attached QueryService was refused: %v", err)
		}
		fixture.Eventually(t, runWindow, fmt.Sprintf("the attached executor %s running on a pool node", pod.Name), func() (bool, error) {
			got, err := p.kube.CoreV1().Pods(attachedNS).Get(ctx, pod.Name, metav1.GetOptions{})
			return err == nil && got.Status.Phase == corev1.PodRunning && strings.HasPrefix(got.Spec.NodeName, "burst-pool-node-"), err
		})
		// It tolerates the pool's NoExecute taint, so it stays.
		time.Sleep(stayWindow)
		if node, _, err := p.onPool(ctx, attachedNS, pod.Name); err != nil || node == "" {
			t.Errorf("the attached executor %s left the pool's nodes (%v)", pod.Name, err)
		}
		// Updating a running executor's labels is not refused.
		if err := p.update(ctx, attachedNS, pod.Name, func(pod *corev1.Pod) { pod.Labels["team"] = "analytics" }); err != nil {
			t.Errorf("a label update of a running attached executor was refused: %v", err)
		}
	})

	// Attack: create a pod with a scheduling gate and nothing that aims at
	// the pool, then, while gated, add the pool's node selector and
	// tolerations (allowed for gated pods since Kubernetes 1.27, KEP-3838),
	// then remove the gate.
	t.Run("GateRemovedAfterUpdate", func(t *testing.T) {
		ctx := t.Context()
		pod := plainPod(hostileNS, "gated")
		pod.Labels = map[string]string{"e6data.io/query-service": hostileQS}
		pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
		if _, err := p.kube.CoreV1().Pods(hostileNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("a gated pod that aims at nothing was refused: %v", err)
		}
		aimed := refused(t, p.update(ctx, hostileNS, pod.Name, func(pod *corev1.Pod) {
			pod.Spec.NodeSelector = p.golden.Desired.Composite.Resource.Status.ExecutorScheduling.NodeSelector
			pod.Spec.Tolerations = p.poolTolerations("")
		}))
		ungated := refused(t, p.update(ctx, hostileNS, pod.Name, func(pod *corev1.Pod) { pod.Spec.SchedulingGates = nil }))
		if !aimed && !ungated {
			t.Error("no step of the attack was refused")
		}
		p.neverBinds(t, hostileNS, pod.Name)
	})

	// Attack: create a pod whose only node selector is a pool node's
	// hostname (not aiming at the pool by its labels), which stays
	// Pending on the NoSchedule taints, then add the pool's tolerations
	// (tolerations may be added to any pod at any time).
	t.Run("HostnameSelectorThenTolerations", func(t *testing.T) {
		ctx := t.Context()
		pod := plainPod(hostileNS, "by-hostname")
		pod.Labels = map[string]string{"e6data.io/query-service": hostileQS}
		pod.Spec.NodeSelector = map[string]string{corev1.LabelHostname: poolNodes[0]}
		if _, err := p.kube.CoreV1().Pods(hostileNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("a pod selecting a hostname was refused: %v", err)
		}
		if !refused(t, p.update(ctx, hostileNS, pod.Name, func(pod *corev1.Pod) { pod.Spec.Tolerations = p.poolTolerations("") })) {
			t.Error("adding the pool's tolerations was not refused")
		}
		p.neverBinds(t, hostileNS, pod.Name)
	})

	// Attack: create a pod with spec.nodeName set to a pool node and no
	// tolerations: the scheduler never sees it, and NoSchedule taints do
	// not stop a pod that is already bound.
	t.Run("NodeNameWithoutTolerations", func(t *testing.T) {
		ctx := t.Context()
		pod := plainPod(hostileNS, "by-node-name")
		pod.Spec.NodeName = poolNodes[1]
		if _, err := p.kube.CoreV1().Pods(hostileNS).Create(ctx, pod, metav1.CreateOptions{}); refused(t, err) {
			return
		}
		p.goneFromPool(t, hostileNS, pod.Name)
	})

	// Attack: create a pod with spec.nodeName set to a pool node and the
	// pool's tolerations, without being attached: all of them, or only
	// those of the pool name's taint (which on its own never made a pod
	// count as aiming at the pool).
	t.Run("NodeNameWithPoolTolerations", func(t *testing.T) {
		cases := map[string]struct {
			reason string
			key    string
		}{
			"AllTolerations":     {reason: "The pool's published tolerations with nodeName are refused."},
			"PoolNameTaintsOnly": {reason: "The tolerations of the pool name's taints alone, with nodeName, are refused or evicted.", key: "e6data.io/pool"},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				ctx := t.Context()
				pod := plainPod(hostileNS, "by-node-name-"+strings.ToLower(name))
				pod.Labels = map[string]string{"e6data.io/query-service": hostileQS}
				pod.Spec.NodeName = poolNodes[0]
				pod.Spec.Tolerations = p.poolTolerations(tc.key)
				if _, err := p.kube.CoreV1().Pods(hostileNS).Create(ctx, pod, metav1.CreateOptions{}); refused(t, err) {
					return
				}
				t.Logf("%s: admitted", tc.reason)
				p.goneFromPool(t, hostileNS, pod.Name)
			})
		}
	})
}
