package decision

import (
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// Crossplane's realtime compositions reconcile an XPool when one of its
// composed resources changes, through a circuit breaker per XR (crossplane
// core v2.4, internal/circuit): a token bucket of --circuit-breaker-burst
// events (100) refilled at --circuit-breaker-refill-rate (1 a second).
// When the bucket runs dry the circuit opens for --circuit-breaker-cooldown
// (5 minutes) and lets one event through every 30 seconds; the XPool says
// so with its Responsive condition, reason WatchCircuitOpen. A bursting
// pool drains the bucket easily (placeholders preempted and recreated,
// warmup DaemonSets on every new node, Karpenter's NodePool status), and
// then the PoolCapacity's new counts wait for the function's TTL, a
// minute: scaling executors down showed on the Pool after 61 s.
const (
	condResponsive    = "Responsive"
	reasonCircuitOpen = "WatchCircuitOpen"
	// circuitCooldown is crossplane core's --circuit-breaker-cooldown
	// default, with a minute's margin: how long after the circuit opened
	// the pool follows its counts by polling.
	circuitCooldown = 6 * time.Minute
	// FollowInterval is how often a pool whose circuit is open is
	// composed again: the bound on how late executor changes show.
	FollowInterval = MinRequeueAfter
)

// WatchCircuit is the XPool's Responsive condition: whether Crossplane
// drops the watch events of its composed resources, since when.
type WatchCircuit struct {
	Open  bool
	Since time.Time
}

// ReadWatchCircuit reads the Responsive condition of an XPool's status.
func ReadWatchCircuit(status *structpb.Struct) WatchCircuit {
	for _, v := range observed.Field(status, "conditions").GetListValue().GetValues() {
		c := v.GetStructValue()
		if observed.String(c, "type") != condResponsive {
			continue
		}
		since, _ := time.Parse(time.RFC3339, observed.String(c, "lastTransitionTime"))
		return WatchCircuit{Open: observed.String(c, "status") == "False" && observed.String(c, "reason") == reasonCircuitOpen, Since: since}
	}
	return WatchCircuit{}
}

// decideFollow asks to be composed again every FollowInterval while the
// pool's watch circuit is open (and for at most circuitCooldown after it
// opened), so that executor changes reach the Pool within about that
// although Crossplane drops the PoolCapacity's events. A pool whose
// circuit is closed, an idle pool among them, keeps the default TTL: its
// events arrive.
func decideFollow(now time.Time, c WatchCircuit) Outcome {
	if !c.Open || c.Since.IsZero() || now.Sub(c.Since) > circuitCooldown {
		return Outcome{}
	}
	return Outcome{RequeueAfter: FollowInterval, Until: c.Since.Add(circuitCooldown)}
}

// MinRequeueAfter bounds how soon the function asks to be called again.
const MinRequeueAfter = 5 * time.Second
