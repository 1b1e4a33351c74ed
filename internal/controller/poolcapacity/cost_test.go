package poolcapacity_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/cost"
	"github.com/burstpool/burstpool/internal/watch"
	"github.com/burstpool/burstpool/test/fixture"
)

const costPool = "priced"

// createPricedNode creates a Ready node of pool priced: an r7gd.4xlarge
// bought as spot, allocating 15 CPU and 120 GiB.
func createPricedNode(t *testing.T, c client.Client, name string) {
	t.Helper()
	createNodeOf(t, c, costPool, name)
}

// createNodeOf creates a Ready node of pool: an r7gd.4xlarge bought as
// spot, allocating 15 CPU and 120 GiB.
func createNodeOf(t *testing.T, c client.Client, pool, name string) {
	t.Helper()
	fixture.Create(t, c, fixture.Node(fixture.NodeOptions{Name: name,
		Labels:      map[string]string{qsv1alpha1.LabelPool: pool, cost.LabelInstanceType: "r7gd.4xlarge", cost.LabelCapacityType: "spot"},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("15"), corev1.ResourceMemory: resource.MustParse("120Gi")}}))
}

// createPricedExecutor creates a running executor of QueryService qs on
// node, asking a quarter of an r7gd.4xlarge: 3.75 CPU and 24 GiB.
func createPricedExecutor(t *testing.T, c client.Client, ns, name, qs, node string) {
	t.Helper()
	ctx := context.Background()
	l := executorLabels(qs)
	l[qsv1alpha1.LabelPool] = costPool
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "executor", Image: "e6/exec:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3750m"), corev1.ResourceMemory: resource.MustParse("24Gi")}}}}},
	}
	if err := c.Create(ctx, p); err != nil {
		t.Fatalf("cannot create pod %s/%s: %v", ns, name, err)
	}
	p.Status = running(time.Now())
	if err := c.Status().Update(ctx, p); err != nil {
		t.Fatalf("cannot set the status of pod %s/%s: %v", ns, name, err)
	}
}

// useRate returns the rate (nodes) of one line of the split by use.
func useRate(o *v1alpha1.CostObservation, part v1alpha1.CostPart, qs string) string {
	for _, u := range o.ByUse {
		if u.Part == part && u.QueryService == qs {
			return u.Nodes
		}
	}
	return ""
}

// TestCostAcrossRestart runs the provider on a pool of one spot node,
// changes the pool while it runs and while it is stopped, and starts it
// again. The pool holds one node all along, so its node-seconds must equal
// the seconds from status.atProvider.cost.since to accountedUntil exactly:
// none counted twice across the restart, none lost. The parts add up to
// the pool, the QueryService that ran nothing has no line, and the second
// provider's counters go on from the status's totals.
func TestCostAcrossRestart(t *testing.T) {
	c := newClient(t, "team-a", "team-c")
	ctx := context.Background()
	createPricedNode(t, c, "priced-1")
	createPricedExecutor(t, c, "team-a", "priced-sales-0", "sales", "priced-1")
	createPricedExecutor(t, c, "team-a", "priced-sales-1", "sales", "priced-1")
	pc := &v1alpha1.PoolCapacity{
		ObjectMeta: metav1.ObjectMeta{Name: costPool + "-capacity"},
		Spec: v1alpha1.PoolCapacitySpec{ForProvider: v1alpha1.PoolCapacityParameters{
			Pool:             v1alpha1.PoolRef{Name: costPool, Namespace: "platform"},
			NodeSelector:     map[string]string{qsv1alpha1.LabelPool: costPool},
			ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: costPool, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
			ExecutorsPerNode: 4, MaxExecutors: 8,
			QueryServices: []v1alpha1.AttachedQueryService{{Name: "sales", Namespace: "team-a"}, {Name: "idle", Namespace: "team-c"}},
			Pricing:       &v1alpha1.Pricing{Catalog: "aws", Discounts: []v1alpha1.CapacityTypeDiscount{{CapacityType: "spot", Discount: "0.6"}}},
		}},
	}
	pc.SetProviderConfigReference(&xpv2.Reference{Name: "default"})
	ensureLocalProviderConfig(t, c)
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	get := func() *v1alpha1.CostObservation {
		got := &v1alpha1.PoolCapacity{}
		if err := c.Get(ctx, client.ObjectKey{Name: pc.Name}, got); err != nil {
			t.Fatal(err)
		}
		return got.Status.AtProvider.Cost
	}
	// waitFor waits until sales holds nodes of the node and the watermark
	// is later than after.
	waitFor := func(nodes string, after time.Time) *v1alpha1.CostObservation {
		var o *v1alpha1.CostObservation
		eventually(t, "sales holding "+nodes+" of priced-1", func() error {
			o = get()
			if o == nil || useRate(o, v1alpha1.CostQueryService, "sales") != nodes || !o.AccountedUntil.After(after) {
				return fmt.Errorf("cost is %+v", o)
			}
			return nil
		})
		return o
	}

	p := startProvider(t, watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
	running := true
	// Later tests' providers must not see this pool: it goes while a
	// provider runs to release it.
	defer func() {
		if !running {
			p = startProvider(t, watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
		}
		deletePCs(t, c, pc.Name)
		p.stop(t)
		for _, name := range []string{"priced-sales-0", "priced-sales-1", "priced-sales-2"} {
			deletePod(t, c, "team-a", name)
		}
		if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "priced-1"}}); err != nil {
			t.Errorf("cannot delete node priced-1: %v", err)
		}
	}()
	first := waitFor("0.5", time.Time{})
	// 0.25 of an r7gd.4xlarge spot node (1.16109 x 0.4 = 0.464436/h) per
	// executor: sales pays 0.232218/h, warm the rest.
	if got := first.ByNodeType[0].PricePerHour; got != "0.464436" {
		t.Errorf("spot r7gd.4xlarge priced at %s/h, want 0.464436 (the aws catalog's on-demand price less the 0.6 spot discount)", got)
	}
	time.Sleep(secondApart)
	createPricedExecutor(t, c, "team-a", "priced-sales-2", "sales", "priced-1")
	mid := waitFor("0.75", first.AccountedUntil.Time)
	p.stop(t)
	running = false

	// While the provider is down, an executor goes.
	time.Sleep(secondApart)
	deletePod(t, c, "team-a", "priced-sales-2")
	time.Sleep(secondApart)

	p = startProvider(t, watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
	running = true
	last := waitFor("0.5", mid.AccountedUntil.Time)

	if last.Since != first.Since {
		t.Errorf("counting began at %s, then at %s after the restart", first.Since, last.Since)
	}
	span := last.AccountedUntil.Sub(last.Since.Time).Seconds()
	if got := number(t, last.NodeSeconds); got != span {
		t.Errorf("one node for %v s from since to accountedUntil, but node-seconds = %v: counted twice or lost across the restart", span, got)
	}
	var parts float64
	for _, u := range last.ByUse {
		parts += number(t, u.NodeSeconds)
		if u.QueryService == "idle" {
			t.Errorf("QueryService idle ran nothing on the pool but has a line: %+v", u)
		}
	}
	if d := parts - span; d > 1e-3 || d < -1e-3 {
		t.Errorf("the parts add up to %v node-seconds, the pool to %v", parts, span)
	}
	if last.UnaccountedSeconds != 0 {
		t.Errorf("unaccountedSeconds = %d after a stop shorter than %s", last.UnaccountedSeconds, cost.MaxGap)
	}
	// The restarted provider's counter carries what status had counted.
	eventually(t, "the restarted provider's cost counter", func() error {
		o := get()
		want := 0.0
		for _, u := range o.ByUse {
			if u.QueryService == "sales" {
				want = number(t, u.Dollars)
			}
		}
		got := counted(t, p, "sales")
		if want == 0 || got < want {
			return fmt.Errorf("burstpool_pool_cost_dollars_total of sales = %v, status says %v", got, want)
		}
		return nil
	})
}

func number(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a decimal: %q", s)
	}
	return f
}

// counted returns burstpool_pool_cost_dollars_total of QueryService qs,
// as the provider p exports it.
func counted(t *testing.T, p *provider, qs string) float64 {
	t.Helper()
	mfs, err := p.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "burstpool_pool_cost_dollars_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "query_service" && l.GetValue() == qs {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
