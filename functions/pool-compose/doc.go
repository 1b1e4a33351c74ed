// Package main is the pool-compose composition function: it turns an XPool
// (the composite of a Pool claim) into the objects that provision, warm and
// account for a shared node pool of query-engine executors.
//
// # What it emits
//
// Every pool gets a PoolCapacity "{pool}-capacity" (the capacity provider
// counts the pool's nodes and executors into it), one warmup DaemonSet per
// warm image "{pool}-warmup-{hash}", and, with spec.storageAgent, the
// DaemonSet "{pool}-storage-agent"; these node agents run at the
// PriorityClass "{pool}-node-agent" (value 1000000, preempting executors on
// a full node; decision/agents.go), or at the class
// warmup.priorityClassName names. Then, by provisioning method:
//
//   - karpenter, eks-auto-mode: a karpenter.sh/v1 NodePool "{pool}-nodepool"
//     and a NodeClass "{pool}-nodeclass" of the cloud (EC2NodeClass,
//     EKS Auto Mode NodeClass, GCENodeClass, AKSNodeClass or KWOKNodeClass),
//     plus the placeholders below.
//   - lke, doks, coreweave with manageNodePool: the cloud's node pool
//     "{pool}-nodepool" (package cloudpool), sized from minExecutors and
//     maxExecutors, plus the placeholders.
//   - node-group: the cloud's node group "{pool}-nodegroup" (an EKS
//     NodeGroup, a GKE NodePool or an AKS KubernetesClusterNodePool of
//     Upbound's provider families; package cloudpool,
//     decision/nodegroup.go), which the cluster's Cluster Autoscaler scales
//     between minExecutors and maxExecutors, plus the placeholders. A new
//     type or capacity gets a new group and holds the old one until it is
//     empty.
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
// Executors preempt them. Where an autoscaler acts on SIG Autoscaling's
// CapacityBuffer (autoscaling.x-k8s.io/v1beta1), a CapacityBuffer
// "{pool}-warm-slots" and its PodTemplate hold the slots instead and no
// placeholder pod runs: decideWarmMethod (decision/buffer.go) says which,
// from the warmCapacity settings, whether the CRD is served and whether an
// autoscaler processed the buffer, and status.warmCapacity and the
// WarmCapacity condition show it. The buffer's replicas are set only when
// it is created: the capacity provider then owns them (the annotation
// e6data.io/replicas-owner; PoolCapacity spec.forProvider.warmSlots
// .capacityBuffer) and lowers them as executors are created, before an
// autoscaler could restore the room they took on new nodes.
//
// The warm level, the slots held warm, is minExecutors unless the Pool sets
// spec.warmPolicy (decision/warmlevel.go): Scheduled raises it while a
// window of the pool's, or of a class of the settings' warmPolicy.classes,
// is open or opens within warmPolicy.leadTime; Learned takes the level the
// capacity provider publishes in the PoolCapacity's
// status.atProvider.warmRecommendation, which the PoolCapacity's
// spec.forProvider.warmPolicy.learned asks for with the settings' target,
// lead and caps. The level is the placeholders' (and the CapacityBuffer's,
// through the PoolCapacity's spec.forProvider.warmSlots.slots), and
// status.warmPolicy says which policy set it, why, until when and what its
// slots cost. A decision that holds until a window's lead or close, or
// until a recommendation is revised, is kept only until then, and
// Crossplane is asked back at that instant.
//
// Placeholder pods are created with the scheduling gate e6data.io/warm-slot,
// which the capacity provider removes only while the pool wants the slot
// (PoolCapacity spec.forProvider.warmSlots), so a placeholder an executor
// preempted, and that the pool gives back, is no pending pod an autoscaler
// launches a node for.
//
// A Karpenter pool that warms images launches its nodes with the startup
// taint e6data.io/warming={pool}:NoSchedule (warmingTaint in
// decision/karpenter.go), which the warmup and storage-agent pods tolerate
// and executors do not; the capacity provider removes it once the node's
// images are warm, or after warmup.openAfter (PoolCapacity
// spec.forProvider.startup).
//
// # How it runs
//
// RunFunction (fn.go) answers a request it has decided before from its
// decision cache (decisions.go, keyed by the request's digest, digest.go;
// docs/development.md says what it keeps and for how long), which the gRPC
// server sends as the encoding the cache keeps beside it (encoded.go). Any
// other it decides: it gathers one decision.Input from the request
// (gather; what it asks Crossplane for is in requirements.go; the input,
// settings and spec decoded once per content, decoded.go) and takes one of
// two paths:
//
//   - a pool of this cluster, or one whose claim is refused, goes to
//     decision.Compute;
//   - a pool with a workload cluster goes to remote.Compose, which reads
//     what the capacity provider reports of that cluster from the observed
//     PoolCapacity (remote.View, remote.Summary, remote.KeepAttached),
//     computes the pool with decision.Compute (or, until the first report
//     arrives, composes only the PoolCapacity: decision.AwaitWorkload),
//     wraps every object for the workload cluster (remote.Wrap) and says
//     whether the cluster is reachable (remote.Reachability).
//
// apply (apply.go) writes the decision.Output into the response; objects
// built from unchanged inputs come from the render cache (render.go), and
// the gRPC server sends each of those as the encoding the render cache
// keeps beside it (encoded.go). The packages:
//
//   - decision: the pure decisions, Input in, Output out; its package
//     documentation says how Compute decides, one file per decision, and
//     follows spec.maxExecutors through them.
//   - objects: builds the objects the decisions ask for (arguments in,
//     objects out: the NodePool and NodeClasses, the node IAM objects, the
//     PoolCapacity, the pool's workloads and PriorityClasses, the
//     CapacityBuffer, the admission policy).
//   - remote: wraps a pool's objects for its workload cluster.
//   - observed: reads the observed objects, on both paths.
//   - cloudpool: the node pools of clouds without Karpenter.
//   - input: the function's input and the cluster settings.
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
// A QueryService attaches when it is allowed, its poolRef names the pool,
// and the settings let the pool attach from its namespace (its own always;
// others by tenancy.namespaces[].attachFrom). Only such QueryServices lend
// their size to the status, their image to the warm set (at most
// warmup.maxImages images) and their instance type to
// inheritNodeConfigFrom.
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
//     existing nodes) and tolerations of the pool's identity taints
//     (e6data.io/pool={pool}:NoSchedule,
//     e6data.io/pool-namespace={namespace}:NoSchedule and
//     e6data.io/pool={pool}:NoExecute) and of its spec.tolerations, all of
//     which status.executorScheduling lists;
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
