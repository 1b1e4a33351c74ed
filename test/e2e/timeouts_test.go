package e2e

import "time"

// The bounds of the suite's waits, named once. A wait that runs out fails
// its scenario (and leaves a dump, see dump_test.go), so each bound is the
// slowest a healthy cluster takes for what it bounds on a busy two-core
// machine with scenarios running in parallel, with headroom; a scenario
// that asserts how fast something happens says so with its own bound
// (statusBound, shareBound, remoteConvergeBound, placementWindow,
// watchWindow).
const (
	// waitQuick bounds what one controller does at once to an object that
	// exists: a status written, a Node removed after its NodeClaim went.
	waitQuick = 30 * time.Second

	// waitReconcile bounds one change through a running controller: a
	// placeholder preempted on a node that already runs, a Deployment
	// scaled by the function, a deletion refused. Crossplane's poll of a
	// composite is a minute at worst when its watch circuit is open.
	waitReconcile = time.Minute

	// waitEmptyNode bounds Karpenter removing an empty NodeClaim: its
	// disruption loop passes every 10s (pollingPeriod) and consolidation
	// validates its command for 15s before it deletes
	// (commandValidationDelay; sigs.k8s.io/karpenter v1.14.1,
	// pkg/controllers/disruption/controller.go and consolidation.go).
	waitEmptyNode = 90 * time.Second

	// waitStatus bounds a change showing on the claim: the function
	// composes again (a watch event or Crossplane's poll) and the capacity
	// provider observes the pool's nodes and pods, a few reconciles each.
	// It is not statusBound, which asserts how soon a healthy plane shows
	// executor changes: while the suite's other control planes start and
	// run beside it on two cores, one of the provider's API requests can
	// pass its deadline, and the count shows only after the provider's
	// next try (TestNodeGroupPool/NodeGroupReference once ran out of a
	// 10 s bound that way).
	waitStatus = 2 * time.Minute

	// waitNodes bounds executors running on nodes Karpenter launches, or
	// the nodes of a deleted pool going: Karpenter batches pending pods
	// (1s idle, 10s at most: pkg/operator/options/options.go of
	// sigs.k8s.io/karpenter v1.14.1), launches kwok nodes that register at once,
	// and the scheduler binds the pods.
	waitNodes = 3 * time.Minute

	// waitDisruption bounds Karpenter consolidating nodes that emptied or
	// scaling from zero under load: several disruption passes, each
	// waiting on the cluster's busiest controllers.
	waitDisruption = 4 * time.Minute

	// waitSlow bounds the longest chains: the reference's pools Active
	// after their first apply (XRD, Composition, first compose, sizing,
	// provider), drift detection (Karpenter's drift pass runs every few
	// minutes), a suspended pool whose warm node must first be
	// consolidated, node IAM objects deleted after the pool's nodes.
	waitSlow = 5 * time.Minute

	// waitEstablished bounds a CRD just applied turning Established: the
	// API server's CRD controllers take a second on an idle machine, tens
	// of seconds while several control planes start at once on two cores.
	waitEstablished = time.Minute

	// waitWarmBurst bounds a burst into warm slots running, without a
	// node launched: with placeholders, a preemption and a bind each
	// (waitReconcile); with a CapacityBuffer, the provider lowers the
	// buffer, waits for Karpenter's next provisioning pass to report the
	// lower count, and only then lifts the executor's gate, so two
	// controllers in turn.
	waitWarmBurst = 2 * time.Minute

	// waitBufferSwitch bounds a pool's warm slots passing from
	// placeholders to its CapacityBuffer: the provider raises the buffer
	// once no placeholder holds the slots, Karpenter's next provisioning
	// pass takes it up, and a node the placeholders left empty is
	// consolidated (waitEmptyNode), one after the other.
	waitBufferSwitch = 2 * time.Minute

	// quietWindow is how long a scenario watches for what must not happen
	// (a refused pool composing, a settled fair share moving, a Pending
	// pool's objects deleted): longer than Karpenter's batch window (10 s
	// at most), the provider's poll (2 s) and the function's period while
	// Crossplane's watch circuit is open (5 s) together, so each of them
	// has acted at least once in it.
	quietWindow = 20 * time.Second

	// settleGap is the gap between two reads of a pool's state that must
	// match for it to count as settled: the function's period while the
	// watch circuit is open (FollowInterval, 5 s,
	// functions/pool-compose/decision/follow.go), which
	// is longer than the provider's poll, so a pool still changing
	// changes within it.
	settleGap = 5 * time.Second

	// kubectlTimeout bounds one kubectl command against the cluster under
	// test: under a second when idle, as long as a reconcile
	// (waitReconcile) when the API server is loaded.
	kubectlTimeout = waitReconcile

	// watchWindow is how long `kubectl get pool -w` runs: it prints the
	// list it starts from at once, so this is kubectl's own start on a
	// loaded machine.
	watchWindow = 5 * time.Second
)
