// Package capacity ships in the capacity provider, as its pure core: an
// immutable snapshot of the pool nodes and pool pods of one cluster, and
// Compute, which turns a PoolCapacity's parameters and a snapshot into its
// observed status.
//
// Nothing here talks to an API server or takes a context; the clock is an
// argument. The watch package feeds snapshots from informers and a poller,
// and the poolcapacity controller applies what Compute decides.
package capacity
