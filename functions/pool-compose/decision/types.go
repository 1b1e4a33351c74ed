package decision

import (
	"encoding/json"
	"time"

	"github.com/crossplane/function-sdk-go/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
)

// Output is the decision: the desired objects and the XPool's status.
type Output struct {
	Desired map[resource.Name]*unstructured.Unstructured
	// Lazy are desired objects built only when a render cache lacks them.
	Lazy  map[resource.Name]Lazy
	Ready map[resource.Name]resource.Ready
	// Preserve names objects Compute could not decide this time: their
	// observed state is kept unchanged.
	Preserve []resource.Name

	Status poolv1alpha1.PoolStatus
	// CountsUnknown leaves the status's executor and node counts out: the
	// PoolCapacity's figures are not current (Facts.CapacityStale).
	CountsUnknown bool
	Conditions    []Condition
	Results       []Result
	RequeueAfter  time.Duration
	// Until is how long the Output holds as the clock moves on from
	// in.Now: the zero time when it follows from the request alone, else
	// the first instant at which the same request may be decided
	// otherwise; in.Now itself when the Output depends on the very
	// reading (a time written into the status, a wait counted down).
	Until time.Time
}

// Holds tells whether an Output decided at decided holds at now: the
// clock has not gone back, and has not reached until (the Output's
// Until; zero holds at any later time).
func Holds(decided, until, now time.Time) bool {
	return !now.Before(decided) && (until.IsZero() || now.Before(until))
}

// earliest is the sooner of two Untils, the zero time being never.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// Lazy is a desired object that Build makes from the inputs Key encodes:
// two Lazy objects with one Key are the same object.
type Lazy struct {
	Key   string
	Build func() *unstructured.Unstructured
}

// lazyKey encodes what an object is built from.
func lazyKey(kind string, in any) string {
	b, err := json.Marshal(in)
	if err != nil {
		return ""
	}
	return kind + string(b)
}

// Condition is a condition of the XPool and its claim.
type Condition struct {
	Type    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// Result is an event on the XPool and its claim.
type Result struct {
	Warning bool
	Reason  string
	Message string
}

// Condition types.
const (
	CondProvisioned   = "NodesProvisioned"
	CondCompatible    = "QueryServicesCompatible"
	CondImagesWarm    = "ImagesWarm"
	CondPullSecrets   = "ImagePullSecretsUsable"
	CondSuspended     = "Suspended"
	CondCapacityKnown = "CapacityObserved"
	// CondBurstsUnblocked says whether executors or pool nodes wait on
	// the capacity provider past their bounds (burstsCondition).
	CondBurstsUnblocked = "BurstsUnblocked"
)

// readyOf converts a readiness.
func readyOf(ok bool) resource.Ready {
	if ok {
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}
