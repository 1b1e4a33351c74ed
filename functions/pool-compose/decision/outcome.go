package decision

import (
	"time"

	"github.com/crossplane/function-sdk-go/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Outcome is what one decision contributes to the Output: the objects it
// desires, those it cannot decide now and keeps as observed, the
// conditions and events it reports and the problem it finds. Compute adds
// the outcomes up in the order it decides (see assembly.add).
type Outcome struct {
	Desired map[resource.Name]*unstructured.Unstructured
	Lazy    map[resource.Name]Lazy
	Ready   map[resource.Name]resource.Ready
	// Waiting are the desired objects ("Kind name") that are not ready
	// and that the pool waits for before it is Active.
	Waiting  []string
	Preserve []resource.Name

	Conditions []Condition
	Results    []Result
	// Problem makes the pool Pending or Failed.
	Problem      *Problem
	RequeueAfter time.Duration
	// Until is how long the outcome holds as the clock moves on
	// (Output.Until).
	Until time.Time
}

// Problem is why a pool cannot be Active: something a person must do
// (Pending) or something that went wrong (Failed). Either sets the
// NodesProvisioned condition to False with the reason.
type Problem struct {
	Failed  bool
	Reason  string
	Message string
}

// failed is a problem that makes the pool Failed.
func failed(reason, msg string) *Problem {
	return &Problem{Failed: true, Reason: reason, Message: msg}
}

// pending is a problem that makes the pool Pending: it waits for something
// a person must do.
func pending(reason, msg string) *Problem {
	return &Problem{Reason: reason, Message: msg}
}

// desire adds a desired object; the pool waits for it when wait is set and
// it is not ready.
func (o *Outcome) desire(n resource.Name, u *unstructured.Unstructured, ready, wait bool) {
	if o.Desired == nil {
		o.Desired = map[resource.Name]*unstructured.Unstructured{}
	}
	o.Desired[n] = u
	o.ready(n, u.GetKind(), u.GetName(), ready, wait)
}

// desireLazy adds a desired object that is built only when the render
// cache lacks it; kind and name are its own.
func (o *Outcome) desireLazy(n resource.Name, kind, name string, l Lazy, ready, wait bool) {
	if o.Lazy == nil {
		o.Lazy = map[resource.Name]Lazy{}
	}
	o.Lazy[n] = l
	o.ready(n, kind, name, ready, wait)
}

func (o *Outcome) ready(n resource.Name, kind, name string, ready, wait bool) {
	if o.Ready == nil {
		o.Ready = map[resource.Name]resource.Ready{}
	}
	o.Ready[n] = readyOf(ready)
	if wait && !ready {
		o.Waiting = append(o.Waiting, kind+" "+name)
	}
}

// preserve keeps the observed state of objects the decision cannot decide
// now.
func (o *Outcome) preserve(names ...resource.Name) {
	o.Preserve = append(o.Preserve, names...)
}

func (o *Outcome) condition(typ string, st metav1.ConditionStatus, reason, msg string) {
	o.Conditions = append(o.Conditions, Condition{Type: typ, Status: st, Reason: reason, Message: msg})
}

func (o *Outcome) event(warning bool, reason, msg string) {
	o.Results = append(o.Results, Result{Warning: warning, Reason: reason, Message: msg})
}

// assembly adds the decisions' outcomes up into the Output.
type assembly struct {
	Output
	// problem is the pool's problem: the first Failed one, else the first
	// Pending one.
	problem *Problem
	// waiting are the objects the pool waits for, in the order desired.
	waiting []string
}

func newAssembly() *assembly {
	return &assembly{Output: Output{
		Desired: map[resource.Name]*unstructured.Unstructured{},
		Lazy:    map[resource.Name]Lazy{},
		Ready:   map[resource.Name]resource.Ready{},
	}}
}

// add adds one decision's outcome. A problem counts when the pool has none
// yet, or when it fails a pool that was only pending: failed beats
// pending, and otherwise the first problem found stands. The problem that
// counts sets NodesProvisioned to False, before the outcome's own
// conditions.
func (a *assembly) add(o Outcome) {
	if p := o.Problem; p != nil && (a.problem == nil || (p.Failed && !a.problem.Failed)) {
		a.problem = p
		a.Conditions = append(a.Conditions, Condition{Type: CondProvisioned, Status: metav1.ConditionFalse, Reason: p.Reason, Message: p.Message})
	}
	for n, u := range o.Desired {
		a.Desired[n] = u
	}
	for n, l := range o.Lazy {
		a.Lazy[n] = l
	}
	for n, r := range o.Ready {
		a.Ready[n] = r
	}
	a.waiting = append(a.waiting, o.Waiting...)
	a.Preserve = append(a.Preserve, o.Preserve...)
	a.Conditions = append(a.Conditions, o.Conditions...)
	a.Results = append(a.Results, o.Results...)
	if o.RequeueAfter > 0 && (a.RequeueAfter == 0 || o.RequeueAfter < a.RequeueAfter) {
		a.RequeueAfter = o.RequeueAfter
	}
	a.Until = earliest(a.Until, o.Until)
}

// failed tells whether the pool has failed.
func (a *assembly) failed() bool {
	return a.problem != nil && a.problem.Failed
}
