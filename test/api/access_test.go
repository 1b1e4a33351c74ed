package api_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/fixture"
)

// accessGolden is the function's rendering of the reference's 4.2 pool
// (high-memory-pool, which allows analytics-cluster and reporting-cluster)
// in Deny mode: its ValidatingAdmissionPolicy and binding are what this
// test installs.
var accessGolden = filepath.Join("..", "..", "functions", "pool-compose", "testdata", "reference", "4.2-explicit-instance-type-pool", "kwok-aws.yaml")

// renderedObject reads desired composed resource name out of a golden
// rendering of the function.
func renderedObject(t *testing.T, path, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Desired struct {
			Resources map[string]struct {
				Resource map[string]any `json:"resource"`
			} `json:"resources"`
		} `json:"desired"`
	}
	if err := yaml.Unmarshal(b, &golden); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	r, ok := golden.Desired.Resources[name]
	if !ok {
		t.Fatalf("%s renders no %s", path, name)
	}
	return &unstructured.Unstructured{Object: r.Resource}
}

// executorPod is a pod in ns of QueryService qs (no label when empty) that
// follows the pool's executor contract for pool pool in namespace poolNS.
func executorPod(ns, qs, pool, poolNS string) *corev1.Pod {
	p := fixture.Pool{Name: pool, Namespace: poolNS}
	return fixture.Pod(fixture.PodOptions{Namespace: ns, GenerateName: "executor-", Labels: p.ExecutorLabels(qs), NodeSelector: p.NodeLabels(), Tolerations: p.Tolerations()})
}

// installAccessPolicy creates the namespaces and the rendered policy and
// binding (once per API server), waits until the API server enforces the
// policy, and returns its rejection of an unattached executor.
func installAccessPolicy(t *testing.T) error {
	t.Helper()
	ctx := context.Background()
	for _, n := range []string{ns, "workspace-analytics-prod", "workspace-rogue"} {
		fixture.CreateNamespaces(t, c, n)
		_, err := kube.CoreV1().ServiceAccounts(n).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		if err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, o := range []struct{ name, resource string }{
		{"access-policy", "validatingadmissionpolicies"},
		{"access-policy-binding", "validatingadmissionpolicybindings"},
	} {
		u := renderedObject(t, accessGolden, o.name)
		gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: o.resource}
		if _, err := dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatalf("cannot create the rendered %s: %v", o.name, err)
		}
	}

	rogue := executorPod("workspace-rogue", "rogue-cluster", "high-memory-pool", ns)
	var rejected error
	fixture.Eventually(t, fixture.PolicyEnforced, "the policy rejecting an executor of a QueryService the pool does not allow", func() error {
		p, err := kube.CoreV1().Pods(rogue.Namespace).Create(ctx, rogue, metav1.CreateOptions{})
		if err == nil {
			_ = kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			return fmt.Errorf("executor %s admitted", p.Name)
		}
		rejected = err
		return nil
	})
	return rejected
}

// TestAccessPolicyAdmitsOnlyAttachedExecutors installs the admission policy
// the function renders for a Deny-mode pool and creates pods: executors of
// attached QueryServices and the pool's own pods are admitted, everything
// else that aims at the pool's nodes is rejected with a message naming the
// pool and how to get allowed, and pods of other pools are left alone.
func TestAccessPolicyAdmitsOnlyAttachedExecutors(t *testing.T) {
	ctx := context.Background()
	rejected := installAccessPolicy(t)
	for _, want := range []string{"pool e6-pools/high-memory-pool", "QueryService workspace-rogue/rogue-cluster is not one", "spec.allowedQueryServices", "spec.executor.poolRef"} {
		if !strings.Contains(rejected.Error(), want) {
			t.Errorf("rejection %q does not say %q", rejected, want)
		}
	}

	own := executorPod(ns, "", "high-memory-pool", ns)
	own.Labels["e6data.io/component"] = "placeholder"
	blanket := executorPod("workspace-rogue", "rogue-cluster", "other-pool", ns)
	blanket.Spec.NodeSelector = nil
	blanket.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	viaAffinity := executorPod("workspace-rogue", "rogue-cluster", "other-pool", ns)
	viaAffinity.Spec.Tolerations = nil
	viaAffinity.Spec.NodeSelector = nil
	viaAffinity.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "e6data.io/pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"high-memory-pool"}}}}},
	}}}
	onlyTolerates := executorPod("workspace-rogue", "rogue-cluster", "high-memory-pool", ns)
	onlyTolerates.Spec.NodeSelector = nil
	otherNamespacePool := executorPod("workspace-rogue", "rogue-cluster", "high-memory-pool", "tenant-b")
	noExecuteOnly := executorPod("workspace-rogue", "rogue-cluster", "high-memory-pool", ns)
	noExecuteOnly.Spec.NodeSelector = nil
	noExecuteOnly.Spec.Tolerations = []corev1.Toleration{{Key: "e6data.io/pool", Operator: corev1.TolerationOpEqual, Value: "high-memory-pool"}}
	nodeNameNameToleration := executorPod("workspace-rogue", "rogue-cluster", "high-memory-pool", ns)
	nodeNameNameToleration.Spec.NodeSelector = nil
	nodeNameNameToleration.Spec.NodeName = "high-memory-pool-node"
	nodeNameNameToleration.Spec.Tolerations = nodeNameNameToleration.Spec.Tolerations[:1]
	nodeNameBare := executorPod("workspace-rogue", "rogue-cluster", "high-memory-pool", ns)
	nodeNameBare.Spec.NodeSelector, nodeNameBare.Spec.Tolerations = nil, nil
	nodeNameBare.Spec.NodeName = "high-memory-pool-node"

	cases := map[string]struct {
		reason string
		pod    *corev1.Pod
		want   string // "" admitted, else a part of the rejection
	}{
		"AttachedQueryService": {
			reason: "An executor of an attached QueryService is admitted.",
			pod:    executorPod("workspace-analytics-prod", "analytics-cluster", "high-memory-pool", ns),
		},
		"AttachedNameWrongNamespace": {
			reason: "A QueryService is its namespace and name: the allowed name in another namespace is rejected.",
			pod:    executorPod("workspace-rogue", "analytics-cluster", "high-memory-pool", ns),
			want:   "QueryService workspace-rogue/analytics-cluster is not one",
		},
		"NoQueryServiceLabel": {
			reason: "A pool-targeted pod without the QueryService label is rejected, saying so.",
			pod:    executorPod("workspace-analytics-prod", "", "high-memory-pool", ns),
			want:   "this pod has no e6data.io/query-service label",
		},
		"PoolsOwnPods": {
			reason: "The pool's placeholders, in the pool namespace, are admitted.",
			pod:    own,
		},
		"TolerationsAlone": {
			reason: "Tolerating both pool taints is enough to land on the pool's nodes, so it is checked.",
			pod:    onlyTolerates,
			want:   "pool e6-pools/high-memory-pool",
		},
		"NodeAffinity": {
			reason: "A required node affinity on the pool label is checked like a node selector.",
			pod:    viaAffinity,
			want:   "pool e6-pools/high-memory-pool",
		},
		"BlanketToleration": {
			reason: "A pod that tolerates every taint and selects no pool (a node daemon) is not this policy's business.",
			pod:    blanket,
		},
		"NoExecuteTolerationAlone": {
			reason: "Tolerating the pool's NoExecute identity taint (a toleration of its key and value without an effect) is what running on a pool node takes, so it is checked.",
			pod:    noExecuteOnly,
			want:   "pool e6-pools/high-memory-pool",
		},
		"NodeNameWithPoolToleration": {
			reason: "spec.nodeName with the toleration of the pool name's NoSchedule taint is checked: it skips the scheduler.",
			pod:    nodeNameNameToleration,
			want:   "pool e6-pools/high-memory-pool",
		},
		"NodeNameWithoutTolerations": {
			reason: "spec.nodeName without pool tolerations is admitted: the NoExecute identity taint keeps it off pool nodes (kubelet admission and taint eviction), and it may be bound anywhere else.",
			pod:    nodeNameBare,
		},
		"SameNameOtherNamespace": {
			reason: "A pod aimed at tenant-b's high-memory-pool is not this pool's business.",
			pod:    otherNamespacePool,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := kube.CoreV1().Pods(tc.pod.Namespace).Create(ctx, tc.pod, metav1.CreateOptions{})
			checkAdmission(t, tc.reason, "create", err, tc.want)
		})
	}
}

// TestAccessPolicyChecksUpdates installs the same rendered policy and
// updates pods: an update that makes a pod aim at the pool, or that
// changes a pod that still has scheduling gates, is checked like a
// creation; other updates of a pod that already aimed at the pool (an
// attached executor's labels) are not, and nor are pods of no pool.
// Kubernetes lets an update add tolerations to any pod and node selectors
// to a gated one (pkg/apis/core/validation ValidatePodUpdate, KEP-3838).
func TestAccessPolicyChecksUpdates(t *testing.T) {
	ctx := context.Background()
	installAccessPolicy(t)
	tolerate := func(p *corev1.Pod) {
		p.Spec.Tolerations = executorPod("", "", "high-memory-pool", ns).Spec.Tolerations
	}
	gated := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/hold"}}
		return p
	}
	plain := func(nsName string) *corev1.Pod {
		p := executorPod(nsName, "rogue-cluster", "high-memory-pool", ns)
		p.Spec.NodeSelector, p.Spec.Tolerations = nil, nil
		return p
	}
	cases := map[string]struct {
		reason string
		pod    *corev1.Pod
		mutate func(*corev1.Pod)
		want   string // "" admitted, else a part of the rejection
	}{
		"TolerationsAdded": {
			reason: "Adding the pool's tolerations to a pod that did not aim at it is checked.",
			pod:    plain("workspace-rogue"),
			mutate: tolerate,
			want:   "QueryService workspace-rogue/rogue-cluster is not one",
		},
		"SelectorAddedWhileGated": {
			reason: "Adding the pool's node selector to a gated pod is checked.",
			pod:    gated(plain("workspace-rogue")),
			mutate: func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"e6data.io/pool": "high-memory-pool"} },
			want:   "QueryService workspace-rogue/rogue-cluster is not one",
		},
		"AttachedExecutorRelabelled": {
			reason: "A label update of an attached executor is not refused.",
			pod:    executorPod("workspace-analytics-prod", "analytics-cluster", "high-memory-pool", ns),
			mutate: func(p *corev1.Pod) { p.Labels["team"] = "analytics" },
		},
		"GatedAttachedExecutorUngated": {
			reason: "An attached executor's gate removal is checked and admitted.",
			pod:    gated(executorPod("workspace-analytics-prod", "analytics-cluster", "high-memory-pool", ns)),
			mutate: func(p *corev1.Pod) { p.Spec.SchedulingGates = nil },
		},
		"OtherPodRelabelled": {
			reason: "An update of a pod that aims at no pool is not this policy's business.",
			pod:    plain("workspace-rogue"),
			mutate: func(p *corev1.Pod) { p.Labels["team"] = "rogue" },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := kube.CoreV1().Pods(tc.pod.Namespace).Create(ctx, tc.pod, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("%s\ncreate: %v", tc.reason, err)
			}
			tc.mutate(p)
			_, err = kube.CoreV1().Pods(p.Namespace).Update(ctx, p, metav1.UpdateOptions{})
			checkAdmission(t, tc.reason, "update", err, tc.want)
		})
	}
}

// checkAdmission fails t unless request op's err says what want asks: ""
// admitted, else a rejection that contains want.
func checkAdmission(t *testing.T, reason, op string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s\n%s: %v, want admitted", reason, op, err)
	case want != "" && err == nil:
		t.Errorf("%s\n%s admitted, want rejected with %q", reason, op, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s\n%s: %v, want a rejection with %q", reason, op, err, want)
	}
}
