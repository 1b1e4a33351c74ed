package poolcapacity_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/watch"
)

// TestQuietStart starts the provider beside PoolCapacities of a cluster it
// observes no longer than its first view takes, twice, and checks that no
// PoolCapacity failed to connect on the way: every one waits for the view,
// the first of the cluster included, instead of recording a
// CannotConnectToProvider warning and a status write, at every restart of
// the provider, for a cluster that is fine.
func TestQuietStart(t *testing.T) {
	c := newClient(t, "team-a")
	ctx := context.Background()
	ensureLocalProviderConfig(t, c)
	var names []string
	for i := range 20 {
		pool := fmt.Sprintf("quiet-%02d", i)
		pc := &v1alpha1.PoolCapacity{
			ObjectMeta: metav1.ObjectMeta{Name: pool + "-capacity"},
			Spec: v1alpha1.PoolCapacitySpec{ForProvider: v1alpha1.PoolCapacityParameters{
				Pool:             v1alpha1.PoolRef{Name: pool, Namespace: "platform"},
				NodeSelector:     map[string]string{qsv1alpha1.LabelPool: pool},
				ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: pool, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
				ExecutorsPerNode: 4, MaxExecutors: 8,
			}},
		}
		pc.SetProviderConfigReference(&xpv2.Reference{Name: "default"})
		if err := c.Create(ctx, pc); err != nil {
			t.Fatal(err)
		}
		names = append(names, pc.Name)
	}
	opts := watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond}
	for start := 1; start <= 2; start++ {
		p := startProvider(t, opts)
		if start == 2 {
			// The PoolCapacities' finalizers need a provider.
			defer p.stop(t)
			defer deletePCs(t, c, names...)
		}
		eventually(t, fmt.Sprintf("every PoolCapacity synced after start %d", start), func() error {
			for _, name := range names {
				pc := &v1alpha1.PoolCapacity{}
				if err := c.Get(ctx, client.ObjectKey{Name: name}, pc); err != nil {
					return err
				}
				if s := pc.GetCondition(xpv2.TypeSynced); s.Status != corev1.ConditionTrue {
					return fmt.Errorf("%s: Synced %s (%s): %s", name, s.Status, s.Reason, s.Message)
				}
			}
			return nil
		})
		if start == 1 {
			p.stop(t)
		}
	}

	var events corev1.EventList
	if err := c.List(ctx, &events); err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{}
	for _, n := range names {
		ours[n] = true
	}
	for _, e := range events.Items {
		if ours[e.InvolvedObject.Name] && e.Reason == "CannotConnectToProvider" {
			t.Errorf("PoolCapacity %s: %d %s event(s) as the provider started: %s", e.InvolvedObject.Name, e.Count, e.Reason, e.Message)
		}
	}
}
