package decision

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/cloudpool"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
	"github.com/burstpool/burstpool/internal/sizing"
)

// nodeGroupSuffix ends the name of a pool's node group object:
// "{pool}-nodegroup", and "{pool}-{template}-nodegroup" after its template
// changed.
const nodeGroupSuffix = "-nodegroup"

// AnnotationNodeTemplate records on a node group what cannot change in
// place: its instance types and capacity ("r7gd.4xlarge,r6gd.4xlarge/spot").
// A pool whose template changes gets a new group and drains the old one.
const AnnotationNodeTemplate = "e6data.io/node-template"

// nodeTemplate is the immutable part of a node group, as
// AnnotationNodeTemplate records it.
type nodeTemplate struct {
	Types []string
	Spot  bool
}

func (t nodeTemplate) String() string {
	c := "on-demand"
	if t.Spot {
		c = "spot"
	}
	return strings.Join(t.Types, ",") + "/" + c
}

// observedTemplate reads an observed node group's template; ok is false
// when it carries none.
func observedTemplate(o *structpb.Struct) (nodeTemplate, bool) {
	v := observed.String(o, "metadata", "annotations", AnnotationNodeTemplate)
	types, capacity, ok := strings.Cut(v, "/")
	if !ok || types == "" {
		return nodeTemplate{}, false
	}
	return nodeTemplate{Types: strings.Split(types, ","), Spot: capacity == "spot"}, true
}

// nodeGroupNodes is how many nodes an observed node group reports, and
// whether it reports any count: EKS's scalingConfig desiredSize, GKE's
// and AKS's nodeCount, from status.atProvider.
func nodeGroupNodes(o *structpb.Struct) (int64, bool) {
	ap := observed.Field(o, "status", "atProvider").GetStructValue()
	if v := observed.Field(ap, "nodeCount"); v != nil {
		return observed.Number(v), true
	}
	for _, sc := range observed.Field(ap, "scalingConfig").GetListValue().GetValues() {
		if v := observed.Field(sc.GetStructValue(), "desiredSize"); v != nil {
			return observed.Number(v), true
		}
	}
	return 0, false
}

// decideNodeGroup decides the pool's node group: f.MinNodes to f.MaxNodes
// nodes of the sized type (a diversified spot set on EKS), which the
// cluster's Cluster Autoscaler scales.
// Its types and capacity cannot change in place (EKS's instanceTypes and
// capacityType are immutable; burstpool treats GKE's machine type and
// spot, and AKS's vmSize and priority, the same way), so a new template
// gets a new group, named after it, and the old one (rnCloudPoolDraining)
// is held: no scale-up (cloudpool.TaintHold), minimum zero, so the
// autoscaler removes its nodes as their executors end (they are not safe
// to evict); it is deleted once the new group is Ready and the old one
// reports no nodes. Suspended, the group is kept and held the same way;
// Resume lifts the hold.
//
// Warm slots are decided as for every method (decidePlaceholders):
// placeholders, which the autoscaler adds nodes for as for any pod at or
// above its expendable cutoff (-10, their default priority), or, where the
// Cluster Autoscaler acts on CapacityBuffers, a buffer (decideWarmMethod,
// buffer.go). The node group is the same either way.
func decideNodeGroup(in Input, f Facts, res sizing.Result, spot bool) (string, Outcome) {
	var o Outcome
	want := nodeTemplate{Types: []string{res.InstanceType}, Spot: spot}
	if spot && len(res.SpotTypes) > 0 {
		want.Types = res.SpotTypes // nodeGroupSize
	}
	cur, old, waits := nodeGroupSlots(in.Observed[objects.ComposedCloudPool], in.Observed[objects.ComposedCloudPoolDraining], want)
	if waits != nil {
		want = *waits
	}
	name := in.Pool + nodeGroupSuffix
	switch {
	case cur != nil:
		name = observed.String(cur, "metadata", "name")
	case old != nil:
		name = in.Pool + "-" + typeSlug(want.String()) + nodeGroupSuffix
	}
	base := nodeGroupInput(in, f)
	ng := base
	ng.Name, ng.InstanceTypes, ng.Spot = name, want.Types, want.Spot
	ng.Archs = sizedArchs(base.Archs, want.Types, res)
	ng.MinNodes, ng.MaxNodes, ng.Hold = int32(f.MinNodes), int32(f.MaxNodes), in.Spec.Suspend
	u, err := cloudpool.BuildNodeGroup(ng)
	if err != nil {
		o.Problem = failed("NodeGroupIncomplete", err.Error())
		o.preserve(objects.ComposedCloudPool, objects.ComposedCloudPoolDraining)
		return "", o
	}
	u.SetAnnotations(mergeStrings(u.GetAnnotations(), map[string]string{AnnotationNodeTemplate: want.String()}))
	ready := observed.Ready(cur, false)
	o.desire(objects.ComposedCloudPool, u, ready, true)
	msg := fmt.Sprintf("%s node group %s holds %d to %d %s node(s), scaled by the Cluster Autoscaler (method node-group from %s)", f.Detection.Cloud, name, f.MinNodes, f.MaxNodes, want, f.Detection.Source)
	if in.Spec.Suspend {
		msg += "; suspended: the autoscaler adds no node and removes each as its executors end"
	}
	if waits != nil {
		msg += fmt.Sprintf("; the pool's nodes move to %s once %s of the previous template is gone", nodeTemplate{Types: []string{res.InstanceType}, Spot: spot}, observed.String(old, "metadata", "name"))
	}
	if old != nil {
		msg += drainNodeGroup(&o, base, old, ready, f.MaxNodes)
	}
	o.condition(CondProvisioned, metav1.ConditionTrue, "NodeGroup", msg)
	o.Conditions = append(o.Conditions, spotCondition(in, want.Spot, want.Types)) // spot.go
	return name, o
}

// nodeGroupSlots decides which observed group serves the pool (cur, nil
// for a new one) and which drains (old), for the template want. A group of
// another template drains while a new one serves want; going back to the
// draining group's template swaps the two, so the draining group serves
// again and nothing is deleted under running executors. A third template
// while a group still drains waits: the serving group keeps its own
// template (waits) until the draining one is gone, since a pool has one
// draining slot.
func nodeGroupSlots(cur, old *structpb.Struct, want nodeTemplate) (serving, draining *structpb.Struct, waits *nodeTemplate) {
	t, ok := observedTemplate(cur)
	if cur == nil || (ok && t.String() == want.String()) {
		return cur, old, nil
	}
	if old == nil {
		return nil, cur, nil // a new group; cur drains
	}
	if ot, ook := observedTemplate(old); ook && ot.String() == want.String() {
		return old, cur, nil // back to the draining group's template
	}
	if !ok {
		// cur carries no template to keep (its annotation was removed) and
		// the draining slot is taken: it is kept, never deleted, and
		// takes the template wanted.
		return cur, old, nil
	}
	return cur, old, &t
}

// drainNodeGroup holds the node group of a previous template until it has
// no nodes and its replacement is Ready, and says so.
func drainNodeGroup(o *Outcome, base cloudpool.NodeGroupInput, old *structpb.Struct, replacementReady bool, maxNodes int64) string {
	name := observed.String(old, "metadata", "name")
	n, known := nodeGroupNodes(old)
	if replacementReady && known && n == 0 {
		return fmt.Sprintf("; %s of the previous template has no nodes left and is deleted", name)
	}
	t, ok := observedTemplate(old)
	if !ok {
		// A group burstpool did not annotate: keep it as it is.
		o.desire(objects.ComposedCloudPoolDraining, &unstructured.Unstructured{Object: observed.Keep(old).AsMap()}, true, false)
		return fmt.Sprintf("; %s stays as it is until it is removed by hand", name)
	}
	base.Name, base.InstanceTypes, base.Spot, base.Hold = name, t.Types, t.Spot, true
	// A type the catalog no longer lists keeps the architecture of the
	// group's AMI type.
	base.Archs = maps.Clone(base.Archs)
	for _, it := range t.Types {
		if a := cloudpool.AMITypeArch(observed.String(old, "spec", "forProvider", "amiType")); base.Archs[it] == "" && a != "" {
			base.Archs[it] = a
		}
	}
	base.MinNodes, base.MaxNodes = 0, int32(max(maxNodes, 1))
	u, err := cloudpool.BuildNodeGroup(base)
	if err != nil {
		o.desire(objects.ComposedCloudPoolDraining, &unstructured.Unstructured{Object: observed.Keep(old).AsMap()}, true, false)
		return fmt.Sprintf("; %s of the previous template stays as it is: %v", name, err)
	}
	u.SetAnnotations(mergeStrings(u.GetAnnotations(), map[string]string{AnnotationNodeTemplate: t.String()}))
	o.desire(objects.ComposedCloudPoolDraining, u, true, false)
	return fmt.Sprintf("; %s of the previous template %s takes no new nodes and is deleted once its executors end", name, t)
}

// nodeGroupSize is the sizing decision as a node group takes it: one type,
// or on EKS with spot the spot set cut to the sized type's shape
// (sameShape); the types status.sizing.instanceTypes lists are those.
func nodeGroupSize(cloud string, res sizing.Result, spot bool) sizing.Result {
	types := []string{res.InstanceType}
	if spot && cloud == cloudAWS && len(res.SpotTypes) > 0 {
		types = sameShape(res.SpotTypes, awsCatalogLookup)
	}
	res.SpotTypes = nil
	if spot {
		res.SpotTypes = types
	}
	offered := res.Offered[:0:0]
	for _, o := range res.Offered {
		if slices.Contains(types, o.Name) {
			offered = append(offered, o)
		}
	}
	res.Offered = offered
	return res
}

// sameShape keeps of types (the first is the sized type) those of the same
// vCPUs and memory as the first: the Cluster Autoscaler builds a group's
// node template from one type and assumes every node of the group is that
// size (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md,
// "Using Mixed Instances Policies and Spot Instances": the types should
// have the same number of vCPUs and the same RAM). A type lookup does not
// find is left out.
func sameShape(types []string, lookup func(string) (sizing.InstanceType, bool)) []string {
	first, ok := lookup(types[0])
	out := []string{types[0]}
	if !ok {
		return out
	}
	for _, t := range types[1:] {
		it, ok := lookup(t)
		if ok && it.CPU.Cmp(first.CPU) == 0 && it.Memory.Cmp(first.Memory) == 0 {
			out = append(out, t)
		}
	}
	return out
}

// awsCatalogLookup finds a type in the embedded AWS catalog.
func awsCatalogLookup(name string) (sizing.InstanceType, bool) {
	c, err := sizing.LoadCatalog(sizing.CloudAWS)
	if err != nil {
		return sizing.InstanceType{}, false
	}
	return c.Lookup(name)
}

// typeArchs are the architectures of the instance types of the pool's
// cloud, its settings' catalogOverrides included, by type: a node group's
// AMI type follows them (cloudpool.NodeGroupInput.Archs).
func typeArchs(cloud string, overrides []v1beta1.InstanceType) map[string]string {
	out := map[string]string{}
	if cat, err := sizing.LoadCatalog(sizing.Cloud(cloud)); err == nil {
		for _, it := range cat.WithOverrides(catalogOverrides(overrides)).Types {
			out[it.Name] = it.Arch
		}
	}
	return out
}

// sizedArchs are archs with the sizing decision's architecture for the
// types the catalog does not list: the sizer offers only types of the
// sized type's architecture.
func sizedArchs(archs map[string]string, types []string, res sizing.Result) map[string]string {
	out := maps.Clone(archs)
	for _, t := range types {
		if out[t] == "" && res.Arch != "" {
			out[t] = res.Arch
		}
	}
	return out
}

// nodeGroupInput is what every node group of the pool shares: identity,
// labels, taints and the settings.
func nodeGroupInput(in Input, f Facts) cloudpool.NodeGroupInput {
	labels := ownLabels(in.Spec.NodeSelector)
	delete(labels, qsv1alpha1.LabelPool)
	delete(labels, qsv1alpha1.LabelPoolNamespace)
	ng := cloudpool.NodeGroupInput{
		Pool: in.Pool, Namespace: in.Namespace, Cloud: f.Detection.Cloud, Archs: typeArchs(f.Detection.Cloud, in.Config.CatalogOverrides),
		Labels: labels, Taints: objects.PoolTaints(in.Pool, in.Namespace, f.Scheduling.Tolerations)[len(cloudpool.IdentityTaints(in.Pool, in.Namespace)):],
		ClusterName: in.Config.ClusterName,
	}
	if s := in.Config.NodeGroups; s != nil {
		ng.Settings = *s
	}
	return ng
}

// mergeStrings is a with b's entries added.
func mergeStrings(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
