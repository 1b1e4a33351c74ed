package remote

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/objects"
	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// provider-kubernetes' Object.
const (
	ObjectAPIVersion = "kubernetes.crossplane.io/v1alpha2"
	ObjectKind       = "Object"
)

// AnnotationOwner marks every object a pool composes in a workload cluster
// with "{management}/{namespace}/{pool}". It is an annotation: the value
// holds slashes, which no label value may.
const AnnotationOwner = "burstpool.e6data.io/owner"

// OwnerMark is the value of AnnotationOwner of a pool's remote objects.
// management is the management cluster's name (the clusterName setting).
func OwnerMark(management, ns, pool string) string {
	if management == "" {
		management = defaultManagementClusterID
	}
	return management + "/" + ns + "/" + pool
}

// ObjectName is the name of a new Object that wraps the remote object u of
// the pool in namespace ns whose workload cluster pc reaches:
// "{pc}-{ns}-{kind}-[{namespace}-]{name}-{hash}" (uniqueName), the hash
// of pc, ns and u's group, kind, namespace and name. Objects are
// cluster-scoped: the pool's namespace is part of the name because pools
// of one name in two namespaces compose objects of one name, the kind
// because an admission policy and its binding share a name, and the hash
// because dashes join parts that hold dashes ("team-a" and "burst",
// "team" and "a-burst").
func ObjectName(pc, ns string, u *unstructured.Unstructured) string {
	parts := []string{pc, ns, strings.ToLower(u.GetKind())}
	if n := u.GetNamespace(); n != "" {
		parts = append(parts, n)
	}
	group := ""
	if g, _, ok := strings.Cut(u.GetAPIVersion(), "/"); ok {
		group = g
	}
	return objects.UniqueName(strings.Join(append(parts, u.GetName()), "-"), objects.MaxObjectName, pc, ns, group, u.GetKind(), u.GetNamespace(), u.GetName())
}

// keptObjectName is the name of the observed Object n when it reaches the
// workload cluster pc; "" when there is none. An Object keeps the name it
// was created with: renaming it makes Crossplane delete it, and
// provider-kubernetes then deletes the workload cluster's object (its
// NodePool, with its nodes).
func keptObjectName(obs map[resource.Name]*structpb.Struct, n resource.Name, pc string) string {
	if o := obs[n]; o != nil && observed.String(o, "spec", "providerConfigRef", "name") == pc {
		return observed.String(o, "metadata", "name")
	}
	return ""
}

// objectNameOf is the name of the Object that wraps the remote object
// target of r's pool: the observed Object's that wraps it, else
// ObjectName's.
func objectNameOf(obs map[resource.Name]*structpb.Struct, r Remote, target *unstructured.Unstructured) string {
	for _, n := range slices.Sorted(maps.Keys(obs)) {
		m := observed.Field(obs[n], "spec", "forProvider", "manifest").GetStructValue()
		if !IsObject(n) || observed.String(m, "kind") != target.GetKind() || observed.String(m, "metadata", "name") != target.GetName() || observed.String(m, "metadata", "namespace") != target.GetNamespace() {
			continue
		}
		if k := keptObjectName(obs, n, r.ProviderConfig); k != "" {
			return k
		}
	}
	return ObjectName(r.ProviderConfig, r.Namespace, target)
}

// IsObject tells the composed-resource names of Objects from the
// others.
func IsObject(n resource.Name) bool {
	return n != objects.ComposedRemoteCapacity && strings.HasPrefix(string(n), objects.ComposedRemotePrefix)
}

// remoteKey is the render-cache key of a wrapped lazy object; empty when
// the object is not cached.
func remoteKey(key string, parts ...string) string {
	if key == "" {
		return ""
	}
	return "remote|" + strings.Join(parts, "|") + "|" + key
}

// queryKey encodes the query for the render cache.
func (r Remote) queryKey() string {
	b, err := json.Marshal(r.Query)
	if err != nil {
		return ""
	}
	return string(b)
}

// CapacityName is the PoolCapacity name of a new remote pool:
// "{providerConfig}-{namespace}-{pool}-capacity-{hash}" (uniqueName, the
// hash of the three). A local pool's "{pool}-capacity" is unique because
// the pool's other cluster-wide names live in the same cluster; pools of
// one name in two workload clusters share nothing else, so their
// PoolCapacities must not share a name either, whatever dashes their
// parts hold.
func CapacityName(pc, ns, pool string) string {
	return objects.UniqueName(pc+"-"+ns+"-"+pool+objects.SuffixCapacity, objects.MaxObjectName, pc, ns, pool)
}
