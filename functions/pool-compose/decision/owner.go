package decision

import (
	"fmt"
	"maps"
	"slices"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// HeldName is a cluster-scoped object that another pool (or something
// else) holds under a name this pool would compose.
type HeldName struct {
	Kind, Name string
	// Owner is "namespace/name" of the pool that holds it; empty when no
	// pool does.
	Owner string
}

// Message says whose the name is and how to pick another.
func (t HeldName) Message(pool, ns string) string {
	owner := "no pool (it was made outside burstpool)"
	if t.Owner != "" {
		owner = "pool " + t.Owner
	}
	return fmt.Sprintf("%s %s belongs to %s, so this pool (%s/%s) composes nothing more and keeps only the objects it composed already: cluster-wide objects are named after the pool, so a pool's name must be unique across namespaces. "+
		"Nothing of the other pool is changed. Delete this Pool and create it under a name no other namespace uses, for example %s-%s",
		t.Kind, t.Name, owner, ns, pool, ns, pool)
}

// OwnedName is a cluster-scoped object a pool names after itself ("{pool}"
// and a suffix). Names of cluster-scoped objects are unique across
// namespaces, so two pools of one name in two namespaces would share it:
// the function reads each by name before it composes anything, and a pool
// whose name is taken composes nothing more (see Input.Existing).
type OwnedName struct {
	// Resource is the composed-resource name of the object.
	Resource   resource.Name
	APIVersion string
	Kind       string
	Suffix     string
}

// OwnedNames are the cluster-scoped objects whose names pools share a
// space of, and that the function can ask for whatever the cluster runs:
// the PoolCapacity (the package's own kind) and the placeholder
// PriorityClass (built in). Every pool composes its PoolCapacity, so a pool
// that holds {pool}-nodepool or {pool}-nodeclass holds {pool}-capacity too;
// asking for the NodePool by name would make the requirements depend on
// which CRDs the cluster has, and they must depend on the spec alone.
var OwnedNames = []OwnedName{
	{Resource: objects.ComposedCapacity, APIVersion: objects.CapacityAPIVersion, Kind: objects.CapacityKind, Suffix: objects.SuffixCapacity},
	{Resource: objects.ComposedPlaceholderPriorityClass, APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Suffix: objects.SuffixPlaceholder},
	{Resource: objects.ComposedAgentPriorityClass, APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Suffix: objects.SuffixNodeAgent},
}

// heldName returns the first object of existing (in OwnedNames order)
// that is not pool ns/pool's own; ok is false when every one is its own.
// An object is a pool's own when its identity labels name the pool.
func heldName(pool, ns string, existing map[resource.Name]*structpb.Struct) (HeldName, bool) {
	for _, o := range OwnedNames {
		u := existing[o.Resource]
		if u == nil {
			continue
		}
		p := observed.String(u, "metadata", "labels", qsv1alpha1.LabelPool)
		pns := observed.String(u, "metadata", "labels", qsv1alpha1.LabelPoolNamespace)
		if p == pool && pns == ns {
			continue
		}
		t := HeldName{Kind: o.Kind, Name: pool + o.Suffix}
		if p != "" {
			t.Owner = pns + "/" + p
		}
		return t, true
	}
	return HeldName{}, false
}

// ownObjects are the observed composed resources whose identity labels
// name pool ns/pool, in name order: what the pool already controls. A pool
// whose name is taken keeps them as observed (Crossplane deletes whatever
// a function leaves out of desired state) and composes nothing more.
func ownObjects(pool, ns string, obs map[resource.Name]*structpb.Struct) []resource.Name {
	var out []resource.Name
	for _, n := range slices.Sorted(maps.Keys(obs)) {
		u := obs[n]
		if observed.String(u, "metadata", "labels", qsv1alpha1.LabelPool) == pool && observed.String(u, "metadata", "labels", qsv1alpha1.LabelPoolNamespace) == ns {
			out = append(out, n)
		}
	}
	return out
}
