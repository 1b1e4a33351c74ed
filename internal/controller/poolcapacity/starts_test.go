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

const startsPool = "starting"

// createStartingExecutor creates an executor of pool starting bound to
// node (which need not exist yet: a pod bound by name waits for it, as one
// waits for a node launched for it).
func createStartingExecutor(t *testing.T, c client.Client, name, node string) {
	t.Helper()
	createExecutorOf(t, c, startsPool, name, node)
}

// createExecutorOf creates an executor of QueryService team-a/sales in
// pool, bound to node.
func createExecutorOf(t *testing.T, c client.Client, pool, name, node string) {
	t.Helper()
	l := executorLabels("sales")
	l[qsv1alpha1.LabelPool] = pool
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Labels: l},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "executor", Image: "e6/exec:1"}}}}
	if err := c.Create(context.Background(), p); err != nil {
		t.Fatalf("cannot create pod %s: %v", name, err)
	}
}

// runExecutor sets executor name Running, its container started now, as
// a kubelet reports it.
func runExecutor(t *testing.T, c client.Client, name string) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: name}, p); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "executor", Image: "e6/exec:1", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	if err := c.Status().Update(ctx, p); err != nil {
		t.Fatalf("cannot set the status of pod %s: %v", name, err)
	}
}

// TestStartsAcrossRestart runs the provider on a pool whose first executor
// starts on a node that was there before it and whose second waits for a
// node created after it, restarts the provider, and starts a third on the
// first node. Each start is counted once, by placement, in status and in
// the restarted provider's histogram: the restart neither recounts the
// first two nor misses the third.
func TestStartsAcrossRestart(t *testing.T) {
	c := newClient(t, "team-a")
	ctx := context.Background()
	pc := &v1alpha1.PoolCapacity{
		ObjectMeta: metav1.ObjectMeta{Name: startsPool + "-capacity"},
		Spec: v1alpha1.PoolCapacitySpec{ForProvider: v1alpha1.PoolCapacityParameters{
			Pool:             v1alpha1.PoolRef{Name: startsPool, Namespace: "platform"},
			NodeSelector:     map[string]string{qsv1alpha1.LabelPool: startsPool},
			ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: startsPool, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
			ExecutorsPerNode: 4, MaxExecutors: 8,
			QueryServices: []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: "team-a"}},
		}},
	}
	pc.SetProviderConfigReference(&xpv2.Reference{Name: "default"})
	ensureLocalProviderConfig(t, c)
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	opts := watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond}
	p := startProvider(t, opts)
	defer func() {
		deletePCs(t, c, pc.Name)
		p.stop(t)
		for _, name := range []string{"starting-0", "starting-1", "starting-2"} {
			deletePod(t, c, "team-a", name)
		}
		for _, name := range []string{"starting-1", "starting-2"} {
			if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
				t.Errorf("cannot delete node %s: %v", name, err)
			}
		}
	}()
	// waitFor waits until status counts want (by placement).
	waitFor := func(want string) {
		eventually(t, "executor starts "+want, func() error {
			got := &v1alpha1.PoolCapacity{}
			if err := c.Get(ctx, client.ObjectKey{Name: pc.Name}, got); err != nil {
				return err
			}
			if s := startCounts(got.Status.AtProvider.ExecutorStarts); s != want {
				return fmt.Errorf("executor starts %s", s)
			}
			return nil
		})
	}
	// Counting begins at the first observation.
	waitFor("")

	// Creation timestamps are to the second: a second apart orders them.
	createNodeOf(t, c, startsPool, "starting-1")
	time.Sleep(secondApart)
	createStartingExecutor(t, c, "starting-0", "starting-1")
	createStartingExecutor(t, c, "starting-1", "starting-2")
	time.Sleep(secondApart)
	createNodeOf(t, c, startsPool, "starting-2")
	runExecutor(t, c, "starting-0")
	runExecutor(t, c, "starting-1")
	waitFor("ExistingNode=1 NewNode=1")

	p.stop(t)
	p = startProvider(t, opts)
	createStartingExecutor(t, c, "starting-2", "starting-1")
	runExecutor(t, c, "starting-2")
	waitFor("ExistingNode=2 NewNode=1")

	eventually(t, "the restarted provider's start histogram", func() error {
		mfs, err := p.metrics.Gather()
		if err != nil {
			return err
		}
		got := map[string]uint64{}
		for _, mf := range mfs {
			if mf.GetName() != "burstpool_executor_start_seconds" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "placement" {
						got[l.GetValue()] = m.GetHistogram().GetSampleCount()
					}
				}
			}
		}
		if got["existing_node"] != 2 || got["new_node"] != 1 {
			return fmt.Errorf("burstpool_executor_start_seconds counts %v, want existing_node 2, new_node 1", got)
		}
		return nil
	})
}

// startCounts says how many starts o counts per placement; empty when o
// counts none, "not counting" when o is nil.
func startCounts(o *v1alpha1.ExecutorStarts) string {
	if o == nil {
		return "not counting"
	}
	out := ""
	for _, p := range o.ByPlacement {
		if out != "" {
			out += " "
		}
		out += fmt.Sprintf("%s=%d", p.Placement, p.Count)
	}
	return out
}
