package adversarial

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/failsafe"
	"github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

// failsafeUser is the fail-safe's service account, as the API server
// names it (deploy/provider/failsafe.yaml fixes it).
const failsafeUser = "system:serviceaccount:crossplane-system:burstpool-failsafe"

// TestFailsafeRemovesOnlyWhatTheProviderLeft runs the fail-safe under its
// shipped account, roles and admission policy (failsafe.yaml, beside the
// gate policies of executor-gate.yaml) against a real API server: it
// leaves a gated executor and a warming node alone within their bounds;
// past them it opens the node (keeping the pool's other taints) and, only
// once the provider's Lease has gone unrenewed past the silence, removes
// the executor gate. Its account, stolen or misused, can do
// nothing else to pods or nodes: every other change is refused by the
// policy, naming what the fail-safe may do.
func TestFailsafeRemovesOnlyWhatTheProviderLeft(t *testing.T) {
	ctx := t.Context()
	ac := startAdmissionCluster(t)
	root := gomod.RootForTest(t)
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "provider", "failsafe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := localcp.Apply(ctx, ac.env.Config, raw); err != nil {
		t.Fatalf("cannot apply failsafe.yaml: %v", err)
	}
	fs := ac.as(failsafeUser, "system:serviceaccounts", "system:serviceaccounts:crossplane-system")
	gated := ac.waitGated(t)
	// The API server loads a new policy within a second or so: wait until
	// it refuses the fail-safe's account a change it may not make.
	probe := fixture.Pod(fixture.PodOptions{Namespace: attachedNS, Name: "probe"})
	fixture.Create(t, ac.admin, probe)
	fixture.Eventually(t, fixture.PolicyEnforced, "the policy burstpool-failsafe-scope refusing a relabelling", func() error {
		p := probe.DeepCopy()
		base := p.DeepCopy()
		p.Labels = map[string]string{"probe": time.Now().Format("150405.000000")}
		if err := fs.Patch(ctx, p, client.MergeFrom(base)); err == nil {
			return fmt.Errorf("the fail-safe's account relabelled pod %s", p.Name)
		}
		return nil
	})

	// A pool node launched warming, and its pool's PoolCapacity with
	// openAfter 1m.
	warming := corev1.Taint{Key: qsv1alpha1.TaintWarming, Value: admissionPool.Name, Effect: corev1.TaintEffectNoSchedule}
	node := fixture.Node(fixture.NodeOptions{Name: "burst-pool-node-a", Pool: admissionPool, Taints: []corev1.Taint{warming}})
	fixture.Create(t, ac.admin, node)
	pc := &v1alpha1.PoolCapacity{
		ObjectMeta: metav1.ObjectMeta{Name: "burst-pool-capacity"},
		Spec: v1alpha1.PoolCapacitySpec{ForProvider: v1alpha1.PoolCapacityParameters{
			Pool:             v1alpha1.PoolRef{Name: admissionPool.Name, Namespace: admissionPool.Namespace},
			NodeSelector:     admissionPool.NodeLabels(),
			ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: admissionPool.Name},
			ExecutorsPerNode: 2,
			MaxExecutors:     4,
			Startup:          &v1alpha1.Startup{Taint: warming, OpenAfter: metav1.Duration{Duration: time.Minute}},
		}},
	}
	pc.SetProviderConfigReference(&xpv2.Reference{Name: "default"})
	fixture.Create(t, ac.admin, pc)

	get := func(o client.Object, name string) {
		t.Helper()
		key := types.NamespacedName{Name: name}
		if _, ok := o.(*corev1.Pod); ok {
			key.Namespace = attachedNS
		}
		if err := ac.admin.Get(ctx, key, o); err != nil {
			t.Fatal(err)
		}
	}

	// The attacks first, while the gate and the taint are there.
	attacks := map[string]struct {
		reason string
		do     func() error
		want   string
	}{
		"RelabelExecutor": {
			reason: "relabelling an executor (to move it to another pool's count)",
			do: func() error {
				p := &corev1.Pod{}
				get(p, gated)
				base := p.DeepCopy()
				p.Labels["e6data.io/stolen"] = "yes"
				return fs.Patch(ctx, p, client.MergeFrom(base))
			},
			want: "may change a pod only by removing the scheduling gate",
		},
		"UngateAndRetarget": {
			reason: "removing the gate while adding a node selector term (aiming the executor elsewhere)",
			do: func() error {
				p := &corev1.Pod{}
				get(p, gated)
				base := p.DeepCopy()
				p.Spec.SchedulingGates = nil
				p.Spec.NodeSelector["topology.kubernetes.io/zone"] = "elsewhere"
				return fs.Patch(ctx, p, client.MergeFrom(base))
			},
			want: "may change a pod only by removing the scheduling gate",
		},
		"DeleteExecutor": {
			reason: "deleting an executor",
			do: func() error {
				p := &corev1.Pod{}
				get(p, gated)
				return fs.Delete(ctx, p)
			},
			want: "forbidden",
		},
		"RemovePoolTaint": {
			reason: "removing the pool's own taint (opening the node to every pod)",
			do: func() error {
				n := &corev1.Node{}
				get(n, node.Name)
				base := n.DeepCopy()
				n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == qsv1alpha1.TaintPool })
				return fs.Patch(ctx, n, client.MergeFrom(base))
			},
			want: "may change a node only by removing the startup taint",
		},
		"OpenAndCordon": {
			reason: "removing the startup taint while cordoning the node",
			do: func() error {
				n := &corev1.Node{}
				get(n, node.Name)
				base := n.DeepCopy()
				n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == qsv1alpha1.TaintWarming })
				n.Spec.Unschedulable = true
				return fs.Patch(ctx, n, client.MergeFrom(base))
			},
			want: "may change a node only by removing the startup taint",
		},
		"RelabelNode": {
			reason: "relabelling a node (moving it to another pool)",
			do: func() error {
				n := &corev1.Node{}
				get(n, node.Name)
				base := n.DeepCopy()
				n.Labels[qsv1alpha1.LabelPool] = "other-pool"
				return fs.Patch(ctx, n, client.MergeFrom(base))
			},
			want: "may change a node only by removing the startup taint",
		},
		"NodeStatus": {
			reason: "writing a node's status",
			do: func() error {
				n := &corev1.Node{}
				get(n, node.Name)
				base := n.DeepCopy()
				n.Status.Conditions[0].Status = corev1.ConditionFalse
				return fs.Status().Patch(ctx, n, client.MergeFrom(base))
			},
			want: "forbidden",
		},
	}
	for name, tc := range attacks {
		t.Run(name, func(t *testing.T) {
			wantRefused(t, "the fail-safe's account "+tc.reason, tc.do(), tc.want)
		})
	}

	now := time.Now()
	lease := types.NamespacedName{Namespace: "crossplane-system", Name: "provider-burstpool-capacity"}
	r := &failsafe.Runner{
		Client:  fs,
		Lease:   lease,
		Bounds:  failsafe.Bounds{Gate: 30 * time.Second, Grace: 30 * time.Second, OpenAfter: 5 * time.Minute, Silence: 20 * time.Second},
		Metrics: failsafe.NewMetrics(prometheus.NewRegistry()),
		Log:     logr.Discard(),
	}
	pass := func(at time.Time) {
		t.Helper()
		r.Now = func() time.Time { return at }
		if err := r.Pass(ctx); err != nil {
			t.Fatalf("pass at +%s: %v", at.Sub(now).Round(time.Second), err)
		}
	}
	gates := func() []corev1.PodSchedulingGate {
		p := &corev1.Pod{}
		get(p, gated)
		return p.Spec.SchedulingGates
	}
	taints := func() []corev1.Taint {
		n := &corev1.Node{}
		get(n, node.Name)
		return n.Spec.Taints
	}

	// What the node should keep: every taint but the startup taint (the
	// API server adds node.kubernetes.io/not-ready to a new node).
	keep := slices.DeleteFunc(taints(), func(t corev1.Taint) bool { return t.Key == qsv1alpha1.TaintWarming })

	// The provider's Lease, as a leading replica renews it.
	renew := func(at time.Time) {
		t.Helper()
		l := &coordinationv1.Lease{}
		err := ac.admin.Get(ctx, lease, l)
		l.Namespace, l.Name = lease.Namespace, lease.Name
		l.Spec.HolderIdentity = ptr.To("provider-0")
		l.Spec.RenewTime = &metav1.MicroTime{Time: at}
		if kerrors.IsNotFound(err) {
			err = ac.admin.Create(ctx, l)
		} else if err == nil {
			err = ac.admin.Update(ctx, l)
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	// Within the bounds (the gate's 30 s; openAfter 1m + 30 s), nothing.
	renew(now.Add(15 * time.Second))
	pass(now.Add(20 * time.Second))
	if len(gates()) == 0 {
		t.Errorf("the fail-safe removed the gate of an executor gated for less than its bound")
	}
	renew(now.Add(75 * time.Second))
	pass(now.Add(80 * time.Second))
	if !slices.ContainsFunc(taints(), func(t corev1.Taint) bool { return t.Key == qsv1alpha1.TaintWarming }) {
		t.Errorf("the fail-safe opened a node before its pool's openAfter plus the grace")
	}

	// Past them, with a provider replica renewing the Lease: the node
	// opens (the provider would have opened it by openAfter), the gate is
	// the provider's (it may hold the executor for a share).
	renew(now.Add(90 * time.Second))
	pass(now.Add(95 * time.Second))
	if len(gates()) == 0 {
		t.Errorf("the fail-safe removed the gate while a provider replica renewed the Lease")
	}
	// The Lease unrenewed for longer than the silence: the gate goes.
	pass(now.Add(111 * time.Second))
	if g := gates(); len(g) != 0 {
		t.Errorf("executor %s still gated past the fail-safe's bound: %v", gated, g)
	}
	if diff := cmpTaints(keep, taints()); diff != "" {
		t.Errorf("the node's taints after the fail-safe opened it: -want, +got:\n%s", diff)
	}
	for _, c := range []struct {
		what string
		got  float64
	}{
		{"executors released", counter(t, r.Metrics.Released.WithLabelValues(admissionPool.Name, admissionPool.Namespace))},
		{"nodes opened", counter(t, r.Metrics.Opened.WithLabelValues(admissionPool.Name, admissionPool.Namespace))},
	} {
		if c.got != 1 {
			t.Errorf("burstpool_failsafe %s: %v, want 1", c.what, c.got)
		}
	}
	// A second pass finds nothing to do.
	pass(now.Add(120 * time.Second))
}

// counter is c's value.
func counter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// cmpTaints compares taints by key, value and effect, in order.
func cmpTaints(want, got []corev1.Taint) string {
	strip := func(ts []corev1.Taint) []corev1.Taint {
		out := make([]corev1.Taint, 0, len(ts))
		for _, t := range ts {
			out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
		}
		return out
	}
	return cmp.Diff(strip(want), strip(got))
}
