// Package watch ships in the capacity provider and feeds a capacity.Store from
// one cluster's pool nodes and pool pods: informers deliver events, which are
// applied in batches, and a poller relists everything when the watch fails (or,
// with the watch off, on every interval) and replaces the snapshot wholesale.
package watch
