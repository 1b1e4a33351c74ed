package main

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
	rnNodePool  resource.Name = "nodepool"
	rnNodeClass resource.Name = "nodeclass"
	rnCloudPool resource.Name = "cloud-nodepool"
	// rnCloudPoolDraining is a CoreWeave NodePool of a previous instance
	// type, kept while it drains.
	rnCloudPoolDraining resource.Name = "cloud-nodepool-draining"
	rnPriorityClass     resource.Name = "placeholder-priorityclass"
	// rnAgentPriorityClass is the priority of the pool's node agents
	// (warmup and storage agent).
	rnAgentPriorityClass resource.Name = "node-agent-priorityclass"
	rnPlaceholder        resource.Name = "placeholder"
	// rnBuffer and rnBufferTemplate are the CapacityBuffer that holds
	// warm slots where an autoscaler acts on one, and its PodTemplate.
	rnBuffer         resource.Name = "capacity-buffer"
	rnBufferTemplate resource.Name = "capacity-buffer-podtemplate"
	rnStorageAgent   resource.Name = "storage-agent"
	rnCapacity       resource.Name = "capacity"
	rnAccessPolicy   resource.Name = "access-policy"
	rnAccessBinding  resource.Name = "access-policy-binding"
)

// Object name suffixes: the pool's objects are "{pool}{suffix}".
const (
	sfxNodePool     = "-nodepool"
	sfxNodeClass    = "-nodeclass"
	sfxPlaceholder  = "-placeholder"
	sfxBuffer       = "-warm-slots"
	sfxStorageAgent = "-storage-agent"
	sfxCapacity     = "-capacity"
	sfxNodeAgent    = "-node-agent"
)

// Crossplane's claim labels on a composite resource.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
)

// maxObjectName is the longest name of most Kubernetes objects (a DNS
// subdomain).
const maxObjectName = 253

// uniqueName is the name readable (cut to fit in max) followed by a hash of
// parts, so names of different parts never collide: the parts are joined
// with NUL, which no name holds, so "team-a"+"burst" and "team"+"a-burst"
// hash apart, and 64 bits of SHA-256 leave no collision within reach.
// The readable start tells people whose the object is.
func uniqueName(readable string, max int, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	suffix := "-" + hex.EncodeToString(h[:8])
	if len(readable) > max-len(suffix) {
		readable = readable[:max-len(suffix)]
	}
	return strings.TrimRight(readable, "-.") + suffix
}

// keptName is the metadata.name of the observed object n, or fresh when
// there is none. An object that exists keeps its name whatever the naming
// of new objects: renaming a composed object makes Crossplane delete it
// and create another (for a provider-kubernetes Object, deleting it
// deletes the workload cluster's object; for an IAM role, the role).
func keptName(obs map[resource.Name]*structpb.Struct, n resource.Name, fresh string) string {
	if k := observed.String(obs[n], "metadata", "name"); k != "" {
		return k
	}
	return fresh
}
