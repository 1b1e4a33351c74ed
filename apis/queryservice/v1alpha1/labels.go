package v1alpha1

// Labels and taints that pools, pool nodes and executor pods carry. The
// capacity controller counts executors by these labels, the composition
// function stamps them on every object it emits, and QueryService operators
// put them on executor pods that run on a pool.
const (
	// LabelPool names the Pool an object belongs to. Pool nodes carry it
	// (from the Karpenter NodePool template or the cloud's node pool), as do
	// pool executor pods, warmup pods and placeholders.
	LabelPool = "e6data.io/pool"

	// LabelPoolNamespace is the namespace of the Pool claim. With LabelPool
	// it is the pool's identity: pools in two namespaces may share a name,
	// so pool nodes, executor pods, warmup and placeholder pods and every
	// composed object carry both, and every selector of a pool uses both.
	LabelPoolNamespace = "e6data.io/pool-namespace"

	// LabelQueryService names the QueryService an executor pod belongs to.
	// The pod's own namespace is the QueryService's namespace.
	LabelQueryService = "e6data.io/query-service"

	// LabelExecutorType tells pool executors (ExecutorTypePool) from the
	// QueryService's regular executors (ExecutorTypeRegular).
	LabelExecutorType = "e6data.io/executor-type"

	// LabelComponent tells what a pod or object is for: ComponentExecutor,
	// ComponentWarmup, ComponentPlaceholder or ComponentStorageAgent.
	LabelComponent = "e6data.io/component"

	// TaintPool is the taint key on pool nodes; its value is the pool name.
	// Pool nodes carry it twice: with effect NoSchedule, so the scheduler
	// places only workloads that tolerate it there, and with effect
	// NoExecute, so that a pod bound by spec.nodeName without tolerating it
	// is refused by the kubelet and evicted by the taint-eviction
	// controller. Pool pods tolerate both.
	TaintPool = "e6data.io/pool"

	// TaintPoolNamespace is the second taint on pool nodes: its value is
	// the Pool's namespace and its effect NoSchedule. Executors tolerate
	// all three, as the Pool's status.executorScheduling lists.
	TaintPoolNamespace = "e6data.io/pool-namespace"

	// TaintWarming is the startup taint of a new pool node, value the pool
	// name and effect NoSchedule: executors do not tolerate it, warmup
	// pods do, and the capacity provider removes it once the pool's warm
	// images are on the node (or after a bound).
	TaintWarming = "e6data.io/warming"

	// GateWarmSlot is the scheduling gate placeholder pods are created
	// with; the capacity provider removes it while the pool wants the warm
	// slot, so that a placeholder the pool is giving back launches no node.
	GateWarmSlot = "e6data.io/warm-slot"

	// GateExecutor is the scheduling gate a pool's new executors are
	// admitted with while the pool may hold some back (a CapacityBuffer
	// holds its warm slots, or its shares are enforced): a static
	// admission policy the capacity provider parameterises per pool adds
	// it, and only the provider removes it, once the pool can give the
	// executor a slot without launching a node for the warm slot it takes
	// or taking a slot freed for another QueryService's waiting executor.
	GateExecutor = "e6data.io/pool-slot"

	// AnnotationReplicasOwner marks a pool's CapacityBuffer whose
	// spec.replicas the capacity provider has taken over, with the
	// provider's field manager as value. The composition sets replicas
	// only on a buffer that does not carry it, so that Crossplane's
	// server-side apply and the provider never set the field in turn.
	AnnotationReplicasOwner = "e6data.io/replicas-owner"
)

// Values of LabelExecutorType.
const (
	ExecutorTypePool    = "pool"
	ExecutorTypeRegular = "regular"
)

// Values of LabelComponent.
const (
	ComponentExecutor     = "executor"
	ComponentWarmup       = "warmup"
	ComponentPlaceholder  = "placeholder"
	ComponentStorageAgent = "storage-agent"
)
