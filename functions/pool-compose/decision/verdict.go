package decision

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/burstpool/burstpool/functions/pool-compose/observed"
)

// CondComposedReady carries the vendors' verdict on the pool's composed
// objects: False, NotReady, names each object whose controller reports it
// not ready (a Karpenter NodePool or NodeClass that is not Ready, a
// managed resource that is not Synced or not Ready) with the conditions
// that say why and their messages, as the controllers wrote them.
const CondComposedReady = "ComposedReady"

// Conditions a controller reports readiness with: karpenter.sh's and its
// providers' Ready (operatorpkg status conditions, whose root is Ready),
// Crossplane managed resources' Synced and Ready.
const (
	condReady  = "Ready"
	condSynced = "Synced"
)

// vendorVerdict reads every observed composed object that reports Ready
// or Synced and says, for those not ready, which conditions are not True
// and what their controllers say. Objects that report neither (workloads,
// PriorityClasses) have no verdict; one not observed yet has none either.
func vendorVerdict(obs map[resource.Name]*structpb.Struct) Condition {
	var (
		reporting int
		notReady  []string
	)
	for _, n := range slices.Sorted(maps.Keys(obs)) {
		o := obs[n]
		ready, synced := observed.Condition(o, condReady), observed.Condition(o, condSynced)
		if ready.Status == "" && synced.Status == "" {
			continue
		}
		reporting++
		if ready.Status == metav1.ConditionTrue && synced.Status != metav1.ConditionFalse {
			continue
		}
		notReady = append(notReady, fmt.Sprintf("%s %s: %s", observed.String(o, "kind"), observed.String(o, "metadata", "name"), strings.Join(notTrue(o), "; ")))
	}
	switch {
	case len(notReady) > 0:
		return Condition{Type: CondComposedReady, Status: metav1.ConditionFalse, Reason: "NotReady", Message: strings.Join(notReady, "; ")}
	case reporting == 0:
		return Condition{Type: CondComposedReady, Status: metav1.ConditionUnknown, Reason: "NotReportedYet", Message: "no composed object has reported whether it is ready yet"}
	}
	return Condition{Type: CondComposedReady, Status: metav1.ConditionTrue, Reason: "AllReady", Message: fmt.Sprintf("the controllers of the %d composed objects that report readiness report them ready", reporting)}
}

// notTrue are an object's conditions that are not True, each as
// "Type=Status: message (reason)": those False first, by type, then Ready
// and Synced when they are Unknown or not reported. A controller's own
// conditions (Karpenter's ValidationSucceeded, NodeClassReady) say why
// its Ready is not True.
func notTrue(o *structpb.Struct) []string {
	var out []string
	seen := map[string]bool{}
	type cond struct{ typ, status, words string }
	var conds []cond
	for _, c := range observed.Field(o, "status", "conditions").GetListValue().GetValues() {
		cs := c.GetStructValue()
		t := observed.String(cs, "type")
		conds = append(conds, cond{typ: t, status: observed.String(cs, "status"), words: conditionWords(observed.Condition(o, t))})
	}
	slices.SortFunc(conds, func(a, b cond) int { return strings.Compare(a.typ, b.typ) })
	for _, c := range conds {
		if c.status == string(metav1.ConditionFalse) && !seen[c.typ] {
			seen[c.typ] = true
			out = append(out, fmt.Sprintf("%s=False: %s", c.typ, c.words))
		}
	}
	for _, t := range []string{condReady, condSynced} {
		c := observed.Condition(o, t)
		if seen[t] || c.Status == metav1.ConditionTrue || (t == condSynced && c.Status == "") {
			continue
		}
		st := string(c.Status)
		if st == "" {
			out = append(out, t+" not reported yet")
			continue
		}
		out = append(out, fmt.Sprintf("%s=%s: %s", t, st, conditionWords(c)))
	}
	return out
}
