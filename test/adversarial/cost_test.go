package adversarial

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/fixture"
)

// TestCostStaysWithWhoUsedIt replays "make someone else pay for my use of
// a shared pool": a co-tenant attached to burst-pool (QueryService rider
// in tenant-b) runs, on a pool node, an executor that requests nothing
// (to ride for free), an executor labelled with the other tenant's
// QueryService name (to bill analytics-cluster), and a pod labelled as
// the pool's placeholder (to bill its use as the platform's warm slots).
// Each executor holds a slot whatever it requests, a QueryService is
// billed in the namespace its executors run in, and only placeholders in
// the pool's namespace are warm: analytics-cluster pays for its own
// executor only, and tenant-b for both of its executors.
func TestCostStaysWithWhoUsedIt(t *testing.T) {
	cc := startCountingCluster(t)
	ctx := context.Background()
	// Each node allocates 16 CPU and 64 GiB.
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi")}
	for _, n := range []string{"burst-1", "burst-2"} {
		cc.poolNode(t, n, allocatable)
	}
	cc.pod(t, fixture.PodOptions{Namespace: tenantNS, Name: "analytics-exec-0", Labels: victim.ExecutorLabels(tenantQS), NodeName: "burst-1", CPU: "8", Status: fixture.Running(time.Now())})
	cc.pod(t, fixture.PodOptions{Namespace: attackerNS, Name: "rider-exec-0", Labels: victim.ExecutorLabels("rider"), NodeName: "burst-2", Status: fixture.Running(time.Now())})
	cc.pod(t, fixture.PodOptions{Namespace: attackerNS, Name: "billed-elsewhere-0", Labels: victim.ExecutorLabels(tenantQS), NodeName: "burst-2", CPU: "1", Status: fixture.Running(time.Now())})
	placeholder := map[string]string{qsv1alpha1.LabelPool: victimPool, qsv1alpha1.LabelPoolNamespace: victimNS, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentPlaceholder}
	cc.pod(t, fixture.PodOptions{Namespace: attackerNS, Name: "fake-placeholder", Labels: placeholder, NodeName: "burst-2", CPU: "8", Status: fixture.Running(time.Now())})

	pc := victimCapacity(10)
	pc.Spec.ForProvider.QueryServices = append(pc.Spec.ForProvider.QueryServices, v1alpha1.AttachedQueryService{Name: "rider", Namespace: attackerNS})
	if err := cc.c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	cc.runProvider(t)
	// Node shares: burst-1 is half analytics-cluster's (8 of 16 CPU), half
	// warm (free slots on a node in use); burst-2 is half rider's (a slot,
	// of 2 per node, though it asks nothing) and half tenant-b's executor
	// that names analytics-cluster.
	want := map[string]string{
		"QueryService " + tenantNS + "/" + tenantQS:   "0.5",
		"QueryService " + attackerNS + "/rider":       "0.5",
		"QueryService " + attackerNS + "/" + tenantQS: "0.5",
		"Warm /": "0.5",
	}
	var got map[string]string
	fixture.Eventually(t, fixture.ObserverSync, "burst-pool's cost", func() error {
		c := cc.capacity(t, pc.Name).Status.AtProvider.Cost
		if c == nil {
			return fmt.Errorf("no cost yet")
		}
		got = map[string]string{}
		for _, u := range c.ByUse {
			got[string(u.Part)+" "+u.Namespace+"/"+u.QueryService] = u.Nodes
		}
		if len(got) < len(want) {
			return fmt.Errorf("cost by use is %v", got)
		}
		return nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("burst-pool's nodes are billed to the wrong users (-want +got, nodes held now):\n%s", diff)
	}
}
