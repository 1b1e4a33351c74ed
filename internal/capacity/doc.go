// Package capacity ships in the capacity provider, as its pure core: an
// immutable snapshot of the pool nodes and pool pods of one cluster, and
// Compute, which turns a PoolCapacity's parameters and a snapshot into its
// observed status and a Plan for its cluster.
//
// Compute counts once (count.go), then decides from that tally, one
// concern a file: failure records (failures.go), startup taints
// (taints.go), warm slots (warm.go), the executor gate (gate.go), shares
// (shares.go) and evictions (evict.go).
//
// Nothing here talks to an API server or takes a context; the clock is an
// argument. The watch package feeds snapshots from informers and a poller,
// and the poolcapacity controller applies the plan.
package capacity
