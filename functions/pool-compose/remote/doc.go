// Package remote composes a pool in its workload cluster: Compose computes
// the pool (package decision) from what the workload cluster reports and
// wraps every object for it.
//
// A pool whose workload cluster is remote composes what runs there as
// provider-kubernetes Objects, which apply their manifest to the cluster that
// a provider-kubernetes ProviderConfig reaches. The PoolCapacity and
// the cloud node pools of LKE and DOKS (managed resources of cloud APIs)
// stay in the management cluster. What the function reads from the workload
// cluster (detection CRDs, QueryServices) comes from the PoolCapacity's
// status.atProvider.workloadCluster, which the capacity provider, connected
// to that cluster anyway, keeps current.
package remote
