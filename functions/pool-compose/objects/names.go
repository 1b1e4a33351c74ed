package objects

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// Composed-resource names: the keys of the objects in desired and observed
// state. They are stable across releases, because renaming one makes
// Crossplane delete the object and create it anew.
const (
	ComposedNodePool  resource.Name = "nodepool"
	ComposedNodeClass resource.Name = "nodeclass"
	ComposedCloudPool resource.Name = "cloud-nodepool"
	// ComposedCloudPoolDraining is a CoreWeave NodePool of a previous instance
	// type, kept while it drains.
	ComposedCloudPoolDraining        resource.Name = "cloud-nodepool-draining"
	ComposedPlaceholderPriorityClass resource.Name = "placeholder-priorityclass"
	// ComposedAgentPriorityClass is the priority of the pool's node agents
	// (warmup and storage agent).
	ComposedAgentPriorityClass resource.Name = "node-agent-priorityclass"
	ComposedPlaceholder        resource.Name = "placeholder"
	// ComposedBuffer and ComposedBufferTemplate are the CapacityBuffer that holds
	// warm slots where an autoscaler acts on one, and its PodTemplate.
	ComposedBuffer         resource.Name = "capacity-buffer"
	ComposedBufferTemplate resource.Name = "capacity-buffer-podtemplate"
	ComposedStorageAgent   resource.Name = "storage-agent"
	ComposedCapacity       resource.Name = "capacity"
	ComposedAccessPolicy   resource.Name = "access-policy"
	ComposedAccessBinding  resource.Name = "access-policy-binding"
)

// Object name suffixes: the pool's objects are "{pool}{suffix}".
const (
	SuffixNodePool     = "-nodepool"
	SuffixNodeClass    = "-nodeclass"
	SuffixPlaceholder  = "-placeholder"
	SuffixBuffer       = "-warm-slots"
	SuffixStorageAgent = "-storage-agent"
	SuffixCapacity     = "-capacity"
	SuffixNodeAgent    = "-node-agent"
)

// MaxObjectName is the longest name of most Kubernetes objects (a DNS
// subdomain).
const MaxObjectName = 253

// UniqueName is the name readable (cut to fit in max) followed by a hash of
// parts, so names of different parts never collide: the parts are joined
// with NUL, which no name holds, so "team-a"+"burst" and "team"+"a-burst"
// hash apart, and 64 bits of SHA-256 leave no collision within reach.
// The readable start tells people whose the object is.
func UniqueName(readable string, max int, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	suffix := "-" + hex.EncodeToString(h[:8])
	if len(readable) > max-len(suffix) {
		readable = readable[:max-len(suffix)]
	}
	return strings.TrimRight(readable, "-.") + suffix
}

// KeptName is the metadata.name of the observed object n, or fresh when
// there is none. An object that exists keeps its name whatever the naming
// of new objects: renaming a composed object makes Crossplane delete it
// and create another (for a provider-kubernetes Object, deleting it
// deletes the workload cluster's object; for an IAM role, the role).
func KeptName(obs map[resource.Name]*structpb.Struct, n resource.Name, fresh string) string {
	if k := observed.String(obs[n], "metadata", "name"); k != "" {
		return k
	}
	return fresh
}

// Qualified is "namespace/name", or name for cluster-scoped objects.
func Qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// ComposedRemotePrefix starts the composed-resource name of an Object that wraps
// the object the pool composes as the rest of the name: a pool moved from
// local to remote gets new composed resources, and Crossplane removes the
// local ones, which the workload cluster never saw.
const ComposedRemotePrefix = "remote-"

// ComposedRemoteCapacity is a remote pool's PoolCapacity: it stays in the
// management cluster, under a name of its own (remote.CapacityName), so a
// pool moved between local and remote replaces it instead of renaming it.
const ComposedRemoteCapacity = ComposedRemotePrefix + ComposedCapacity
