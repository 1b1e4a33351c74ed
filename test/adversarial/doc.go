// Package adversarial is a test suite: it replays what a hostile tenant
// can do against another tenant's pool with the rights a tenant has (Pools,
// QueryServices and pods in its own namespace), what an attached tenant (a
// namespace the platform lets the pool attach) can do to game that pool,
// and what the capacity provider's own account could do to the cluster's
// admission, on a real API server (and
// the real kube-scheduler and kube-controller-manager where scheduling and
// eviction are involved), and checks that the attack fails and the other
// pool's nodes, pods, counts and composed objects stay as they were.
//
// Each test names in its comment the attack it replays. The function is
// reached the way Crossplane reaches it, over gRPC with the resources it
// requires fetched from the API server (test/harness/fnrun); the capacity
// provider's observation runs in-process on what the API server holds.
package adversarial
