// Package decision holds the pool-compose function's decisions, pure
// functions of what it gathered: Input (the XPool, its settings and what
// Crossplane observed) in, Output (the objects to compose, their readiness,
// the status, conditions and events) out. It builds objects through
// package objects and reads observed objects through package observed; it
// writes no response, which package main does, and knows nothing of
// workload clusters, which package remote wraps its Output for.
//
// # How it decides
//
// Compute first establishes the pool's facts (Facts: how its nodes are
// provisioned, which QueryServices attach, where its pods are scheduled,
// what the PoolCapacity observed and whether executors have run), then
// makes each decision in this order, one file each:
//
//  1. awaitSettings (settings.go): invalid or missing settings, or an
//     EnvironmentConfig the pool was composed with that is not found
//     (settingsAvailability in availability.go), make the pool Pending and
//     keep every object as observed; nothing else is decided.
//     Then refuseClaim (tenancy.go): a claim that asks for what the
//     settings' tenancy does not grant its namespace (a workload cluster,
//     cluster ID, method or cloud, a size or an instance family) is Failed,
//     ClaimNotAllowed, naming the setting, and keeps every object as
//     observed; RunFunction sends such a pool to no workload cluster.
//  2. decideWarm (warm.go): the warm set and its DaemonSets.
//  3. heldName (owner.go): another namespace's pool holds the pool's
//     cluster-wide names, so it composes nothing more and keeps the
//     objects its labels name (ownObjects).
//  4. decideNodes (nodes.go): the pool's size and architecture, then
//     decideKarpenter (karpenter.go, which first asks decideNodeIAM in
//     iam.go for the node IAM role an AWS pool composes, and waits for it)
//     or decideCloudNodePool (cloudnodes.go, with decideCoreWeave in
//     coreweave.go) or decideNodeGroup (nodegroup.go); keepNodeIAM keeps
//     the role when nodes were not decided.
//  5. decideCapacity (capacity.go), decidePlaceholders (placeholders.go),
//     decideStorageAgent (storage.go), decideAgentPriority (agents.go),
//     decideAdmission (admission.go).
//  6. decideStatus (status.go): the XPool's status, its conditions and its
//     phase, from everything decided before.
//
// Each decision returns an Outcome: the objects it desires and whether
// they are ready, the objects it cannot decide now (kept as observed), its
// conditions and events, and a Pending or Failed problem. Compute adds them
// up in that order (outcome.go): the first problem stands, except that a
// failure beats a pending problem; once there is one, no placeholders are
// decided, and after a failure no nodes.
//
// Following spec.maxExecutors through it:
//
//   - Validate refuses a pool whose maxExecutors is below 1, or whose
//     minExecutors is not between 0 and maxExecutors.
//   - establish takes executorsPerNode, at least 1, as Facts.PerNode.
//   - decideNodes turns both into nodes (nodeRange): maxExecutors /
//     executorsPerNode rounded up is the most nodes, minExecutors the same
//     way the fewest (none while suspended). Karpenter's NodePool limits
//     (nodePoolLimits, in nodes.go, handed to objects.NodePool as they
//     are) are that many nodes and that many times the CPU and memory of
//     the largest type offered (sizing's LargestOffered), all zero while
//     suspended; a cloud
//     node pool scales between the two; a CoreWeave pool runs what its warm
//     slots and executors need, never more than the most.
//   - decideCapacity hands maxExecutors to the PoolCapacity, which counts at
//     most that many executor slots on the pool's nodes; capacityArgs is
//     the one place its arguments are made, for a remote pool that waits
//     for its workload cluster too, and objects.PoolCapacity writes them.
//   - decidePlaceholders holds minExecutors (at most maxExecutors) slots
//     warm, less the executors running, each the size of the largest
//     compatible executor.
//   - decideStatus's phase message of an Active pool is "the pool runs up
//     to {maxExecutors} executors".
package decision
