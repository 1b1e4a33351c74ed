package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// scenarioVendorVerdict makes a composed object not ready on purpose and
// checks that the Pool says which object, which condition and what its
// controller wrote, without anyone reading the object: the pool's
// KWOKNodeClass reports Ready=False (its CRD defaults it to Ready True,
// and no controller of Karpenter's kwok provider writes it:
// sigs.k8s.io/karpenter@v1.14.1 kwok/apis/v1alpha1/kwoknodeclass.go), so
// Karpenter's NodePool readiness controller copies the reason and message
// into the NodePool's NodeClassReady (pkg/controllers/nodepool/readiness/
// controller.go). The Pool's ComposedReady condition must name both. Once
// the NodeClass is Ready again, the condition is True again.
func scenarioVendorVerdict(t *testing.T, ctx context.Context, e *env) {
	s, c := e.Stack, e.Client
	b := newBurst(t, ctx, e)
	mustApply(t, ctx, s.Cluster.Config, b.manifest(0, false))
	if err := c.Create(ctx, b.queryService(t, b.qs)); err != nil {
		t.Fatal(err)
	}
	var nodeClass, nodePool string
	eventually(t, waitSlow, "the pool composes its NodePool and KWOKNodeClass, and they are ready", func(ctx context.Context) (bool, error) {
		p, st, err := readPool(ctx, s, b.poolNS, b.pool)
		if err != nil {
			return false, err
		}
		nodeClass, nodePool = st.NodeClassName, st.NodePoolName
		status, _, msg := conditionFields(p, "ComposedReady")
		return nodeClass != "" && status == "True", fmt.Errorf("node class %q, ComposedReady=%s %q", nodeClass, status, msg)
	})

	const fault = "e2e: the vendor refuses this NodeClass"
	nc := gvk("karpenter.kwok.sh/v1alpha1", "KWOKNodeClass")
	setConditions(t, ctx, c, nc, nodeClass, cond("Ready", "False", "InjectedFault", fault))
	waitVerdict := func(what, status string, parts ...string) time.Duration {
		t.Helper()
		return eventually(t, waitStatus, what, func(ctx context.Context) (bool, error) {
			p, _, err := readPool(ctx, s, b.poolNS, b.pool)
			if err != nil {
				return false, err
			}
			st, _, msg := conditionFields(p, "ComposedReady")
			if st != status {
				return false, fmt.Errorf("ComposedReady=%s %q", st, msg)
			}
			for _, part := range parts {
				if !strings.Contains(msg, part) {
					return false, fmt.Errorf("ComposedReady=%s %q lacks %q", st, msg, part)
				}
			}
			return true, nil
		})
	}
	took := waitVerdict("the Pool names the KWOKNodeClass and the NodePool with the vendor's message", "False",
		"KWOKNodeClass "+nodeClass+": Ready=False: "+fault+" (InjectedFault)",
		"NodePool "+nodePool+": NodeClassReady=False: "+fault+" (InjectedFault)")
	t.Logf("KWOKNodeClass not Ready -> Pool ComposedReady False with the message: %s", took.Round(10*time.Millisecond))

	setConditions(t, ctx, c, nc, nodeClass, cond("Ready", "True", "Ready", ""))
	waitVerdict("the Pool's ComposedReady turns True again once the NodeClass is Ready", "True")
}
