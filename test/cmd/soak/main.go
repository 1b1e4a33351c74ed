// Command soak runs burstpool for a while as a busy cluster would (make
// soak): on the local control plane, with the capacity provider as the
// shipped runtime config runs it (two replicas electing a leader, each
// restarted when it exits) and the fail-safe beside it, it bursts and
// shrinks the executors of several pools at random, kills the leading
// provider replica every --kill-every, and prints each replica's RSS as it
// goes. At the end it holds the executors still and checks, per pool: the
// claim counts every Running executor and allocates it to its QueryService;
// the PoolCapacity's node time never went back and left nothing
// unaccounted, and it is within the observation lag of the node time the
// soak saw itself (nodes' creation to deletion); every composed object is
// the one created at the start. It exits 1 when a check fails.
//
// Hours of bursts are compressed into minutes by their rate: a burst every
// --period per pool, nodes that launch at once (kwok) and are removed as
// soon as they are empty (consolidateAfter 0s).
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	capv1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

const (
	ns            = "soak"
	executorImage = "registry.example.com/e6data/executor:soak"
	instanceType  = "r7gd.4xlarge"
)

type options struct {
	dir       string
	duration  time.Duration
	period    time.Duration
	killEvery time.Duration
	pools     int
	max       int
	seed      uint64
}

func main() {
	// The control plane's relays run this binary in their network namespace.
	if len(os.Args) > 1 && os.Args[1] == localcp.RelayCommand {
		os.Exit(localcp.RelayMain(os.Args[2:]))
	}
	var o options
	flag.StringVar(&o.dir, "dir", "_output/soak", "folder of the soak's control plane")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long to burst")
	flag.DurationVar(&o.period, "period", 15*time.Second, "how often each pool's executors change")
	flag.DurationVar(&o.killEvery, "kill-every", 90*time.Second, "how often the leading provider replica is killed (SIGKILL)")
	flag.IntVar(&o.pools, "pools", 3, "pools, each with one QueryService")
	flag.IntVar(&o.max, "max-executors", 6, "most executors a pool bursts to")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the bursts")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func say(format string, args ...any) {
	fmt.Printf("%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func run(ctx context.Context, o options) error {
	root, err := gomod.Root()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	s, err := devplane.Up(ctx, devplane.Config{Root: root, Dir: dir, Say: say, StopWithParent: true, ProviderReplicas: 2, Failsafe: true})
	if err != nil {
		return err
	}
	defer func() {
		if err := s.Down(); err != nil {
			say("stopping the control plane: %v", err)
		}
	}()
	if err := fastSettings(ctx, s, root); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(s.Cluster.Config)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	nodes := watchNodes(ctx, cs)
	var pools []string
	for i := range o.pools {
		name := "soak-" + strconv.Itoa(i)
		if err := createPool(ctx, s, name, o.max); err != nil {
			return err
		}
		pools = append(pools, name)
	}
	objects, err := composedUIDs(ctx, s, pools)
	if err != nil {
		return err
	}
	say("%d pools ready; bursting for %s (a change every %s per pool), the leader killed every %s", len(pools), o.duration, o.period, o.killEvery)

	rng := rand.New(rand.NewPCG(o.seed, o.seed)) //nolint:gosec // bursts, not secrets
	want := map[string]int32{}
	begin := time.Now()
	nextKill, nextChange, nextSample := begin.Add(o.killEvery), begin, begin
	var kills int
	costs := map[string]float64{}
	for time.Since(begin) < o.duration {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := time.Now()
		if !now.Before(nextChange) {
			for _, p := range pools {
				n := int32(rng.IntN(o.max + 1)) //nolint:gosec // at most max
				if err := devplane.ScaleExecutors(ctx, s.Client, ns, p, n); err != nil {
					return err
				}
				want[p] = n
			}
			nextChange = now.Add(o.period)
		}
		if !now.Before(nextKill) {
			r, err := s.LeaderReplica(ctx, 30*time.Second)
			if err != nil {
				return err
			}
			if err := s.KillReplica(r); err != nil {
				return err
			}
			kills++
			say("killed the leading replica %d (kill %d)", r.Index, kills)
			nextKill = now.Add(o.killEvery)
		}
		if !now.Before(nextSample) {
			line := fmt.Sprintf("t+%s RSS", time.Since(begin).Round(time.Second))
			for _, r := range s.Replicas {
				kib, err := localcp.RSSKiB(r.Proc().PID)
				if err != nil {
					line += fmt.Sprintf(" replica %d: down", r.Index)
					continue
				}
				line += fmt.Sprintf(" replica %d: %.1f MiB", r.Index, float64(kib)/1024)
			}
			for _, p := range pools {
				o, err := atProvider(ctx, s.Client, p)
				if err != nil || o.Cost == nil {
					continue
				}
				v, _ := strconv.ParseFloat(o.Cost.NodeSeconds, 64)
				if v < costs[p] {
					return fmt.Errorf("pool %s: node-seconds went back from %v to %v", p, costs[p], v)
				}
				costs[p] = v
			}
			say("%s", line)
			nextSample = now.Add(10 * time.Second)
		}
		time.Sleep(200 * time.Millisecond)
	}
	say("holding the executors still: %v", want)
	return check(ctx, s, pools, want, objects, nodes, kills)
}

// fastSettings applies the stack's settings with Karpenter told to remove
// empty nodes at once, so that nodes come and go with the bursts.
func fastSettings(ctx context.Context, s *devplane.Stack, root string) error {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(devplane.SettingsFile)))
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(u.Object, "0s", "data", "karpenter", "consolidateAfter"); err != nil {
		return err
	}
	out, err := yaml.Marshal(u.Object)
	if err != nil {
		return err
	}
	return localcp.Apply(ctx, s.Cluster.Config, out)
}

func createPool(ctx context.Context, s *devplane.Stack, name string, maxExecutors int) error {
	if err := localcp.Apply(ctx, s.Cluster.Config, []byte(fmt.Sprintf(manifests, name, ns, maxExecutors, instanceType, executorImage))); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		es, err := devplane.PoolExecutorScheduling(ctx, s.Client, ns, name)
		if err != nil {
			return false, nil //nolint:nilerr // not published yet
		}
		d := devplane.ExecutorDeployment(ns, name, executorImage, 0, "8", "60Gi", es)
		if err := s.Client.Create(ctx, d); err != nil {
			return false, err
		}
		return true, nil
	})
}

// manifests is a pool of one instance type, one executor per node, one
// warm slot, and the QueryService that bursts onto it.
const manifests = `apiVersion: e6data.io/v1alpha1
kind: Pool
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  minExecutors: 1
  maxExecutors: %[3]d
  executorsPerNode: 1
  instanceConfig: {instanceType: %[4]s}
  allowedQueryServices:
    - {name: %[1]s, namespace: %[2]s}
---
apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata: {name: %[1]s, namespace: %[2]s, labels: {e6data.io/pool: %[1]s}}
spec:
  executor:
    image: %[5]s
    resources: {cpu: "8", memory: 60Gi}
    poolRef: {name: %[1]s, namespace: %[2]s}
`

// composed are the objects each pool composes that must outlive the soak.
func composed(pool string) [][3]string {
	return [][3]string{
		{"karpenter.sh/v1", "NodePool", pool + "-nodepool"},
		{"karpenter.kwok.sh/v1alpha1", "KWOKNodeClass", pool + "-nodeclass"},
		{"capacity.e6data.io/v1alpha1", "PoolCapacity", pool + "-capacity"},
	}
}

func composedUIDs(ctx context.Context, s *devplane.Stack, pools []string) (map[string]types.UID, error) {
	out := map[string]types.UID{}
	for _, p := range pools {
		for _, o := range composed(p) {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion(o[0])
			u.SetKind(o[1])
			if err := s.Client.Get(ctx, client.ObjectKey{Name: o[2]}, u); err != nil {
				return nil, err
			}
			out[o[1]+"/"+o[2]] = u.GetUID()
		}
	}
	return out, nil
}

// lifetimes records when each pool node was created and when the soak
// saw it deleted.
type lifetimes struct {
	mu    sync.Mutex
	nodes map[string]*lifetime
}

type lifetime struct {
	pool             string
	created, deleted time.Time
}

func watchNodes(ctx context.Context, cs kubernetes.Interface) *lifetimes {
	l := &lifetimes{nodes: map[string]*lifetime{}}
	f := informers.NewSharedInformerFactory(cs, 0)
	inf := f.Core().V1().Nodes().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			n, ok := obj.(*corev1.Node)
			if !ok || n.Labels[qsv1.LabelPool] == "" {
				return
			}
			l.mu.Lock()
			l.nodes[n.Name] = &lifetime{pool: n.Labels[qsv1.LabelPool], created: n.CreationTimestamp.Time}
			l.mu.Unlock()
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			n, ok := obj.(*corev1.Node)
			if !ok {
				return
			}
			l.mu.Lock()
			if lt := l.nodes[n.Name]; lt != nil {
				lt.deleted = time.Now()
			}
			l.mu.Unlock()
		},
	})
	f.Start(ctx.Done())
	return l
}

// seconds is pool's node time between from and to, and the node events
// (creations and deletions) within it.
func (l *lifetimes) seconds(pool string, from, to time.Time) (float64, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var total float64
	var events int
	for _, lt := range l.nodes {
		if lt.pool != pool {
			continue
		}
		a, b := lt.created, lt.deleted
		if b.IsZero() || b.After(to) {
			b = to
		} else {
			events++
		}
		if a.Before(from) {
			a = from
		} else {
			events++
		}
		if b.After(a) {
			total += b.Sub(a).Seconds()
		}
	}
	return total, events
}

func atProvider(ctx context.Context, c client.Client, pool string) (capv1.PoolCapacityObservation, error) {
	return devplane.CapacityObservation(ctx, c, pool+"-capacity")
}

// lagPerEvent is how late the provider may price a node's arrival or
// departure: a reconcile follows a node event within a second or two, a
// standby's takeover within 9 s.
const lagPerEvent = 10 * time.Second

func check(ctx context.Context, s *devplane.Stack, pools []string, want map[string]int32, objects map[string]types.UID, nodes *lifetimes, kills int) error {
	var failed []string
	fail := func(format string, args ...any) {
		failed = append(failed, fmt.Sprintf(format, args...))
		say("FAIL "+format, args...)
	}
	stillAt := time.Now()
	for _, p := range pools {
		err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			pl := &corev1.PodList{}
			if err := s.Client.List(ctx, pl, client.InNamespace(ns), client.MatchingLabels{qsv1.LabelPool: p, qsv1.LabelExecutorType: qsv1.ExecutorTypePool}); err != nil {
				return false, nil //nolint:nilerr // retried
			}
			running := 0
			for _, pod := range pl.Items {
				if pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil {
					running++
				}
			}
			o, err := atProvider(ctx, s.Client, p)
			if err != nil || o.Cost == nil {
				return false, nil //nolint:nilerr // retried
			}
			var allocated int32
			for _, a := range o.Allocations {
				if a.QueryService == p && a.Namespace == ns {
					allocated = a.PoolExecutors
				}
			}
			return int32(running) == want[p] && o.OccupiedExecutors == want[p] && allocated == want[p] && o.Cost.AccountedUntil.After(stillAt), nil
		})
		if err != nil {
			fail("pool %s: the counts did not settle at %d executors within 3m", p, want[p])
			continue
		}
		o, _ := atProvider(ctx, s.Client, p)
		counted, _ := strconv.ParseFloat(o.Cost.NodeSeconds, 64)
		seen, events := nodes.seconds(p, o.Cost.Since.Time, o.Cost.AccountedUntil.Time)
		tolerance := float64(events+kills) * lagPerEvent.Seconds()
		say("pool %s: %d executors counted and allocated; node-seconds %.0f counted, %.0f seen (%d node events, %d kills, tolerance %.0f), unaccounted %d s",
			p, want[p], counted, seen, events, kills, tolerance, o.Cost.UnaccountedSeconds)
		if o.Cost.UnaccountedSeconds != 0 {
			fail("pool %s: %d s unaccounted", p, o.Cost.UnaccountedSeconds)
		}
		if d := counted - seen; d > tolerance || d < -tolerance {
			fail("pool %s: node-seconds counted %.0f, seen %.0f: off by more than %.0f", p, counted, seen, tolerance)
		}
	}
	after, err := composedUIDs(ctx, s, pools)
	if err != nil {
		fail("composed objects: %v", err)
	}
	for k, uid := range objects {
		if after[k] != uid {
			fail("%s was replaced or removed", k)
		}
	}
	restarts := 0
	for _, r := range s.Replicas {
		restarts += r.Restarts()
	}
	say("%d leader kills, %d replica restarts, %d composed objects kept", kills, restarts, len(objects))
	if len(failed) > 0 {
		return fmt.Errorf("%d checks failed", len(failed))
	}
	say("soak: every check passed")
	return nil
}
