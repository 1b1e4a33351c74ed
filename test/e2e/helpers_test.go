package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	poolv1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// What the scenarios read of and do to a cluster, as users and operators
// would: claims and their status, pool nodes and pods, executors.

type (
	schemaGVK  = schema.GroupVersionKind
	restConfig = *rest.Config
)

func gvk(apiVersion, kind string) schemaGVK {
	gv := strings.SplitN(apiVersion, "/", 2)
	return schemaGVK{Group: gv[0], Version: gv[1], Kind: kind}
}

// mustApply applies manifest, failing t when it cannot.
func mustApply(t *testing.T, ctx context.Context, cfg restConfig, manifest string) {
	t.Helper()
	if err := localcp.Apply(ctx, cfg, []byte(manifest)); err != nil {
		t.Fatal(err)
	}
}

// mustApplyFile applies the manifests of the file at the slash-separated
// path joined from parts, failing t when it cannot.
func mustApplyFile(t *testing.T, ctx context.Context, cfg restConfig, parts ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(filepath.Join(parts...)))
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, ctx, cfg, string(b))
}

// mustList lists what matches opts into l, failing t when it cannot.
func mustList(t *testing.T, ctx context.Context, c client.Client, l client.ObjectList, opts ...client.ListOption) {
	t.Helper()
	if err := c.List(ctx, l, opts...); err != nil {
		t.Fatal(err)
	}
}

// ensureNamespace creates namespace ns unless it exists.
func ensureNamespace(ctx context.Context, c client.Client, ns string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if kerrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func claim(ctx context.Context, s *devplane.Stack, name string) (*unstructured.Unstructured, error) {
	return claimIn(ctx, s, poolNS, name)
}

// claimIn reads the Pool claim ns/name.
func claimIn(ctx context.Context, s *devplane.Stack, ns, name string) (*unstructured.Unstructured, error) {
	return s.Get(ctx, gvk(claimAPI, "Pool"), ns, name)
}

// compositeIn reads the composite of the Pool claim ns/name.
func compositeIn(ctx context.Context, s *devplane.Stack, ns, name string) (*unstructured.Unstructured, error) {
	p, err := claimIn(ctx, s, ns, name)
	if err != nil {
		return nil, err
	}
	ref, _, _ := unstructured.NestedStringMap(p.Object, "spec", "resourceRef")
	if ref["name"] == "" {
		return nil, fmt.Errorf("pool %s/%s has no composite yet", ns, name)
	}
	return s.Get(ctx, gvk(ref["apiVersion"], ref["kind"]), "", ref["name"])
}

// readPool reads the Pool claim ns/name, and its status as the Pool API
// types it.
func readPool(ctx context.Context, s *devplane.Stack, ns, name string) (*unstructured.Unstructured, poolv1.PoolStatus, error) {
	var st poolv1.PoolStatus
	u, err := claimIn(ctx, s, ns, name)
	if err != nil {
		return nil, st, err
	}
	if m, ok := u.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st); err != nil {
			return nil, st, fmt.Errorf("the status of pool %s/%s: %w", ns, name, err)
		}
	}
	return u, st, nil
}

// deleteClaim deletes the Pool claim ns/name in the foreground.
func deleteClaim(ctx context.Context, c client.Client, ns, name string) error {
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(gvk(claimAPI, "Pool"))
	p.SetNamespace(ns)
	p.SetName(name)
	return c.Delete(ctx, p, client.PropagationPolicy(metav1.DeletePropagationForeground))
}

// conditionOf is the condition typ of an object's status.
func conditionOf(u *unstructured.Unstructured, typ string) map[string]any {
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return m
		}
	}
	return nil
}

// conditionFields returns the status, reason and message of a condition.
func conditionFields(u *unstructured.Unstructured, typ string) (string, string, string) {
	m := conditionOf(u, typ)
	st, _ := m["status"].(string)
	r, _ := m["reason"].(string)
	msg, _ := m["message"].(string)
	return st, r, msg
}

// condition returns the status of condition typ of u, or "".
func condition(u *unstructured.Unstructured, typ string) string {
	st, _, _ := conditionFields(u, typ)
	return st
}

// queryServiceEntry is the entry of QueryService ns/qs in the status list
// field (allocations, attachedQueryServices) of a claim.
func queryServiceEntry(p *unstructured.Unstructured, field, ns, qs string) map[string]any {
	es, _, _ := unstructured.NestedSlice(p.Object, "status", field)
	for _, e := range es {
		m := e.(map[string]any)
		q, _ := m["queryService"].(map[string]any)
		if q["namespace"] == ns && q["name"] == qs {
			return m
		}
	}
	return nil
}

// allocationOf is the status.allocations entry of QueryService ns/qs.
func allocationOf(p *unstructured.Unstructured, ns, qs string) map[string]any {
	return queryServiceEntry(p, "allocations", ns, qs)
}

// attachedOf is the status.attachedQueryServices entry of QueryService
// ns/qs.
func attachedOf(p *unstructured.Unstructured, ns, qs string) map[string]any {
	return queryServiceEntry(p, "attachedQueryServices", ns, qs)
}

func allocation(p *unstructured.Unstructured, ns, qs string) int64 {
	n, _ := allocationOf(p, ns, qs)["poolExecutors"].(int64)
	return n
}

func allocatedAtOf(p *unstructured.Unstructured, ns, qs string) string {
	at, _ := allocationOf(p, ns, qs)["allocatedAt"].(string)
	return at
}

// qsName is the QueryService name of a status entry.
func qsName(m map[string]any) any {
	q, _ := m["queryService"].(map[string]any)
	return q["name"]
}

func countsOf(p *unstructured.Unstructured) string {
	var b strings.Builder
	for _, f := range []string{"totalExecutors", "availableExecutors", "occupiedExecutors", "currentNodes"} {
		n, _, _ := unstructured.NestedInt64(p.Object, "status", f)
		fmt.Fprintf(&b, "%s=%d ", f, n)
	}
	as, _, _ := unstructured.NestedSlice(p.Object, "status", "allocations")
	for _, a := range as {
		m := a.(map[string]any)
		q, _ := m["queryService"].(map[string]any)
		fmt.Fprintf(&b, "%v/%v=%v@%v ", q["namespace"], q["name"], m["poolExecutors"], m["allocatedAt"])
	}
	return b.String()
}

// readNodePool reads pool's Karpenter NodePool in the cluster c reaches.
func readNodePool(ctx context.Context, c client.Client, pool string) (*unstructured.Unstructured, error) {
	np := &unstructured.Unstructured{}
	np.SetGroupVersionKind(gvk(karpenterAPI, "NodePool"))
	return np, c.Get(ctx, client.ObjectKey{Name: pool + "-nodepool"}, np)
}

// nodePoolOwner is the owner mark on pool's NodePool in the cluster c
// reaches: which claim, of which management cluster, composed it.
func nodePoolOwner(ctx context.Context, c client.Client, pool string) (string, error) {
	np, err := readNodePool(ctx, c, pool)
	if err != nil {
		return "", err
	}
	return np.GetAnnotations()["burstpool.e6data.io/owner"], nil
}

// identity selects what carries pool ns/name's identity labels.
func identity(ns, name string) client.MatchingLabels {
	return client.MatchingLabels{qsv1.LabelPool: name, qsv1.LabelPoolNamespace: ns}
}

// warmups selects pool's warmup DaemonSets and their pods.
func warmups(pool string) client.MatchingLabels {
	return client.MatchingLabels{qsv1.LabelPool: pool, qsv1.LabelComponent: qsv1.ComponentWarmup}
}

// daemonSets lists the DaemonSets that match opts.
func daemonSets(ctx context.Context, c client.Client, opts ...client.ListOption) ([]appsv1.DaemonSet, error) {
	l := &appsv1.DaemonSetList{}
	if err := c.List(ctx, l, opts...); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// hasEvents reports whether ns holds an event that the field selector
// fields matches (involvedObject.*, reason, type), as the API server
// selects them.
func hasEvents(ctx context.Context, c client.Client, ns string, fields client.MatchingFields) (bool, error) {
	l := &corev1.EventList{}
	if err := c.List(ctx, l, client.InNamespace(ns), fields); err != nil {
		return false, err
	}
	return len(l.Items) > 0, nil
}

// capacityEvents lists the events of pool's PoolCapacity.
func capacityEvents(t *testing.T, ctx context.Context, c client.Client, pool string) []corev1.Event {
	t.Helper()
	ev := &corev1.EventList{}
	mustList(t, ctx, c, ev)
	var out []corev1.Event
	for _, e := range ev.Items {
		if e.InvolvedObject.Name == pool+"-capacity" {
			out = append(out, e)
		}
	}
	return out
}

// placement is where pool ns/name runs: the set of nodes that carry its
// identity, and its running pods (executors, placeholders, warmup) as
// "namespace/name" -> node.
func placement(t *testing.T, ctx context.Context, c client.Client, ns, name string) (map[string]bool, map[string]string) {
	t.Helper()
	nodes, pods := &corev1.NodeList{}, &corev1.PodList{}
	mustList(t, ctx, c, nodes, identity(ns, name))
	mustList(t, ctx, c, pods, identity(ns, name))
	nodeSet := map[string]bool{}
	for _, n := range nodes.Items {
		nodeSet[n.Name] = true
	}
	podNodes := map[string]string{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
			podNodes[p.Namespace+"/"+p.Name] = p.Spec.NodeName
		}
	}
	return nodeSet, podNodes
}

// executorsMoved lists the executors of analyticsNS among pods before that
// do not run on the same node in pods after, as "pod: node -> now".
func executorsMoved(before, after map[string]string) []string {
	return executorsMovedIn(analyticsNS, before, after)
}

// executorsMovedIn lists the executors of ns among pods before that do not
// run on the same node in pods after, as "pod: node -> now".
func executorsMovedIn(ns string, before, after map[string]string) []string {
	var moved []string
	for pod, node := range before {
		if strings.HasPrefix(pod, ns+"/") && after[pod] != node {
			moved = append(moved, fmt.Sprintf("%s: %s -> %q", pod, node, after[pod]))
		}
	}
	sort.Strings(moved)
	return moved
}

// runningPods names the Running, not terminating pods in ns with labels on
// node (any node when node is empty), in order.
func runningPods(ctx context.Context, c client.Client, ns string, labels map[string]string, node string) ([]string, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods.Items {
		if (node == "" || p.Spec.NodeName == node) && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// podsOn counts the Running, not terminating pods in ns with labels on node
// (any node when node is empty).
func podsOn(ctx context.Context, c client.Client, ns string, labels map[string]string, node string) (int, error) {
	pods, err := runningPods(ctx, c, ns, labels, node)
	return len(pods), err
}

// runningExecutors counts the Running pool executors of pool in ns, on any
// node.
func runningExecutors(ctx context.Context, c client.Client, ns, pool string) (int, error) {
	return podsOn(ctx, c, ns, map[string]string{qsv1.LabelPool: pool, qsv1.LabelExecutorType: qsv1.ExecutorTypePool}, "")
}

// waitExecutors waits until n pool executors of pool run in ns, failing t
// with what after timeout, and returns how long it took.
func waitExecutors(t *testing.T, timeout time.Duration, what string, c client.Client, ns, pool string, n int) time.Duration {
	t.Helper()
	return eventually(t, timeout, what, func(ctx context.Context) (bool, error) {
		got, err := runningExecutors(ctx, c, ns, pool)
		return got == n, fmt.Errorf("%d of %d executors Running (%v)", got, n, err)
	})
}

func poolNodes(t *testing.T, ctx context.Context, c client.Client, pool string) []corev1.Node {
	t.Helper()
	nodes := &corev1.NodeList{}
	mustList(t, ctx, c, nodes, client.MatchingLabels{qsv1.LabelPool: pool})
	return nodes.Items
}

func readyNodes(ns []corev1.Node) []corev1.Node {
	var out []corev1.Node
	for _, n := range ns {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && n.DeletionTimestamp == nil && !n.Spec.Unschedulable {
				out = append(out, n)
			}
		}
	}
	return out
}

func mustQS(t *testing.T, ctx context.Context, c client.Client, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(qsv1.GroupVersionKind)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatalf("QueryService %s/%s: %v", ns, name, err)
	}
	return u
}

// executorScheduling waits for pool ns/name to publish what its executors
// must carry (status.executorScheduling), and returns it: e2e executors
// follow the published contract, as a QueryService operator does.
func executorScheduling(t *testing.T, c client.Client, ns, name string) poolv1.ExecutorScheduling {
	t.Helper()
	var es poolv1.ExecutorScheduling
	eventually(t, waitStatus, "pool "+ns+"/"+name+" publishes status.executorScheduling", func(ctx context.Context) (bool, error) {
		var err error
		es, err = devplane.PoolExecutorScheduling(ctx, c, ns, name)
		return err == nil, err
	})
	return es
}

// scaleExecutors sets the replicas of QueryService ns/qs's pool executor
// Deployment to n, as its operator would.
func scaleExecutors(t *testing.T, ctx context.Context, c client.Client, ns, qs string, n int32) {
	t.Helper()
	if err := devplane.ScaleExecutors(ctx, c, ns, qs, n); err != nil {
		t.Fatal(err)
	}
}

// deleteExecutors deletes QueryService ns/qs's pool executor Deployment.
func deleteExecutors(ctx context.Context, c client.Client, ns, qs string) error {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: devplane.ExecutorDeploymentName(qs)}}
	return c.Delete(ctx, d)
}
