package adversarial

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/warmpolicy"
	"github.com/burstpool/burstpool/internal/warmup"
	"github.com/burstpool/burstpool/internal/watch"
	"github.com/burstpool/burstpool/test/fixture"
	"github.com/burstpool/burstpool/test/harness/apiserver"
	"github.com/burstpool/burstpool/test/harness/capacityprovider"
	"github.com/burstpool/burstpool/test/harness/fnrun"
	"github.com/burstpool/burstpool/test/harness/gomod"
)

// The pool under attack: the reference's burst pool, and the tenant it
// attaches.
const (
	victimPool = "burst-pool"
	victimNS   = "e6-pools"
	tenantNS   = "workspace-analytics"
	tenantQS   = "analytics-cluster"
	attackerNS = "tenant-b"
	// executorImage is the image of the tenant's QueryService and pods.
	executorImage = "ghcr.io/e6data/executor:3.1"
)

// policyRounds is how long a test watches for evictions that must not
// happen: three rounds of the pool's policies, one a reconcile of its
// PoolCapacity (capacityprovider.PollInterval).
const policyRounds = 3 * capacityprovider.PollInterval

// victim is the pool under attack; its nodes, executors and PoolCapacity
// carry its labels, taints and tolerations.
var victim = fixture.Pool{Name: victimPool, Namespace: victimNS}

// countingCluster is a real API server serving the capacity provider's
// CRDs and the QueryService CRD, and a client of it.
type countingCluster struct {
	cfg *rest.Config
	c   client.Client
}

func countingScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, policyv1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func startCountingCluster(t *testing.T, namespaces ...string) countingCluster {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	root := gomod.RootForTest(t)
	// The CapacityBuffer a pool's warm slots may be held by, beside the
	// CRDs the function reads.
	env := apiserver.Start(t, append(fnrun.CRDPaths(root), filepath.Join(root, "test", "crds", "upstream", "autoscaling.x-k8s.io_capacitybuffers.yaml"))...)
	c, err := client.New(env.Config, client.Options{Scheme: countingScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	fixture.CreateNamespaces(t, c, append(namespaces, victimNS, tenantNS, attackerNS)...)
	fixture.Create(t, c, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}}})
	return countingCluster{cfg: env.Config, c: c}
}

// runProvider runs the capacity provider's controllers in process until
// the test ends.
func (cc countingCluster) runProvider(t *testing.T) {
	t.Helper()
	p := capacityprovider.Start(t, cc.cfg, countingScheme(t), watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
	t.Cleanup(func() { p.Stop(t, fixture.ControllerStop) })
}

// poolNode creates a Ready node of the victim pool, labelled and tainted
// as burstpool's pool nodes are, that allocates allocatable (nothing when
// nil).
func (cc countingCluster) poolNode(t *testing.T, name string, allocatable corev1.ResourceList) {
	t.Helper()
	fixture.Create(t, cc.c, fixture.Node(fixture.NodeOptions{Name: name, Pool: victim, Allocatable: allocatable}))
}

// pod creates the pod o describes, with the executor image and the
// victim pool's tolerations, and then sets its status, as the scheduler
// and the kubelet would.
func (cc countingCluster) pod(t *testing.T, o fixture.PodOptions) {
	t.Helper()
	o.Image, o.Tolerations = executorImage, victim.Tolerations()
	fixture.Create(t, cc.c, fixture.Pod(o))
}

// victimCapacity is the victim pool's PoolCapacity as pool-compose
// composes it, attaching the tenant's QueryService.
func victimCapacity(maxExecutors int32) *v1alpha1.PoolCapacity {
	pc := &v1alpha1.PoolCapacity{
		ObjectMeta: metav1.ObjectMeta{Name: victimPool + "-capacity"},
		Spec: v1alpha1.PoolCapacitySpec{ForProvider: v1alpha1.PoolCapacityParameters{
			Pool:             v1alpha1.PoolRef{Name: victimPool, Namespace: victimNS},
			NodeSelector:     victim.NodeLabels(),
			ExecutorSelector: map[string]string{qsv1alpha1.LabelPool: victimPool, qsv1alpha1.LabelPoolNamespace: victimNS, qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool},
			WarmupSelector:   map[string]string{qsv1alpha1.LabelPool: victimPool, qsv1alpha1.LabelPoolNamespace: victimNS, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentWarmup},
			Tolerations:      victim.Tolerations(),
			ExecutorsPerNode: 2,
			MaxExecutors:     maxExecutors,
			QueryServices:    []v1alpha1.AttachedQueryService{{Name: tenantQS, Namespace: tenantNS}},
		}},
	}
	pc.SetProviderConfigReference(&xpv2.Reference{Name: "default"})
	return pc
}

func (cc countingCluster) capacity(t *testing.T, name string) *v1alpha1.PoolCapacity {
	t.Helper()
	pc := &v1alpha1.PoolCapacity{}
	if err := cc.c.Get(context.Background(), client.ObjectKey{Name: name}, pc); err != nil {
		t.Fatal(err)
	}
	return pc
}

// moved is what of a pool's status pods can move.
type moved struct {
	Occupied, Pending int32
	RequestedCPU      string
	Failures          []string
	WarmupFailures    []string
	Unauthorized      []string
}

func movedOf(o v1alpha1.PoolCapacityObservation) moved {
	m := moved{Occupied: o.OccupiedExecutors, Pending: o.PendingExecutors}
	if o.Requested != nil {
		m.RequestedCPU = o.Requested.CPU.String()
	}
	for _, f := range o.Failures {
		m.Failures = append(m.Failures, f.Namespace+"/"+f.Pod+": "+f.Message)
	}
	for _, w := range o.WarmupFailures {
		m.WarmupFailures = append(m.WarmupFailures, w.Image+": "+w.Message)
	}
	for _, u := range o.UnauthorizedExecutors {
		m.Unauthorized = append(m.Unauthorized, u.Namespace+"/"+u.Pod)
	}
	return m
}

// TestForeignPodsMoveNoCounter replays "Rewrite another pool's status":
// a tenant who may create pods only in their own namespace creates pods
// that carry burst-pool's labels, node selector and tolerations: 30
// pending executors of 64 CPUs (pending 0 -> 30, requested to 1,920
// cores), a failed executor with a message of their choosing, and a fake
// warmup pod that cannot pull its image. None of them is on the pool's
// nodes or in a namespace the pool attaches, so burst-pool's status shows
// only its tenant's executor.
func TestForeignPodsMoveNoCounter(t *testing.T) {
	cc := startCountingCluster(t)
	ctx := context.Background()
	cc.poolNode(t, "burst-1", nil)
	cc.pod(t, fixture.PodOptions{Namespace: tenantNS, Name: "analytics-exec-0", Labels: victim.ExecutorLabels(tenantQS), NodeName: "burst-1", CPU: "8", Status: fixture.Running(time.Now().Add(-time.Hour))})

	for i := range 30 {
		cc.pod(t, fixture.PodOptions{Namespace: attackerNS, Name: fmt.Sprintf("fake-exec-%02d", i), Labels: victim.ExecutorLabels(tenantQS), NodeSelector: victim.NodeLabels(), CPU: "64", Status: fixture.Unschedulable()})
	}
	cc.pod(t, fixture.PodOptions{Namespace: attackerNS, Name: "fake-failed", Labels: victim.ExecutorLabels(tenantQS), NodeSelector: victim.NodeLabels(),
		Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "burst-pool is being decommissioned: move your QueryServices to pool cheap-pool"}})
	warm := map[string]string{qsv1alpha1.LabelPool: victimPool, qsv1alpha1.LabelPoolNamespace: victimNS, qsv1alpha1.LabelComponent: qsv1alpha1.ComponentWarmup}
	cc.pod(t, fixture.PodOptions{Namespace: attackerNS, Name: "fake-warmup", Labels: warm, Annotations: map[string]string{warmup.AnnotationImage: executorImage}, NodeSelector: victim.NodeLabels(),
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "executor", Image: executorImage,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "registry says: this image is withdrawn, stop using burst-pool"}}}}}})

	pc := victimCapacity(10)
	if err := cc.c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	cc.runProvider(t)
	var got moved
	fixture.Eventually(t, fixture.ObserverSync, "burst-pool's status", func() error {
		o := cc.capacity(t, pc.Name).Status.AtProvider
		if o.ObservedAt.IsZero() || o.TotalExecutors == 0 {
			return fmt.Errorf("not observed yet: %+v", o)
		}
		got = movedOf(o)
		return nil
	})
	want := moved{Occupied: 1, RequestedCPU: "8"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("foreign pods moved burst-pool's status (-want +got):\n%s", diff)
	}
	// Nor its demand history, which a learned warm level follows: it
	// records the tenant's one executor wanted, in the slot the provider
	// began it and, once written, in the slot of now.
	fixture.Eventually(t, fixture.ObserverSync, "burst-pool's demand history", func() error {
		d := cc.capacity(t, pc.Name).Status.AtProvider.Demand
		if d == nil {
			return fmt.Errorf("no demand history in status")
		}
		begun := &warmpolicy.History{}
		begun.Observe(d.Since.Time, 1, 0, 0)
		current := &warmpolicy.History{}
		current.Observe(d.Since.Time, 1, 0, 0)
		current.Observe(time.Now(), 1, 0, 0)
		if d.Encoded != begun.Encode() && d.Encoded != current.Encode() {
			return fmt.Errorf("the demand history is not one of the tenant's one executor wanted")
		}
		return nil
	})
}

// TestForeignWaitersEvictNobody replays "with shares enforced, two
// unschedulable waiting pods get a tenant's running executors evicted
// every round": the pool's four slots are full with analytics-cluster's
// executors, above its share of two, and pods labelled as executors of
// the other attached QueryService (share two) appear: two in that
// QueryService's namespace that can never run on the pool (one held by a
// scheduling gate, one that asks for other nodes), and two unschedulable
// ones in a foreign namespace. None of them waits for the pool, so no
// round evicts anything.
func TestForeignWaitersEvictNobody(t *testing.T) {
	cc := startCountingCluster(t, sharedNS)
	pc, victims := cc.sharedPool(t, nil)

	cc.pod(t, fixture.PodOptions{Namespace: sharedNS, Name: "gated", Labels: victim.ExecutorLabels(sharedQS), NodeSelector: victim.NodeLabels(), SchedulingGates: []string{"example.com/hold"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated, LastTransitionTime: metav1.Now()}}}})
	cc.pod(t, fixture.PodOptions{Namespace: sharedNS, Name: "elsewhere", Labels: victim.ExecutorLabels(sharedQS), NodeSelector: map[string]string{"kubernetes.io/hostname": "no-such-node"}, Status: fixture.Unschedulable()})
	for i := range 2 {
		cc.pod(t, fixture.PodOptions{Namespace: attackerNS, Name: fmt.Sprintf("waiter-%d", i), Labels: victim.ExecutorLabels(sharedQS), NodeSelector: victim.NodeLabels(), Status: fixture.Unschedulable()})
	}
	cc.runPolicyRounds(t, pc.Name)
	cc.noneEvicted(t, tenantNS, victims, "pods that do not wait for the pool")
}

// runPolicyRounds runs the capacity provider, waits for its first
// observation of the PoolCapacity pc, and then for three rounds of its
// policies.
func (cc countingCluster) runPolicyRounds(t *testing.T, pc string) {
	t.Helper()
	cc.runProvider(t)
	fixture.Eventually(t, fixture.ObserverSync, pc+"'s status", func() error {
		if o := cc.capacity(t, pc).Status.AtProvider; o.ObservedAt.IsZero() {
			return fmt.Errorf("not observed yet: %+v", o)
		}
		return nil
	})
	time.Sleep(policyRounds)
}

// noneEvicted fails t for each executor of names in ns that is gone or
// terminating, evicted for what why says.
func (cc countingCluster) noneEvicted(t *testing.T, ns string, names []string, why string) {
	t.Helper()
	for _, name := range names {
		p := &corev1.Pod{}
		err := cc.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p)
		switch {
		case err != nil:
			t.Errorf("executor %s/%s is gone: %v", ns, name, err)
		case p.DeletionTimestamp != nil:
			t.Errorf("executor %s/%s was evicted for %s", ns, name, why)
		}
	}
}

// TestLabelledStrangersNeverDetach replays "1,001 labelled strangers push
// a pool's own QueryService out": a remote pool's summary of its workload
// cluster lists at most 1,000 QueryServices, and the pool's selector (the
// reference's e6data.io/pool: burst-pool) matches any QueryService anyone
// labels so. The pool attaches its tenant's QueryService; then a stranger
// creates 1,001 labelled QueryServices pointing at the pool, named to sort
// first. The capacity provider's summary still lists the attached one
// (and says it is truncated), and the pool-compose function, served over
// gRPC and composing from that PoolCapacity, keeps it attached.
func TestLabelledStrangersNeverDetach(t *testing.T) {
	cc := startCountingCluster(t)
	ctx := context.Background()
	// The workload cluster is this API server, through ProviderConfig
	// west; the platform's settings send every pool there, and let the
	// victim's pools attach the tenant namespace's QueryServices.
	if err := cc.c.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "west"},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}}}); err != nil {
		t.Fatal(err)
	}
	settings := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{
		"workloadCluster": map[string]any{"providerConfigName": "west"},
		"tenancy":         map[string]any{"namespaces": []any{map[string]any{"names": []any{victimNS}, "attachFrom": []any{tenantNS}}}},
	}}}
	settings.SetAPIVersion("apiextensions.crossplane.io/v1beta1")
	settings.SetKind("EnvironmentConfig")
	settings.SetName("burstpool")
	if err := cc.c.Create(ctx, settings); err != nil {
		t.Fatal(err)
	}
	// pointing is a QueryService labelled for the victim pool and pointing
	// at it.
	pointing := func(ns, name string) client.Object {
		return fixture.Unstructured(t, fixture.QueryService(fixture.QueryServiceOptions{Namespace: ns, Name: name,
			Labels: map[string]string{qsv1alpha1.LabelPool: victimPool}, Image: executorImage, Pool: victim}))
	}
	fixture.Create(t, cc.c, pointing(tenantNS, tenantQS))
	xr, err := fnrun.XPool(victimPool, victimNS, "maxExecutors: 10\nexecutorsPerNode: 2\nqueryServiceSelector:\n  matchLabels: {e6data.io/pool: burst-pool}")
	if err != nil {
		t.Fatal(err)
	}
	fn := fnrun.Start(t)
	input := map[string]any{
		"apiVersion": "pool.fn.burstpool.io/v1beta1", "kind": "Input",
		"aws": map[string]any{"role": "KarpenterNodeRole", "subnetSelectorTerms": []any{map[string]any{"id": "subnet-1"}}, "securityGroupSelectorTerms": []any{map[string]any{"id": "sg-1"}}},
	}
	// compose runs one reconcile of the pool with the PoolCapacity as the
	// API server holds it, applies the PoolCapacity it desires as
	// Crossplane would, keeps the status it writes, and returns the
	// QueryServices it attaches.
	var capacityName string
	compose := func() []string {
		t.Helper()
		observed := map[string]*unstructured.Unstructured{}
		if capacityName != "" {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("PoolCapacity"))
			if err := cc.c.Get(ctx, client.ObjectKey{Name: capacityName}, u); err != nil {
				t.Fatal(err)
			}
			observed["remote-capacity"] = u
		}
		rsp, err := fn.Compose(ctx, cc.c, fnrun.Request{XR: xr, Observed: observed, Input: input})
		if err != nil {
			t.Fatal(err)
		}
		want, ok := fnrun.Desired(rsp)["remote-capacity"]
		if !ok {
			t.Fatalf("the pool composes no PoolCapacity; status %v", fnrun.Status(rsp))
		}
		if capacityName == "" {
			capacityName = want.GetName()
			if err := cc.c.Create(ctx, want); err != nil {
				t.Fatal(err)
			}
		} else {
			// The provider writes the PoolCapacity's status meanwhile, so
			// the spec is written against the latest version, as
			// Crossplane's server-side apply would not conflict.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				u := observed["remote-capacity"].DeepCopy()
				if err := cc.c.Get(ctx, client.ObjectKey{Name: capacityName}, u); err != nil {
					return err
				}
				u.Object["spec"] = want.Object["spec"]
				return cc.c.Update(ctx, u)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		xr.Object["status"] = fnrun.Status(rsp)
		var out []string
		for _, a := range asMaps(xr.Object["status"].(map[string]any)["attachedQueryServices"]) {
			if a["attached"] == true {
				q := a["queryService"].(map[string]any)
				out = append(out, fmt.Sprint(q["namespace"], "/", q["name"]))
			}
		}
		return out
	}
	summary := func(what string, ready func(*v1alpha1.WorkloadClusterSummary) error) *v1alpha1.WorkloadClusterSummary {
		t.Helper()
		var s *v1alpha1.WorkloadClusterSummary
		fixture.Eventually(t, fixture.ObserverSync, what, func() error {
			pc := &v1alpha1.PoolCapacity{}
			if err := cc.c.Get(ctx, client.ObjectKey{Name: capacityName}, pc); err != nil {
				return err
			}
			if s = pc.Status.AtProvider.WorkloadCluster; s == nil {
				return fmt.Errorf("no summary yet")
			}
			return ready(s)
		})
		return s
	}

	compose() // the PoolCapacity, waiting for the workload cluster
	cc.runProvider(t)
	summary("the first summary", func(*v1alpha1.WorkloadClusterSummary) error { return nil })
	own := tenantNS + "/" + tenantQS
	if diff := cmp.Diff([]string{own}, compose()); diff != "" {
		t.Fatalf("before the attack, attached (-want +got):\n%s", diff)
	}

	const strangers = v1alpha1.MaxSummaryQueryServices + 1
	apiserver.Parallel(t, strangers, 8, func(i int) error {
		return cc.c.Create(ctx, pointing(attackerNS, fmt.Sprintf("aa-%04d", i)))
	})
	// The summary is read again every 15 s (poolcapacity.SummaryRefresh).
	s := summary("a summary that reads the strangers", func(s *v1alpha1.WorkloadClusterSummary) error {
		if !s.Truncated {
			return fmt.Errorf("%d QueryServices listed, not truncated", len(s.QueryServices))
		}
		return nil
	})
	listed := false
	for _, q := range s.QueryServices {
		listed = listed || q.Namespace+"/"+q.Name == own
	}
	if !listed {
		t.Errorf("the summary of %d QueryServices leaves out the pool's own %s", len(s.QueryServices), own)
	}
	if got := compose(); !slices.Contains(got, own) {
		t.Errorf("after the attack the pool detached its own QueryService %s; it attaches %d others", own, len(got))
	}
}

// asMaps returns the maps a list value holds.
func asMaps(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
