// Package decision holds the pool-compose function's decisions, pure
// functions of what it gathered: Input (the XPool, its settings and what
// Crossplane observed) in, Output (the objects to compose, their readiness,
// the status, conditions and events) out. It builds objects through
// package objects and reads observed objects through package observed; it
// writes no response, which package main does, and knows nothing of
// workload clusters, which package remote wraps its Output for.
//
// # Layout
//
// Files call down only. At the bottom is the vocabulary: types.go (Output,
// Condition, Result, Lazy and the condition types), outcome.go (Outcome,
// what one decision contributes), input.go (Input), facts.go (Facts, with
// the executors a node and the node range the spec asks for), and the
// plain types they are made of: settings.go (Settings, SettingError),
// tenant.go (Tenant), detect.go (Detection), attach.go (Attachment),
// observation.go (CapacityObservation, Staleness), queryservice.go,
// size.go, requestsize.go and follow.go. Validate (validate.go) and
// MergeSettings (merge.go) serve package main before Compute runs. The
// decisions stand above the vocabulary, and compute.go, the orchestrator,
// on top.
//
// # How it decides
//
// Compute first establishes the pool's facts (Facts: how many executors
// share a node and how many nodes the pool keeps and may have, how its
// nodes are provisioned, which QueryServices attach, where its pods are
// scheduled, what the PoolCapacity observed and whether executors have
// run), then makes each decision in this order, one file each:
//
//  1. awaitSettings (availability.go): invalid or missing settings, or an
//     EnvironmentConfig the pool was composed with that is not found
//     (settingsAvailability), make the pool Pending and keep every object
//     as observed; nothing else is decided.
//     Then refuseClaim (tenancy.go): a claim that asks for what the
//     settings' tenancy does not grant its namespace (a workload cluster,
//     cluster ID, method or cloud, a size or an instance family) is Failed,
//     ClaimNotAllowed, naming the setting, and keeps every object as
//     observed; RunFunction sends such a pool to no workload cluster.
//  2. decideWarmLevel (warmlevel.go): the warm level, minExecutors or what
//     spec.warmPolicy sets (internal/warmpolicy), which the nodes, the
//     placeholders and the PoolCapacity read as Facts.WarmLevel; then
//     decideWarm (warm.go): the warm set and its DaemonSets.
//  3. heldName (owner.go): another namespace's pool holds the pool's
//     cluster-wide names, so it composes nothing more and keeps the
//     objects its labels name (ownObjects).
//  4. decideNodes (nodes.go): the pool's size and architecture, then
//     decideKarpenter (karpenter.go, which first asks decideNodeIAM in
//     iam.go for the node IAM role an AWS pool composes, and waits for it)
//     or decideCloudNodePool (cloudnodes.go, with decideCoreWeave in
//     coreweave.go) or decideNodeGroup (nodegroup.go); keepNodeIAM keeps
//     the role when nodes were not decided. A NodePool's drift windows
//     come from drift.go, and a Karpenter pool's or node group's
//     SpotDiversified condition from spot.go.
//  5. decideCapacity (capacity.go), decidePlaceholders (placeholders.go),
//     decideStorageAgent (storage.go), decideAgentPriority (agents.go),
//     decideAdmission (admission.go).
//  6. decideStatus (status.go): the XPool's status, its conditions and its
//     phase, from everything decided before, with the vendors' verdict on
//     the composed objects they observed (vendorVerdict, verdict.go).
//
// Each decision returns an Outcome: the objects it desires and whether
// they are ready, the objects it cannot decide now (kept as observed), its
// conditions and events, and a Pending or Failed problem. Compute adds them
// up in that order (outcome.go): the first problem stands, except that a
// failure beats a pending problem; once there is one, no placeholders are
// decided, and after a failure no nodes.
//
// Following spec.maxExecutors from the request to the NodePool's limits,
// the PoolCapacity and the status message (files of this package unless
// named otherwise):
//
//   - fn.go of package main decodes the spec (decodePool); Validate
//     (validate.go) refuses a pool whose maxExecutors is below 1, or whose
//     minExecutors is not between 0 and maxExecutors.
//   - Compute's establish (compute.go) takes the facts the spec alone
//     decides (specFacts, facts.go), once: executorsPerNode, at least 1
//     (perNode), as Facts.PerNode, and the node range (nodeRange) as
//     Facts.MinNodes and Facts.MaxNodes: maxExecutors / executorsPerNode
//     rounded up is the most nodes, minExecutors the same way the fewest
//     (none while suspended). Every decision below reads these.
//   - CheckClaim (tenancy.go) refuses a claim whose maxExecutors, or
//     Facts.MaxNodes, exceeds what the settings' tenancy grants its
//     namespace.
//   - decideNodes (nodes.go) hands the facts on: decideKarpenter
//     (karpenter.go) turns Facts.MaxNodes into Karpenter's NodePool limits
//     (nodePoolLimits) for objects.NodePool (objects/karpenter.go), which
//     writes them as spec.limits: that many nodes and that many times the
//     CPU and memory of the largest type offered (LargestOffered,
//     internal/sizing/derive.go), all zero while suspended. A cloud node
//     pool (cloudnodes.go) or node group (nodegroup.go) scales between
//     Facts.MinNodes and Facts.MaxNodes; a CoreWeave pool (coreweave.go)
//     runs what its warm slots and executors need, never more than the
//     most.
//   - decideCapacity (capacity.go) hands maxExecutors to the PoolCapacity,
//     which counts at most that many executor slots on the pool's nodes;
//     capacityArgs is the one place its arguments are made, for a remote
//     pool that waits for its workload cluster too (AwaitWorkload,
//     workload.go), and objects.PoolCapacity (objects/capacity.go) writes
//     them as spec.forProvider.maxExecutors.
//   - decidePlaceholders (placeholders.go) holds the warm level
//     (Facts.WarmLevel: minExecutors, or a warm policy's level, at most
//     maxExecutors) slots warm, less the executors running, each the size
//     of the largest compatible executor.
//   - decideStatus's phase (status.go) gives an Active pool the message
//     "the pool runs up to {maxExecutors} executors", which apply.go of
//     package main writes to status.message (statusValue).
//   - A pool with a workload cluster reaches Compute or AwaitWorkload
//     through remote.Compose (remote/compose.go), and remote.Wrap
//     (remote/wrap.go, pointCapacity) points its PoolCapacity at that
//     cluster with maxExecutors unchanged.
package decision
