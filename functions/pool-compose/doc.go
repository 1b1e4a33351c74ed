// Package main is the pool-compose composition function: it turns an XPool
// (the composite of a Pool claim) into the objects that provision, warm and
// account for a shared node pool of query-engine executors.
//
// # What it emits
//
// Every pool gets a PoolCapacity "{pool}-capacity" (the capacity provider
// counts the pool's nodes and executors into it), one warmup DaemonSet per
// warm image "{pool}-warmup-{hash}", and, with spec.storageAgent, the
// DaemonSet "{pool}-storage-agent". Then, by provisioning method:
//
//   - karpenter, eks-auto-mode: a karpenter.sh/v1 NodePool "{pool}-nodepool"
//     and a NodeClass "{pool}-nodeclass" of the cloud (EC2NodeClass,
//     EKS Auto Mode NodeClass, GCENodeClass, AKSNodeClass or KWOKNodeClass),
//     plus the placeholders below.
//   - lke, doks, coreweave with manageNodePool: the cloud's node pool
//     "{pool}-nodepool" (package cloudpool), sized from minExecutors and
//     maxExecutors, plus the placeholders.
//   - lke, doks, coreweave without manageNodePool, and static: no node
//     objects; spec.nodeSelector picks existing nodes, which must also carry
//     the label e6data.io/pool={pool}. Without nodeSelector the pool is
//     Pending and emits nothing that would select every node.
//
// Placeholders hold minExecutors warm slots where nodes scale to zero: a
// PriorityClass "{pool}-placeholder" (value -10 by default, preemptionPolicy
// Never; or an existing class named in the input) and a Deployment
// "{pool}-placeholder" of pause pods, each the size of the largest
// compatible executor, replicas minExecutors minus the executors running.
// Executors preempt them.
//
// # Detection and attachment
//
// The function asks Crossplane only for the QueryServices the pool can
// attach or must report, never for every QueryService in the cluster (a
// cluster-wide list would put every QueryService in every request, and
// break every pool once their sum outgrew a gRPC message):
//
//   - each QueryService in allowedQueryServices and inheritNodeConfigFrom,
//     by name in its namespace (the pool's when unset);
//   - the QueryServices queryServiceSelector selects, in any namespace, by
//     the labels it pins to one value: its matchLabels and each
//     matchExpressions entry with operator In and a single value (Crossplane
//     fetches by label equality only). The whole selector, other expressions
//     included, is then evaluated on what Crossplane returns. A selector that
//     pins no label (only Exists, NotIn, DoesNotExist or In with several
//     values) is refused with a Fatal result saying what to add;
//   - the QueryServices labelled e6data.io/pool={pool} in any namespace: a
//     QueryService that uses a pool carries this label beside its poolRef
//     (the label e6data's reference selects a pool's QueryServices by).
//     Those whose poolRef names the pool without being allowed are reported
//     in status.attachedQueryServices with the reason. A QueryService whose
//     poolRef names the pool without the label is not fetched, and stays
//     unreported until it is labelled or allowed;
//   - each CRD that reveals a provisioning method, by name.
//
// A QueryService attaches when it is allowed and its poolRef names the pool.
// Crossplane's service account needs get and list on queryservices.e6data.io
// for this (an aggregated ClusterRole). spec.provisioning, then the input's
// provisioning, override detection.
//
// # Safety
//
// Until Crossplane has supplied every required resource (its first call
// carries none), the function renders nothing new and copies every observed
// object into desired state unchanged. When sizing, a NodeClass's settings
// or a cloud node pool cannot be decided, the pool is Failed and those
// observed objects are kept as they are. Invalid specs and input are Fatal
// results with the field to fix; nothing is deleted. The clock is a field
// of Function.
//
// # Scheduling executors on a pool
//
// QueryService operators that burst executors onto a pool give the
// executor pods:
//
//   - labels e6data.io/pool={pool}, e6data.io/executor-type=pool and
//     e6data.io/query-service={name}, which the capacity provider counts;
//   - nodeSelector e6data.io/pool={pool} (plus the pool's nodeSelector on
//     existing nodes) and a toleration of the taint
//     e6data.io/pool={pool}:NoSchedule and of the pool's spec.tolerations;
//   - a priority above the placeholders' (any class above -10), so they
//     preempt a placeholder instead of waiting for a node;
//   - requests equal to limits, the size that sizing checked;
//   - a soft spread over the pool's nodes.
//
// The spread lets executors use every warm node before doubling up, so that
// executorsPerNode share a node only when the pool is full:
//
//	topologySpreadConstraints:
//	- maxSkew: 1
//	  topologyKey: kubernetes.io/hostname
//	  whenUnsatisfiable: ScheduleAnyway
//	  labelSelector:
//	    matchLabels: {e6data.io/pool: POOL, e6data.io/executor-type: pool}
package main
