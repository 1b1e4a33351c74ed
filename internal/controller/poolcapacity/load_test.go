package poolcapacity_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/apiserver"
	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// loadParam reads a positive integer from the environment, or def.
func loadParam(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// parallel runs fn for 0..n-1 on workers goroutines.
func parallel(t *testing.T, n, workers int, fn func(i int) error) {
	t.Helper()
	apiserver.Parallel(t, n, workers, fn)
}

// loadConvergeLimit bounds each wait for every PoolCapacity to converge.
const loadConvergeLimit = 10 * time.Minute

// loadGCLimit bounds the wait for the provider's first garbage collection
// after a convergence: the Go runtime collects at least every two minutes.
const loadGCLimit = 150 * time.Second

// A load is the cluster TestLoad builds: pods executors on nodes nodes,
// spread over pools pools.
type load struct {
	pods, nodes, pools int
}

func (l load) pool(i int) string { return fmt.Sprintf("load-%04d", i%l.pools) }

// nodeFor is the index of a node of the pool of executor i's pool index p:
// executors count only on their own pool's nodes.
func (l load) nodeFor(p, i int) int { return p%l.pools + l.pools*(i%(l.nodes/l.pools)) }

func (l load) nodeName(i int) string { return fmt.Sprintf("load-node-%05d", i) }

func (l load) podName(i int) string { return fmt.Sprintf("exec-%06d", i) }

// node is pool node i as a cloud node registers: labels of its type
// and zone, capacity, addresses, the images it pulled.
func (l load) node(i int) *corev1.Node {
	name := l.nodeName(i)
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			qsv1alpha1.LabelPool:           l.pool(i),
			qsv1alpha1.LabelPoolNamespace:  "load",
			corev1.LabelHostname:           name,
			corev1.LabelInstanceTypeStable: "m7i.4xlarge",
			corev1.LabelTopologyZone:       fmt.Sprintf("zone-%d", i%3),
			corev1.LabelTopologyRegion:     "region-1",
			corev1.LabelOSStable:           "linux",
			corev1.LabelArchStable:         "amd64",
			"karpenter.sh/capacity-type":   "on-demand",
			"karpenter.sh/nodepool":        l.pool(i),
		}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///zone/i-" + name},
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status = corev1.NodeStatus{
		Capacity: res, Allocatable: res,
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory"},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure"},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID"},
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)}, {Type: corev1.NodeHostName, Address: name}},
		NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", ContainerRuntimeVersion: "containerd://2.1.0", OSImage: "Amazon Linux 2023", Architecture: "amd64", OperatingSystem: "linux"},
		Images: []corev1.ContainerImage{
			{Names: []string{"registry.example/e6/exec@sha256:0123456789abcdef", "registry.example/e6/exec:1"}, SizeBytes: 812345678},
			{Names: []string{"registry.example/pause@sha256:fedcba9876543210", "registry.example/pause:3.10"}, SizeBytes: 321000},
		},
	}
	return n
}

// pod is executor i of QueryService qs-(i%5) as a ReplicaSet makes it and
// the kubelet reports it running on node: requests, environment, probes,
// conditions and container status.
func (l load) pod(i, node int, pool string) *corev1.Pod {
	qs := fmt.Sprintf("qs-%d", i%5)
	labels := executorLabels(qs)
	labels[qsv1alpha1.LabelPool] = pool
	labels[qsv1alpha1.LabelPoolNamespace] = "load"
	labels["pod-template-hash"] = "7d9f6c5b4"
	now := metav1.Now()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: l.podName(i), Labels: labels,
			Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "executor"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: qs + "-exec-7d9f6c5b4",
				UID: "9f0e4c1a-4f5e-4a57-9d0b-0c1d2e3f4a5b", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			NodeName: l.nodeName(node),
			Containers: []corev1.Container{{
				Name: "executor", Image: "registry.example/e6/exec:1",
				Args:  []string{"--role=executor", "--query-service=" + qs},
				Ports: []corev1.ContainerPort{{Name: "rpc", ContainerPort: 9000}, {Name: "metrics", ContainerPort: 9100}},
				Env: []corev1.EnvVar{{Name: "QUERY_SERVICE", Value: qs}, {Name: "POOL", Value: pool},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
				Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("6Gi")}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("rpc")}}},
			}},
			Tolerations: []corev1.Toleration{{Key: qsv1alpha1.TaintPool, Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, StartTime: &now, HostIP: "10.0.0.1", PodIP: "10.1.0.1", QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "executor", Image: "registry.example/e6/exec:1", ImageID: "registry.example/e6/exec@sha256:0123456789abcdef",
			ContainerID: fmt.Sprintf("containerd://%064d", i), Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
	return p
}

// createWithStatus creates obj, then writes its status as the kubelet would (the API
// server drops the status of a create).
func createWithStatus(ctx context.Context, c client.Client, obj client.Object, status func(client.Object)) error {
	if err := c.Create(ctx, obj); err != nil {
		return err
	}
	status(obj)
	return c.Status().Update(ctx, obj)
}

// TestLoad puts BURSTPOOL_LOADTEST_PODS running executor pods (default
// 10,000) on BURSTPOOL_LOADTEST_NODES nodes (1,000) in
// BURSTPOOL_LOADTEST_POOLS pools (40) on the real API server, then runs the
// capacity provider's own binary (cmd/provider, built by the test) as a
// process of its own, and reports how long every PoolCapacity takes to
// converge after the provider starts, after 10% of the executors are
// deleted and after a churn burst, and the provider's memory: its resident
// set (VmRSS, and the peak VmHWM) and its Go heap (live after the first
// collection past convergence), in all and per executor beyond an idle
// provider's. BURSTPOOL_LOADTEST_WORKERS (64) writers create the objects;
// the provider runs with --max-reconcile-rate BURSTPOOL_LOADTEST_RECONCILE_RATE
// (100). With BURSTPOOL_LOADTEST_STARTS (1) above one, the provider is
// started again that many times in all, each time from statuses that count
// no executor; with BURSTPOOL_LOADTEST_BASELINE set to another build of the
// provider (an earlier commit's), every second start runs that binary
// instead, so that one run compares the two interleaved, on the same API
// server and objects; with BURSTPOOL_LOADTEST_PROFILE set to a folder, each start's
// first seconds are profiled into it, the provider's (its --profile) and
// the API server's. A timeline
// of each start shows where it spends its time. It runs only with
// BURSTPOOL_LOADTEST=1.
func TestLoad(t *testing.T) {
	switch v := os.Getenv("BURSTPOOL_LOADTEST"); v {
	case "":
		t.Skip("set BURSTPOOL_LOADTEST=1 to run the load test")
	case "1":
	default:
		t.Fatalf("BURSTPOOL_LOADTEST=%q: set it to 1 to run the load test, or unset it", v)
	}
	l := load{
		pods:  loadParam(t, "BURSTPOOL_LOADTEST_PODS", 10000),
		nodes: loadParam(t, "BURSTPOOL_LOADTEST_NODES", 1000),
		pools: loadParam(t, "BURSTPOOL_LOADTEST_POOLS", 40),
	}
	workers := loadParam(t, "BURSTPOOL_LOADTEST_WORKERS", 64)
	rate := loadParam(t, "BURSTPOOL_LOADTEST_RECONCILE_RATE", 100)
	starts := loadParam(t, "BURSTPOOL_LOADTEST_STARTS", 1)
	profiles := os.Getenv("BURSTPOOL_LOADTEST_PROFILE")
	baseline := os.Getenv("BURSTPOOL_LOADTEST_BASELINE")
	if baseline != "" && profiles != "" {
		t.Fatal("BURSTPOOL_LOADTEST_BASELINE and _PROFILE: a baseline binary may serve no profile; set one of them")
	}
	if baseline != "" {
		// The baseline runs under the provider's name: a client's field
		// manager is its binary's name, and under another one its status
		// writes take their fields into an entry of managed fields of
		// their own, in every PoolCapacity (2,599 bytes of managed fields
		// instead of 2,384 at 4 pools).
		named := filepath.Join(t.TempDir(), providerManager)
		abs, err := filepath.Abs(baseline)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, named); err != nil {
			t.Fatal(err)
		}
		baseline = named
	}
	if l.nodes < l.pools || l.pods < l.pools {
		t.Fatalf("BURSTPOOL_LOADTEST_NODES (%d) and _PODS (%d) must be at least _POOLS (%d)", l.nodes, l.pods, l.pools)
	}
	ctx := context.Background()
	bin, kubeconfig := buildProvider(t), providerKubeconfig(t)

	// Writers go as fast as the API server takes them: no client-side
	// rate limit.
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = -1, 0
	c, err := client.NewWithWatch(fast, client.Options{Scheme: scheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, c, "load")
	if err := c.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "load"},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}}}); err != nil {
		t.Fatal(err)
	}
	parallel(t, l.pools, workers, func(i int) error {
		pc := poolCapacity(l.pool(i), "load")
		pc.Spec.ForProvider.Pool = v1alpha1.PoolRef{Name: l.pool(i), Namespace: "load"}
		pc.Spec.ForProvider.NodeSelector = map[string]string{qsv1alpha1.LabelPool: l.pool(i)}
		pc.Spec.ForProvider.ExecutorSelector = map[string]string{qsv1alpha1.LabelPool: l.pool(i), qsv1alpha1.LabelExecutorType: qsv1alpha1.ExecutorTypePool}
		pc.Spec.ForProvider.WarmupSelector = nil
		pc.Spec.ForProvider.ExecutorsPerNode = 1000
		pc.Spec.ForProvider.MaxExecutors = 1000000
		pc.Spec.ForProvider.QueryServices = nil
		for q := range 5 {
			pc.Spec.ForProvider.QueryServices = append(pc.Spec.ForProvider.QueryServices, v1alpha1.AttachedQueryService{Name: fmt.Sprintf("qs-%d", q), Namespace: "load"})
		}
		return c.Create(ctx, pc)
	})
	st := watchStatuses(t, c, l.pools)

	// An idle provider: every PoolCapacity reconciled, no pod or node.
	run := startLoadProvider(t, bin, kubeconfig, rate, "")
	st.converge(t, "an idle provider", func(pc *v1alpha1.PoolCapacity) bool {
		return pc.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue
	})
	idle := run.memory(t, false)
	run.stop(t)
	t.Logf("idle provider (%d PoolCapacities): %s", l.pools, idle)

	began := time.Now()
	parallel(t, l.nodes, workers, func(i int) error {
		n := l.node(i)
		status := n.Status
		return createWithStatus(ctx, c, n, func(o client.Object) { o.(*corev1.Node).Status = status })
	})
	nodesTook := time.Since(began)
	began = time.Now()
	want := map[string]int32{}
	for i := range l.pods {
		want[l.pool(i)]++
	}
	parallel(t, l.pods, workers, func(i int) error {
		p := l.pod(i, l.nodeFor(i, i/l.pools), l.pool(i))
		status := p.Status
		return createWithStatus(ctx, c, p, func(o client.Object) { o.(*corev1.Pod).Status = status })
	})
	t.Logf("created %d nodes in %s and %d running executors in %s (%.0f objects/s, two writes each), in %d pools",
		l.nodes, nodesTook.Round(time.Millisecond), l.pods, time.Since(began).Round(time.Millisecond),
		float64(l.nodes+l.pods)/(nodesTook+time.Since(began)).Seconds(), l.pools)

	var rows []loadRow
	floorRow := "not measured: BURSTPOOL_LOADTEST_STARTS=1"
	for n := 1; n <= starts; n++ {
		phase := "start"
		if n > 1 {
			// Each later start begins, as the first did, from statuses
			// that count no executor: the counts must be the new
			// provider's.
			run.stop(t)
			if n == 2 {
				floorRow = floor(t, c, st, l, rate, want)
			}
			mark, began := planeCPU(t), time.Now()
			uncount(t, c, l.pools)
			st.converge(t, "counts cleared", occupied(nil))
			// What a thousand status writes cost the API server alone,
			// beside what a start costs it.
			t.Logf("before start %d: the test cleared %d PoolCapacities' counts in %s; CPU seconds: %s", n, l.pools,
				time.Since(began).Round(time.Millisecond), mark.since(t, 0))
			phase = fmt.Sprintf("start %d", n)
		}
		var profile string
		if profiles != "" {
			profile = filepath.Join(profiles, strings.ReplaceAll(phase, " ", "-")+".pprof")
		}
		requests := apiRequests(t)
		cpu := planeCPU(t)
		started := bin
		if baseline != "" && n%2 == 0 {
			started = baseline
			phase += " (baseline)"
		}
		var apiProfiled <-chan struct{}
		if profile != "" {
			apiProfiled = apiServerProfile(t, filepath.Join(profiles, "apiserver-"+filepath.Base(profile)))
		}
		run = startLoadProvider(t, started, kubeconfig, rate, profile)
		stopTimeline := run.timeline(t, st, occupied(want), cpu)
		d := st.converge(t, phase, occupied(want))
		t.Logf("%s: CPU seconds used until converged: %s", phase, cpu.since(t, run.proc.PID))
		t.Logf("%s: the API server until converged (and shortly after): requests by verb, resource and code: %s", phase, requests.since(t))
		if apiProfiled != nil {
			<-apiProfiled
		}
		if all, first := stopTimeline(l.pods + l.nodes); all > 0 || first > 0 {
			t.Logf("%s: the observer applied every pod and node by %s after the provider started (metrics read every %s); the first PoolCapacity converged at %s",
				phase, all.Round(time.Millisecond), loadScrape, first.Round(time.Millisecond))
		}
		t.Logf("%s: a PoolCapacity each status write carries: %s", phase, st.size(l.pool(0)))
		t.Logf("%s: events recorded so far: %s", phase, recordedEvents(t, c))
		rows = append(rows, loadRow{phase: phase, executors: l.pods, converged: d, mem: run.memory(t, n == 1)})
		t.Logf("%s: converged in %s; %s", phase, d.Round(time.Millisecond), rows[len(rows)-1].mem)
	}
	defer run.stop(t)

	// 10% of the executors go at once.
	churn := l.pods / 10
	parallel(t, churn, workers, func(i int) error {
		return client.IgnoreNotFound(c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: l.podName(i)}}, client.GracePeriodSeconds(0)))
	})
	for i := range churn {
		want[l.pool(i)]--
	}
	d := st.converge(t, "10% deleted", occupied(want))
	rows = append(rows, loadRow{phase: "10% deleted", executors: l.pods - churn, converged: d, mem: run.memory(t, false)})
	t.Logf("10%% deleted: converged in %s after the last delete; %s", d.Round(time.Millisecond), rows[len(rows)-1].mem)

	// A churn burst: as many executors again go as arrive, at once; the
	// new ones land on the first half of the pools.
	arrive := max(l.pools/2, 1)
	parallel(t, 2*churn, workers, func(i int) error {
		if i%2 == 0 {
			k := churn + i/2
			return client.IgnoreNotFound(c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: l.podName(k)}}, client.GracePeriodSeconds(0)))
		}
		k := l.pods + i/2
		p := l.pod(k, l.nodeFor(k%arrive, k), l.pool(k%arrive))
		status := p.Status
		return createWithStatus(ctx, c, p, func(o client.Object) { o.(*corev1.Pod).Status = status })
	})
	for i := range churn {
		want[l.pool(churn+i)]--
		want[l.pool((l.pods+i)%arrive)]++
	}
	d = st.converge(t, "churn burst", occupied(want))
	rows = append(rows, loadRow{phase: "churn burst", executors: l.pods - churn, converged: d, mem: run.memory(t, false)})
	t.Logf("churn burst: converged in %s after the last write; %s", d.Round(time.Millisecond), rows[len(rows)-1].mem)

	t.Logf("capacity provider under load: %d nodes, %d pools, the provider as its own process (--max-reconcile-rate %d)", l.nodes, l.pools, rate)
	t.Logf("idle: RSS %.1f MiB, Go heap %.1f MiB live (%.1f MiB in use)", idle.rssMiB(), idle.liveMiB(), idle.inuseMiB())
	t.Logf("the floor of a start (no provider: the objects streamed undecoded, then the converged statuses written): %s", floorRow)
	t.Logf("%-12s %9s %10s %9s %9s %9s %10s %12s %13s", "phase", "executors", "converged", "RSS MiB", "peak MiB", "heap MiB", "inuse MiB", "RSS KiB/exec", "heap KiB/exec")
	for _, r := range rows {
		heap, perHeap := "-", "-"
		if r.mem.live > 0 {
			heap = fmt.Sprintf("%.1f", r.mem.liveMiB())
			perHeap = fmt.Sprintf("%.2f", (r.mem.live-idle.live)/1024/float64(r.executors))
		}
		t.Logf("%-12s %9d %10s %9.1f %9.1f %9s %10.1f %12.2f %13s", r.phase, r.executors, r.converged.Round(time.Millisecond),
			r.mem.rssMiB(), float64(r.mem.peakKiB)/1024, heap, r.mem.inuseMiB(), float64(r.mem.rssKiB-idle.rssKiB)/float64(r.executors), perHeap)
	}
}

// A cpuMark is the CPU time the processes of the test's control plane had
// used at one moment: the API server, its etcd and the test itself.
type cpuMark struct {
	at                    time.Time
	apiserver, etcd       int
	apiserverCPU, etcdCPU float64
	self                  float64
}

// planeCPU marks the CPU time the API server, its etcd and this test have
// used so far.
func planeCPU(t *testing.T) cpuMark {
	t.Helper()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	m := cpuMark{apiserver: localcp.FindProcess("--secure-port=" + u.Port())}
	for _, a := range localcp.Cmdline(m.apiserver) {
		if v, ok := strings.CutPrefix(a, "--etcd-servers="); ok {
			m.etcd = localcp.FindProcess("--listen-client-urls=" + v)
		}
	}
	return m.now()
}

// cpuSeconds is the CPU time process pid has used, in seconds.
func cpuSeconds(pid int) (float64, error) {
	d, err := localcp.CPUTime(pid)
	return d.Seconds(), err
}

// now marks the CPU time m's processes have used so far.
func (m cpuMark) now() cpuMark {
	n := m
	n.at = time.Now()
	n.apiserverCPU, _ = cpuSeconds(m.apiserver)
	n.etcdCPU, _ = cpuSeconds(m.etcd)
	n.self, _ = cpuSeconds(os.Getpid())
	return n
}

// since says how much CPU time the provider (process provider, started
// after m; none when zero) and the control plane's processes used since m.
func (m cpuMark) since(t *testing.T, provider int) string {
	t.Helper()
	n := m.now()
	var p string
	if provider != 0 {
		cpu, err := cpuSeconds(provider)
		if err != nil {
			return fmt.Sprintf("cannot read the provider's: %v", err)
		}
		p = fmt.Sprintf("provider %.1f, ", cpu)
	}
	if m.apiserver == 0 || m.etcd == 0 {
		return p + "(the API server's and etcd's processes were not found)"
	}
	return fmt.Sprintf("%sAPI server %.1f, etcd %.1f, the test %.1f, in %.1f s on %d cores",
		p, n.apiserverCPU-m.apiserverCPU, n.etcdCPU-m.etcdCPU, n.self-m.self, n.at.Sub(m.at).Seconds(), runtime.NumCPU())
}

// providerManager is the provider's field manager: client-go names it
// after the binary.
const providerManager = "provider"

// uncount clears the executor counts of every PoolCapacity's status, as
// the provider's own write would: a status the provider wrote before and
// is stale now.
func uncount(t *testing.T, c client.Client, pools int) {
	t.Helper()
	var l v1alpha1.PoolCapacityList
	if err := c.List(context.Background(), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != pools {
		t.Fatalf("%d PoolCapacities, want %d", len(l.Items), pools)
	}
	parallel(t, len(l.Items), 32, func(i int) error {
		pc := &l.Items[i]
		pc.Status.AtProvider.OccupiedExecutors = 0
		return c.Status().Update(context.Background(), pc, client.FieldOwner(providerManager))
	})
}

// A loadRow is one phase of TestLoad: how many executors run, how long
// the PoolCapacities took to converge, and the provider's memory then.
type loadRow struct {
	phase     string
	executors int
	converged time.Duration
	mem       loadMemory
}

// occupied is true of a PoolCapacity that counts the executors want says
// its pool runs; with want nil, of one that counts none.
func occupied(want map[string]int32) func(*v1alpha1.PoolCapacity) bool {
	if want == nil {
		return func(pc *v1alpha1.PoolCapacity) bool { return pc.Status.AtProvider.OccupiedExecutors == 0 }
	}
	w := make(map[string]int32, len(want))
	for k, v := range want {
		w[k] = v
	}
	return func(pc *v1alpha1.PoolCapacity) bool {
		n, ok := w[pc.Name]
		return ok && pc.Status.AtProvider.OccupiedExecutors == n
	}
}

// statuses follows every PoolCapacity through a watch, as the test reads
// convergence without polling the API server.
type statuses struct {
	pools int
	mu    sync.Mutex
	last  map[string]*v1alpha1.PoolCapacity
	kick  chan struct{}
}

func watchStatuses(t *testing.T, c client.WithWatch, pools int) *statuses {
	t.Helper()
	s := &statuses{pools: pools, last: map[string]*v1alpha1.PoolCapacity{}, kick: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			var l v1alpha1.PoolCapacityList
			if err := c.List(ctx, &l); err != nil {
				time.Sleep(time.Second)
				continue
			}
			for i := range l.Items {
				s.set(&l.Items[i])
			}
			w, err := c.Watch(ctx, &v1alpha1.PoolCapacityList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.ResourceVersion}})
			if err != nil {
				time.Sleep(time.Second)
				continue
			}
			for e := range w.ResultChan() {
				if pc, ok := e.Object.(*v1alpha1.PoolCapacity); ok && (e.Type == watch.Added || e.Type == watch.Modified) {
					s.set(pc)
				}
			}
			w.Stop()
		}
	}()
	return s
}

func (s *statuses) set(pc *v1alpha1.PoolCapacity) {
	s.mu.Lock()
	s.last[pc.Name] = pc
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// recordedEvents counts the Kubernetes events of PoolCapacities by reason
// and type, each event's count summed.
func recordedEvents(t *testing.T, c client.Client) string {
	t.Helper()
	var l corev1.EventList
	if err := c.List(context.Background(), &l, client.MatchingFields{"involvedObject.kind": "PoolCapacity"}); err != nil {
		return err.Error()
	}
	n := map[string]int32{}
	for _, e := range l.Items {
		n[e.Type+" "+e.Reason] += max(e.Count, 1)
	}
	return fmt.Sprint(n)
}

// size says how large the PoolCapacity called name is as JSON, and how
// much of that its status and its managed fields are.
func (s *statuses) size(name string) string {
	s.mu.Lock()
	pc := s.last[name].DeepCopy()
	s.mu.Unlock()
	all, err := json.Marshal(pc)
	if err != nil {
		return err.Error()
	}
	status, _ := json.Marshal(pc.Status)
	managed, _ := json.Marshal(pc.ManagedFields)
	return fmt.Sprintf("%d bytes as JSON, %d of them its status, %d its managed fields", len(all), len(status), len(managed))
}

// count is how many PoolCapacities ok holds of now.
func (s *statuses) count(ok func(*v1alpha1.PoolCapacity) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, pc := range s.last {
		if ok(pc) {
			n++
		}
	}
	return n
}

// converge waits until ok holds of every PoolCapacity and returns how long
// that took; it fails the test after loadConvergeLimit.
func (s *statuses) converge(t *testing.T, what string, ok func(*v1alpha1.PoolCapacity) bool) time.Duration {
	t.Helper()
	start := time.Now()
	limit := time.After(loadConvergeLimit)
	for {
		n := s.count(ok)
		if n == s.pools {
			return time.Since(start)
		}
		select {
		case <-s.kick:
		case <-time.After(time.Second):
		case <-limit:
			t.Fatalf("%s: only %d of %d PoolCapacities converged within %s", what, n, s.pools, loadConvergeLimit)
		}
	}
}

// buildProvider builds cmd/provider into a temporary folder.
func buildProvider(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), providerManager)
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/provider")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cannot build the provider: %v\n%s", err, out)
	}
	return bin
}

// A loadProvider is the provider binary running as its own process.
type loadProvider struct {
	proc    localcp.Process
	metrics string
	// profiled is closed once the CPU profile of the provider's first
	// seconds is written, when one was asked for.
	profiled <-chan struct{}
}

// loadProfileSeconds is how long the CPU profile of a start runs: the
// observer's first view and the reconciles after it.
const loadProfileSeconds = 15

// cpuProfile writes the CPU profile of the loadProfileSeconds after the
// provider serving pprof on addr starts to path, in the background.
func cpuProfile(t *testing.T, addr, path string) <-chan struct{} {
	t.Helper()
	return profileOf(t, "the provider", http.DefaultClient, fmt.Sprintf("http://%s", addr), path)
}

// floor measures the least a start can take on this machine, with the
// statuses the provider converged to at hand: the API server streams
// every pool pod and node to a client that decodes none of them (it reads
// each watch's frames until the initial events end), then takes the status
// write of every PoolCapacity, rate at a time, as the provider makes it.
// What a start takes beyond it is the provider's.
func floor(t *testing.T, c client.Client, st *statuses, l load, rate int, want map[string]int32) string {
	t.Helper()
	converged := map[string]v1alpha1.PoolCapacityStatus{}
	st.mu.Lock()
	for name, pc := range st.last {
		converged[name] = *pc.Status.DeepCopy()
	}
	st.mu.Unlock()
	uncount(t, c, l.pools)
	st.converge(t, "counts cleared", occupied(nil))

	requests, mark, began := apiRequests(t), planeCPU(t), time.Now()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var streamed [2]int
	var wg sync.WaitGroup
	for i, path := range []string{"/api/v1/pods", "/api/v1/nodes"} {
		wg.Go(func() { streamed[i] = initialEvents(t, hc, path) })
	}
	wg.Wait()
	viewed := time.Since(began)
	st.mu.Lock()
	pcs := make([]*v1alpha1.PoolCapacity, 0, len(st.last))
	for _, pc := range st.last {
		pc = pc.DeepCopy()
		pc.Status = converged[pc.Name]
		pcs = append(pcs, pc)
	}
	st.mu.Unlock()
	parallel(t, len(pcs), rate, func(i int) error {
		return c.Status().Update(context.Background(), pcs[i], client.FieldOwner(providerManager))
	})
	st.converge(t, "the floor's writes", occupied(want))
	d := time.Since(began)
	if streamed[0] != l.pods || streamed[1] != l.nodes {
		t.Fatalf("the floor streamed %d pods and %d nodes, want %d and %d", streamed[0], streamed[1], l.pods, l.nodes)
	}
	out := fmt.Sprintf("%s (every pod and node streamed by %s); CPU seconds: %s; the API server: %s", d.Round(time.Millisecond), viewed.Round(time.Millisecond), mark.since(t, 0), requests.since(t))
	t.Logf("the floor of a start: converged in %s", out)
	return out
}

// initialEvents watches the pool-labelled objects at path from the test's
// API server as protobuf, as the observer does, and reads the frames of
// the initial events without decoding them, until the bookmark that ends
// them. It returns how many objects came.
func initialEvents(t *testing.T, hc *http.Client, path string) int {
	t.Helper()
	q := url.Values{"watch": {"true"}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"},
		"allowWatchBookmarks": {"true"}, "labelSelector": {qsv1alpha1.LabelPool}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path+"?"+q.Encode(), nil)
	if err != nil {
		t.Error(err)
		return 0
	}
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf;stream=watch")
	rsp, err := hc.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer rsp.Body.Close() //nolint:errcheck // read only, ended early
	r := bufio.NewReaderSize(rsp.Body, 64<<10)
	var head [4]byte
	frame := make([]byte, 0, 64<<10)
	for n := 0; ; n++ {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			t.Errorf("%s: after %d events: %v", path, n, err)
			return n
		}
		size := int(binary.BigEndian.Uint32(head[:]))
		if cap(frame) < size {
			frame = make([]byte, size)
		}
		frame = frame[:size]
		if _, err := io.ReadFull(r, frame); err != nil {
			t.Errorf("%s: after %d events: %v", path, n, err)
			return n
		}
		// A metav1.WatchEvent: its type is field 1. Only a bookmark, and
		// the one that ends the initial events, is looked into.
		if bytes.HasPrefix(frame, []byte("\x0a\x08BOOKMARK")) && bytes.Contains(frame, []byte(metav1.InitialEventsAnnotationKey)) {
			return n
		}
	}
}

// An apiTally counts the requests the test's API server has served, by
// verb, resource and code (apiserver_request_total; a watch counts once
// it ends), with its garbage collections and the bytes it has allocated:
// a collection of its heap, some 3.5 GiB at 100,000 pods, costs it
// seconds of CPU, and whether one falls within a start is most of how
// much the API server's share of it varies.
type apiTally struct {
	requests          map[string]float64
	cycles, allocated float64
}

func apiRequests(t *testing.T) apiTally {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fams, err := metricFamilies(hc, cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	out := apiTally{requests: map[string]float64{}}
	for _, m := range fams["apiserver_request_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		res := l["resource"]
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		out.requests[l["verb"]+" "+res+" "+l["code"]] += m.GetCounter().GetValue()
	}
	for _, m := range fams["go_gc_duration_seconds"].GetMetric() {
		out.cycles += float64(m.GetSummary().GetSampleCount())
	}
	for _, m := range fams["go_memstats_alloc_bytes_total"].GetMetric() {
		out.allocated += m.GetCounter().GetValue()
	}
	return out
}

// since says what the API server has served, collected and allocated
// since the tally was taken.
func (a apiTally) since(t *testing.T) string {
	t.Helper()
	now := apiRequests(t)
	var out []string
	for k, v := range now.requests {
		if d := v - a.requests[k]; d > 0 {
			out = append(out, fmt.Sprintf("%s %.0f", k, d))
		}
	}
	sort.Strings(out)
	return fmt.Sprintf("%s; %.0f garbage collections, %.1f GiB allocated", strings.Join(out, ", "), now.cycles-a.cycles, (now.allocated-a.allocated)/(1<<30))
}

// apiServerProfile writes the CPU profile of the test API server's next
// loadProfileSeconds to path, in the background: what a start costs it.
func apiServerProfile(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return profileOf(t, "the API server", hc, strings.TrimSuffix(cfg.Host, "/"), path)
}

// profileOf writes the CPU profile of the next loadProfileSeconds of what
// serves pprof at base (of whom) to path, in the background, trying for up
// to ten seconds while it starts.
func profileOf(t *testing.T, whom string, hc *http.Client, base, path string) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, loadProfileSeconds)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			rsp, err := hc.Get(url) //nolint:noctx // a loopback request the server ends after loadProfileSeconds
			if err != nil {
				if time.Now().Before(deadline) {
					continue
				}
				t.Errorf("cannot profile %s: %v", whom, err)
				return
			}
			defer rsp.Body.Close() //nolint:errcheck // read only
			f, err := os.Create(path)
			if err == nil {
				_, err = io.Copy(f, rsp.Body)
				err = errors.Join(err, f.Close())
			}
			if err != nil {
				t.Errorf("cannot write the profile of %s: %v", whom, err)
				return
			}
			t.Logf("CPU profile of %s, %d s: %s", whom, loadProfileSeconds, path)
			return
		}
	}()
	return done
}

// providerKubeconfig writes the kubeconfig of a cluster-admin user of the
// test's API server, for the provider process.
func providerKubeconfig(t *testing.T) string {
	t.Helper()
	user, err := env.AddUser(envtest.User{Name: "load-provider", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// shippedEnv is the environment the shipped runtime config
// (deploy/provider/runtimeconfig.yaml) gives the provider's container, as
// NAME=value: the loadtest runs the binary as it is deployed.
func shippedEnv(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "deploy", "provider", "runtimeconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only
	docs, err := schemacheck.Documents(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		var rc struct {
			Kind string `json:"kind"`
			Spec struct {
				DeploymentTemplate struct {
					Spec struct {
						Template corev1.PodTemplateSpec `json:"template"`
					} `json:"spec"`
				} `json:"deploymentTemplate"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(d, &rc); err != nil {
			t.Fatal(err)
		}
		if rc.Kind != "DeploymentRuntimeConfig" {
			continue
		}
		for _, c := range rc.Spec.DeploymentTemplate.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if e.ValueFrom != nil {
					t.Fatalf("the shipped runtime config sets %s from the pod; the loadtest cannot", e.Name)
				}
				out = append(out, e.Name+"="+e.Value)
			}
		}
	}
	return out
}

// startLoadProvider runs the provider binary bin with kubeconfig, without
// leader election, serving its metrics on a loopback port.
func startLoadProvider(t *testing.T, bin, kubeconfig string, rate int, profile string) *loadProvider {
	t.Helper()
	dir := t.TempDir()
	addr := freeLoopback(t)
	shipped := shippedEnv(t)
	t.Logf("the provider runs with the shipped runtime config's environment %q", shipped)
	env := append([]string{"KUBECONFIG=" + kubeconfig}, shipped...)
	args := []string{"--no-leader-election", "--metrics-address=" + addr, "--health-address=127.0.0.1:0",
		"--max-reconcile-rate=" + strconv.Itoa(rate)}
	var pprofAddr string
	if profile != "" {
		pprofAddr = freeLoopback(t)
		args = append(args, "--profile="+pprofAddr)
	}
	proc, err := localcp.Start(dir, "provider", true, env, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	p := &loadProvider{proc: proc, metrics: addr}
	if profile != "" {
		p.profiled = cpuProfile(t, pprofAddr, profile)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("provider log:\n%s", proc.Tail(40))
		}
	})
	return p
}

func (p *loadProvider) stop(t *testing.T) {
	t.Helper()
	if p.profiled != nil {
		<-p.profiled
	}
	if !p.proc.Alive() {
		return
	}
	if err := p.proc.Stop(30 * time.Second); err != nil {
		t.Errorf("cannot stop the provider: %v", err)
	}
}

// freeLoopback returns a loopback address with a port free at the time.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() //nolint:errcheck // only its port was wanted
	return ln.Addr().String()
}

// loadMemory is the provider's memory at one moment.
type loadMemory struct {
	rssKiB, peakKiB int64
	// live is the Go heap the last collection found live; inuse the heap
	// in use at the moment (live and garbage), in bytes.
	live, inuse float64
}

func (m loadMemory) rssMiB() float64   { return float64(m.rssKiB) / 1024 }
func (m loadMemory) liveMiB() float64  { return m.live / (1 << 20) }
func (m loadMemory) inuseMiB() float64 { return m.inuse / (1 << 20) }

func (m loadMemory) String() string {
	return fmt.Sprintf("RSS %.1f MiB (peak %.1f), Go heap %.1f MiB live, %.1f MiB in use", m.rssMiB(), float64(m.peakKiB)/1024, m.liveMiB(), m.inuseMiB())
}

// memory reads the provider's resident set and Go heap. With collected it
// first waits for a garbage collection (up to loadGCLimit), so that the live
// heap it reads counts everything the provider holds now.
func (p *loadProvider) memory(t *testing.T, collected bool) loadMemory {
	t.Helper()
	m, err := p.scrape()
	if err != nil {
		t.Fatalf("cannot read the provider's metrics: %v", err)
	}
	if collected {
		limit := time.Now().Add(loadGCLimit)
		for cycles := m["go_gc_cycles_total_gc_cycles_total"]; time.Now().Before(limit); time.Sleep(250 * time.Millisecond) {
			if m, err = p.scrape(); err != nil {
				t.Fatalf("cannot read the provider's metrics: %v", err)
			}
			if m["go_gc_cycles_total_gc_cycles_total"] > cycles {
				break
			}
		}
	}
	rss, err := localcp.StatusKiB(p.proc.PID, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	peak, err := localcp.StatusKiB(p.proc.PID, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	return loadMemory{rssKiB: rss, peakKiB: peak, live: m["go_gc_heap_live_bytes"], inuse: m["go_memstats_heap_inuse_bytes"]}
}

// loadSample is how often timeline reads the CPU time of the provider and
// the control plane, and counts the PoolCapacities converged: often
// enough to place each step of a start.
const loadSample = 500 * time.Millisecond

// loadScrape is how often timeline reads the provider's metrics. A scrape
// of a thousand pools' gauges (some 45,000 series) costs the provider
// about 70 ms of CPU: at every loadSample, serving them took a fifth of
// the provider's CPU during the start being measured, and every 2 s,
// still 7%. Prometheus scrapes every 15 to 60 s; this is at least once
// in a start.
const loadScrape = 5 * time.Second

// timeline logs, every loadSample until stop is called, what the provider
// has done since it started: pod and node events its observers applied,
// reconciles the PoolCapacity controller ran (those that asked to be
// requeued after a while, as a parked or paced one does, among them), and
// how many PoolCapacities hold what ok wants; a line only when one of
// them changed. It shows where a slow convergence spends its time. stop
// returns when the observers had applied n events, to within loadScrape
// (zero if they had not), and when the first PoolCapacity held what ok
// wants, to within loadSample.
func (p *loadProvider) timeline(t *testing.T, st *statuses, ok func(*v1alpha1.PoolCapacity) bool, plane cpuMark) (stop func(n int) (applied, first time.Duration)) {
	t.Helper()
	start := time.Now()
	done := make(chan struct{})
	var mu sync.Mutex
	applied := map[float64]time.Duration{}
	var firstConverged time.Duration
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		last := ""
		prev := plane
		prevProvider := 0.0
		tick := time.NewTicker(loadSample)
		defer tick.Stop()
		var m map[string]float64
		var scraped time.Time
		for {
			if time.Since(scraped) >= loadScrape-loadSample/2 {
				if got, err := p.scrape(); err == nil {
					m, scraped = got, time.Now()
					events := m["burstpool_observer_events_total"]
					mu.Lock()
					if _, ok := applied[events]; !ok {
						applied[events] = time.Since(start)
					}
					mu.Unlock()
				}
			}
			if m != nil {
				at := time.Since(start)
				converged := st.count(ok)
				mu.Lock()
				if converged > 0 && firstConverged == 0 {
					firstConverged = at
				}
				mu.Unlock()
				line := fmt.Sprintf("events %7.0f  reconciles %6.0f (errors %4.0f, requeued after %5.0f)  converged %5d",
					m["burstpool_observer_events_total"], m["controller_runtime_reconcile_total"],
					m["controller_runtime_reconcile_errors_total"], m["controller_runtime_reconcile_total/requeue_after"], converged)
				now := plane.now()
				provider, _ := cpuSeconds(p.proc.PID)
				if line != last {
					// CPU as cores busy since the last line.
					wall := now.at.Sub(prev.at).Seconds()
					t.Logf("  %6.2fs  %s  cores: provider %.2f, API server %.2f, etcd %.2f", at.Seconds(), line,
						(provider-prevProvider)/wall, (now.apiserverCPU-prev.apiserverCPU)/wall, (now.etcdCPU-prev.etcdCPU)/wall)
					last, prev, prevProvider = line, now, provider
				}
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func(n int) (time.Duration, time.Duration) {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		var all time.Duration
		for events, at := range applied {
			if events >= float64(n) && (all == 0 || at < all) {
				all = at
			}
		}
		return all, firstConverged
	}
}

// scrapeClient reads the provider's metrics uncompressed: compressing a
// thousand pools' series costs the provider more than a loopback read of
// them saves.
var scrapeClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}

// metricFamilies reads the metrics that base serves at /metrics.
func metricFamilies(hc *http.Client, base string) (map[string]*dto.MetricFamily, error) {
	rsp, err := hc.Get(strings.TrimSuffix(base, "/") + "/metrics") //nolint:noctx // a loopback scrape
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close() //nolint:errcheck // a read-only body
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(rsp.Body)
}

// scrape reads the provider's gauges and counters, each the sum of its
// series, and, for those with a result label, the sum of each result's
// series as name/result.
func (p *loadProvider) scrape() (map[string]float64, error) {
	fams, err := metricFamilies(scrapeClient, "http://"+p.metrics)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var v float64
			switch {
			case m.GetGauge() != nil:
				v = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			}
			out[name] += v
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" {
					out[name+"/"+l.GetValue()] += v
				}
			}
		}
	}
	return out, nil
}
