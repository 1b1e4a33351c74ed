package e2e

import "time"

// The bounds of the suite's waits, named once. A wait that runs out fails
// its scenario (and leaves a dump, see dump_test.go), so each bound is the
// slowest a healthy cluster takes for what it bounds on a busy two-core
// machine with scenarios running in parallel, with headroom; a scenario
// that asserts how fast something happens says so with its own bound
// (statusBound, shareBound, remoteConvergeBound, placementWindow).
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
)
