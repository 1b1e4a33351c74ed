package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// TestVendorVerdictOnTheClaim replays a NodeClass its vendor does not
// accept: the Pool used to say only that it waited for the NodeClass, and
// the user had to read the NodeClass and the NodePool to learn why. Now the
// Pool's ComposedReady condition names each object, the condition its
// controller set and that controller's message, in the reconcile that
// observes them. A KWOKNodeClass is Ready by its CRD's default
// (sigs.k8s.io/karpenter@v1.14.1 kwok/apis/v1alpha1/kwoknodeclass.go); one
// that reports Ready=False is not ready, and Karpenter's NodePool copies
// its reason and message into NodeClassReady (pkg/controllers/nodepool/
// readiness/controller.go).
func TestVendorVerdictOnTheClaim(t *testing.T) {
	nodeClass := func(status, message string) string {
		return "apiVersion: karpenter.kwok.sh/v1alpha1\nkind: KWOKNodeClass\nmetadata:\n  name: burst-nodeclass\nstatus:\n  conditions:\n" +
			"  - {type: Ready, status: \"" + status + "\", reason: Injected, message: \"" + message + "\"}\n"
	}
	nodePool := func(status, message string) string {
		return "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: burst-nodepool\nstatus:\n  conditions:\n" +
			"  - {type: NodeClassReady, status: \"" + status + "\", reason: Injected, message: \"" + message + "\"}\n" +
			"  - {type: Ready, status: \"" + status + "\", reason: UnhealthyDependents, message: NodeClassReady=" + status + "}\n" +
			"  - {type: ValidationSucceeded, status: \"True\", reason: ValidationSucceeded}\n"
	}
	type want struct {
		Condition      string
		Message        []string
		NodeClassReady string
	}
	cases := map[string]struct {
		reason   string
		observed map[string]string
		want     want
	}{
		"NotReadyWithTheVendorsWords": {
			reason:   "The KWOKNodeClass reports Ready=False and the NodePool NodeClassReady=False: both are named, with the message, and the NodeClass is not ready.",
			observed: map[string]string{"nodeclass": nodeClass("False", "subnets not found"), "nodepool": nodePool("False", "subnets not found")},
			want: want{Condition: "FALSE/NotReady", NodeClassReady: "READY_FALSE", Message: []string{
				"KWOKNodeClass burst-nodeclass: Ready=False: subnets not found (Injected)",
				"NodePool burst-nodepool: NodeClassReady=False: subnets not found (Injected)",
			}},
		},
		"Ready": {
			reason:   "Both Ready: the condition is True and the NodeClass ready.",
			observed: map[string]string{"nodeclass": nodeClass("True", ""), "nodepool": nodePool("True", "")},
			want:     want{Condition: "TRUE/AllReady", NodeClassReady: "READY_TRUE"},
		},
	}
	spec := "  maxExecutors: 4\n  allowedQueryServices:\n  - {name: analytics, namespace: team-a}\n"
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := scenario{XR: xpool("burst", "pools", spec), Observed: tc.observed, QueryServices: allQS, CRDs: kwokCRDs}.run(t)
			msg := conditionMessage(rsp, decision.CondComposedReady)
			got := want{Condition: conditions(rsp)[decision.CondComposedReady], NodeClassReady: rsp.GetDesired().GetResources()["nodeclass"].GetReady().String()}
			for _, m := range tc.want.Message {
				if strings.Contains(msg, m) {
					got.Message = append(got.Message, m)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\n(message %q)", tc.reason, diff, msg)
			}
		})
	}
}
