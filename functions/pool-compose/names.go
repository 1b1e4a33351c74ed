package main

import (
	"github.com/crossplane/function-sdk-go/resource"
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
	rnStorageAgent       resource.Name = "storage-agent"
	rnCapacity           resource.Name = "capacity"
	rnAccessPolicy       resource.Name = "access-policy"
	rnAccessBinding      resource.Name = "access-policy-binding"
)

// Object name suffixes: the pool's objects are "{pool}{suffix}".
const (
	sfxNodePool     = "-nodepool"
	sfxNodeClass    = "-nodeclass"
	sfxPlaceholder  = "-placeholder"
	sfxStorageAgent = "-storage-agent"
	sfxCapacity     = "-capacity"
	sfxNodeAgent    = "-node-agent"
)

// Crossplane's claim labels on a composite resource.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
)
