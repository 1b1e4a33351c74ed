// Package castandin is a stand-in for the Kubernetes Cluster Autoscaler
// on EKS managed node groups, and for provider-aws's NodeGroup controller,
// for end-to-end tests on a local control plane whose nodes kwok runs. It
// is test code: nothing that ships imports it.
//
// What it models of the Cluster Autoscaler (kubernetes/autoscaler
// cluster-autoscaler, FAQ and cloudprovider/aws/README.md):
//
//   - node groups discovered from the eks.aws.upbound.io NodeGroups in the
//     cluster, each scaled between its scalingConfig minSize and maxSize;
//   - the group's node template from the group itself (labels, taints,
//     the first instance type), as the autoscaler reads a managed node
//     group with DescribeNodegroup, so a group scales up from zero;
//   - scale-up for pods that are Pending and unschedulable (a pod the
//     scheduler nominated to a node, preempting, counts on that node),
//     whose priority
//     is not below the expendable cutoff (-10, the flag
//     --expendable-pods-priority-cutoff's default), and that fit the
//     template: its labels satisfy their nodeSelector, they tolerate its
//     NoSchedule and NoExecute taints, and their requests fit a node's
//     allocatable; they fill the room left on the group's nodes first
//     (which covers nodes just added, whose pods the scheduler has not
//     bound yet), then new nodes, packed first fit, at most maxSize;
//   - scale-up to minSize;
//   - scale-down of a node that runs no pod but DaemonSet pods, once it has
//     been so for ScaleDownAfter (the autoscaler's
//     --scale-down-unneeded-time), never below minSize. A node with any
//     other pod stays, so executors marked safe-to-evict "false" are never
//     moved (it does not model moving pods off underutilised nodes).
//
// What it models of provider-aws: a NodeGroup is Ready and Synced once it
// is seen, and status.atProvider.scalingConfig reports the group's node
// count as desiredSize. Nodes carry what an EKS managed node group's nodes
// carry: the group's labels and taints, eks.amazonaws.com/nodegroup and
// eks.amazonaws.com/capacityType, the instance type and architecture, and
// the allocatable of the EKS AL2023 AMI for the type (internal/sizing).
//
// Not modelled: launch latency (nodes are Ready at once), balancing
// between groups, expanders, backoff, pod affinity and topology spread.
package castandin

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/internal/sizing"
)

// Labels EKS puts on a managed node group's nodes.
const (
	LabelNodeGroup    = "eks.amazonaws.com/nodegroup"
	LabelCapacityType = "eks.amazonaws.com/capacityType"
)

// ExpendableCutoff is the Cluster Autoscaler's default
// --expendable-pods-priority-cutoff: pods below it do not trigger
// scale-up.
const ExpendableCutoff = -10

// Autoscaler scales kwok nodes for the cluster's EKS NodeGroups. Run
// blocks until ctx ends; each Step is one scan, idempotent given the same
// cluster.
type Autoscaler struct {
	Client client.Client
	// ScaleDownAfter is how long a node stays empty before it goes.
	ScaleDownAfter time.Duration
	// Interval between scans; 1s when zero.
	Interval time.Duration
	// NodeAnnotation marks nodes kwok manages ("key=value").
	NodeAnnotation string
	// Logf narrates scale-ups and scale-downs; may be nil.
	Logf func(format string, args ...any)

	mu         sync.Mutex
	emptySince map[string]time.Time
	seq        int
}

// Group is one node group as the stand-in sees it.
type Group struct {
	Name         string // the NodeGroup object's name
	External     string // its name in the cloud
	Min, Max     int
	InstanceType string
	Spot         bool
	Labels       map[string]string
	Taints       []corev1.Taint
}

// GroupOf reads a NodeGroup managed resource.
func GroupOf(u *unstructured.Unstructured) (Group, error) {
	g := Group{Name: u.GetName(), External: u.GetAnnotations()["crossplane.io/external-name"]}
	if g.External == "" {
		g.External = g.Name
	}
	fp, _, _ := unstructured.NestedMap(u.Object, "spec", "forProvider")
	types, _, _ := unstructured.NestedStringSlice(fp, "instanceTypes")
	if len(types) == 0 {
		return g, fmt.Errorf("NodeGroup %s has no instanceTypes", g.Name)
	}
	g.InstanceType = types[0]
	g.Spot = fp["capacityType"] == "SPOT"
	sc, _, _ := unstructured.NestedSlice(fp, "scalingConfig")
	if len(sc) == 0 {
		return g, fmt.Errorf("NodeGroup %s has no scalingConfig", g.Name)
	}
	m, _ := sc[0].(map[string]any)
	g.Min, g.Max = intOf(m["minSize"]), intOf(m["maxSize"])
	g.Labels, _, _ = unstructured.NestedStringMap(fp, "labels")
	ts, _, _ := unstructured.NestedSlice(fp, "taint")
	for _, t := range ts {
		tm, _ := t.(map[string]any)
		k, _ := tm["key"].(string)
		v, _ := tm["value"].(string)
		e, _ := tm["effect"].(string)
		g.Taints = append(g.Taints, corev1.Taint{Key: k, Value: v, Effect: effectOf(e)})
	}
	return g, nil
}

// effectOf turns an EKS taint effect (NO_SCHEDULE) into Kubernetes's.
func effectOf(e string) corev1.TaintEffect {
	var b strings.Builder
	for _, w := range strings.Split(strings.ToLower(e), "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return corev1.TaintEffect(b.String())
}

func intOf(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// Allocatable is what a node of the group offers pods: the EKS AL2023
// AMI's allocatable for the type.
func (g Group) Allocatable() (corev1.ResourceList, error) {
	cat, err := sizing.LoadCatalog(sizing.CloudAWS)
	if err != nil {
		return nil, err
	}
	it, ok := cat.Lookup(g.InstanceType)
	if !ok {
		return nil, fmt.Errorf("instance type %s is not in the AWS catalog", g.InstanceType)
	}
	a := sizing.NodeAllocatable(sizing.CloudAWS, it)
	return corev1.ResourceList{
		corev1.ResourceCPU: a.CPU, corev1.ResourceMemory: a.Memory,
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}, nil
}

// Fits tells whether pod may run on a node of the group: the template's
// labels satisfy its nodeSelector and it tolerates every NoSchedule and
// NoExecute taint.
func (g Group) Fits(pod *corev1.Pod) bool {
	for k, v := range pod.Spec.NodeSelector {
		if g.Labels[k] != v {
			return false
		}
	}
	for _, t := range g.Taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Background(), &t, false) }) {
			return false
		}
	}
	return true
}

// requests is a pod's CPU and memory requests (its containers' sum).
func requests(p *corev1.Pod) (cpu, mem int64) {
	for _, c := range p.Spec.Containers {
		cpu += c.Resources.Requests.Cpu().MilliValue()
		mem += c.Resources.Requests.Memory().Value()
	}
	return cpu, mem
}

// Room is the CPU (millicores) and memory (bytes) a node has left.
type Room struct{ CPU, Memory int64 }

// RoomOf is what a node offering alloc has left with pods bound to it.
func RoomOf(alloc corev1.ResourceList, pods []*corev1.Pod) Room {
	r := Room{alloc.Cpu().MilliValue(), alloc.Memory().Value()}
	for _, p := range pods {
		c, m := requests(p)
		r.CPU -= c
		r.Memory -= m
	}
	return r
}

// NewNodes is how many new nodes offering alloc the pods need once the
// group's nodes (their room left) are used first, packed first fit, as the
// autoscaler simulates scheduling on existing and upcoming nodes before it
// adds any; pods that fit no node are left out.
func NewNodes(alloc corev1.ResourceList, existing []Room, pods []*corev1.Pod) int {
	rooms := slices.Clone(existing)
	added := 0
	for _, p := range pods {
		c, m := requests(p)
		if c > alloc.Cpu().MilliValue() || m > alloc.Memory().Value() {
			continue
		}
		i := slices.IndexFunc(rooms, func(r Room) bool { return r.CPU >= c && r.Memory >= m })
		if i < 0 {
			rooms = append(rooms, Room{alloc.Cpu().MilliValue(), alloc.Memory().Value()})
			i, added = len(rooms)-1, added+1
		}
		rooms[i].CPU -= c
		rooms[i].Memory -= m
	}
	return added
}

// Run scans every Interval until ctx ends.
func (a *Autoscaler) Run(ctx context.Context) {
	iv := a.Interval
	if iv == 0 {
		iv = time.Second
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		if err := a.Step(ctx, time.Now()); err != nil && ctx.Err() == nil {
			a.logf("cluster-autoscaler stand-in: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *Autoscaler) logf(format string, args ...any) {
	if a.Logf != nil {
		a.Logf(format, args...)
	}
}

// Step is one scan: every NodeGroup is marked Ready, scaled up for its
// unschedulable pods and its minimum, and scaled down by its empty nodes.
func (a *Autoscaler) Step(ctx context.Context, now time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.emptySince == nil {
		a.emptySince = map[string]time.Time{}
	}
	ngs := &unstructured.UnstructuredList{}
	ngs.SetAPIVersion("eks.aws.upbound.io/v1beta1")
	ngs.SetKind("NodeGroupList")
	if err := a.Client.List(ctx, ngs); err != nil {
		return fmt.Errorf("cannot list NodeGroups: %w", err)
	}
	pods := &corev1.PodList{}
	if err := a.Client.List(ctx, pods); err != nil {
		return fmt.Errorf("cannot list pods: %w", err)
	}
	var pending []*corev1.Pod
	byNode := map[string][]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		switch {
		case p.Spec.NodeName != "":
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		case p.Status.NominatedNodeName != "":
			// Preempting its way onto a node: the autoscaler counts it
			// there, not as a pod that needs a new node.
			byNode[p.Status.NominatedNodeName] = append(byNode[p.Status.NominatedNodeName], p)
		case unschedulable(p) && (p.Spec.Priority == nil || *p.Spec.Priority >= ExpendableCutoff):
			pending = append(pending, p)
		}
	}
	sort.Slice(ngs.Items, func(i, j int) bool { return ngs.Items[i].GetName() < ngs.Items[j].GetName() })
	for i := range ngs.Items {
		u := &ngs.Items[i]
		if u.GetDeletionTimestamp() != nil {
			continue
		}
		g, err := GroupOf(u)
		if err != nil {
			return err
		}
		n, err := a.scale(ctx, now, g, pending, byNode)
		if err != nil {
			return err
		}
		if err := a.report(ctx, u, n); err != nil {
			return err
		}
	}
	return nil
}

// unschedulable tells whether the scheduler found no node for p.
func unschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// scale adds and removes g's nodes and returns how many it has.
func (a *Autoscaler) scale(ctx context.Context, now time.Time, g Group, pending []*corev1.Pod, byNode map[string][]*corev1.Pod) (int, error) {
	nodes := &corev1.NodeList{}
	if err := a.Client.List(ctx, nodes, client.MatchingLabels{LabelNodeGroup: g.External}); err != nil {
		return 0, err
	}
	alloc, err := g.Allocatable()
	if err != nil {
		return 0, err
	}
	var fit []*corev1.Pod
	for _, p := range pending {
		if g.Fits(p) {
			fit = append(fit, p)
		}
	}
	rooms := make([]Room, 0, len(nodes.Items))
	for _, nd := range nodes.Items {
		rooms = append(rooms, RoomOf(alloc, byNode[nd.Name]))
	}
	have := len(nodes.Items)
	want := max(have+NewNodes(alloc, rooms, fit), g.Min)
	want = min(want, max(g.Max, have))
	for have < want {
		if err := a.Client.Create(ctx, a.node(g, alloc)); err != nil {
			return have, err
		}
		have++
		a.logf("cluster-autoscaler stand-in: %s scaled up to %d (%d unschedulable pods fit its template)", g.External, have, len(fit))
	}
	// Scale down: nodes that run only DaemonSet pods, empty for long
	// enough, while the group stays at or above its minimum.
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name > nodes.Items[j].Name })
	for i := range nodes.Items {
		nd := &nodes.Items[i]
		if !empty(byNode[nd.Name]) {
			delete(a.emptySince, nd.Name)
			continue
		}
		since, ok := a.emptySince[nd.Name]
		if !ok {
			a.emptySince[nd.Name] = now
			continue
		}
		if now.Sub(since) < a.ScaleDownAfter || have <= g.Min {
			continue
		}
		if err := a.Client.Delete(ctx, nd); client.IgnoreNotFound(err) != nil {
			return have, err
		}
		delete(a.emptySince, nd.Name)
		have--
		a.logf("cluster-autoscaler stand-in: %s scaled down to %d (%s empty for %s)", g.External, have, nd.Name, now.Sub(since).Round(time.Second))
	}
	return have, nil
}

// empty tells whether pods are only DaemonSet pods.
func empty(pods []*corev1.Pod) bool {
	for _, p := range pods {
		if !slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "DaemonSet" }) {
			return false
		}
	}
	return true
}

// node is a new kwok node of g, as EKS makes a managed node group's node.
func (a *Autoscaler) node(g Group, alloc corev1.ResourceList) *corev1.Node {
	a.seq++
	name := fmt.Sprintf("%s-%d", g.External, a.seq)
	labels := map[string]string{}
	for k, v := range g.Labels {
		labels[k] = v
	}
	capacity := "ON_DEMAND"
	if g.Spot {
		capacity = "SPOT"
	}
	arch := "amd64"
	if cat, err := sizing.LoadCatalog(sizing.CloudAWS); err == nil {
		if it, ok := cat.Lookup(g.InstanceType); ok {
			arch = it.Arch
		}
	}
	for k, v := range map[string]string{
		LabelNodeGroup: g.External, LabelCapacityType: capacity, corev1.LabelInstanceTypeStable: g.InstanceType,
		corev1.LabelArchStable: arch, corev1.LabelOSStable: "linux", corev1.LabelHostname: name, "type": "kwok",
	} {
		labels[k] = v
	}
	key, value, _ := strings.Cut(a.NodeAnnotation, "=")
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{key: value}},
		Spec:       corev1.NodeSpec{Taints: slices.Clone(g.Taints)},
		Status:     corev1.NodeStatus{Capacity: alloc, Allocatable: alloc},
	}
}

// report writes what provider-aws would: Ready and Synced, and the group's
// node count as desiredSize.
func (a *Autoscaler) report(ctx context.Context, u *unstructured.Unstructured, n int) error {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	desired, _, _ := unstructured.NestedSlice(u.Object, "status", "atProvider", "scalingConfig")
	if len(conds) == 2 && len(desired) == 1 && intOf(desired[0].(map[string]any)["desiredSize"]) == n {
		return nil
	}
	ts := metav1.Now().UTC().Format(time.RFC3339)
	_ = unstructured.SetNestedSlice(u.Object, []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": ts},
		map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": ts},
	}, "status", "conditions")
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"desiredSize": int64(n)}}, "status", "atProvider", "scalingConfig")
	if err := a.Client.Status().Update(ctx, u); err != nil {
		return fmt.Errorf("cannot report NodeGroup %s: %w", u.GetName(), err)
	}
	return nil
}
