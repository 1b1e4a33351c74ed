package poolcapacity_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
	"github.com/burstpool/burstpool/internal/capacity"
	"github.com/burstpool/burstpool/internal/watch"
)

// view is what the tests compare of a snapshot: one line per pod and node
// of the pool.
func view(s capacity.Snapshot, pool string) []string {
	var out []string
	s.Nodes(pool, func(n *capacity.Node) bool {
		out = append(out, fmt.Sprintf("node %s ready=%t schedulable=%t", n.Name, n.Ready, n.Schedulable))
		return true
	})
	s.Pods(pool, func(p *capacity.Pod) bool {
		out = append(out, fmt.Sprintf("pod %s/%s %s on %q", p.Namespace, p.Name, p.State, p.NodeName))
		return true
	})
	return out
}

// TestWatchAndPollConverge runs a watching observer and a polling-only
// observer of the same API server through pod and node churn and checks
// that both end with the same snapshot.
func TestWatchAndPollConverge(t *testing.T) {
	const pool = "converge"
	ctx := t.Context()
	c := newClient(t, "team-w")

	watching, err := watch.New(cfg, watch.Options{Watch: true, PollInterval: time.Hour, BatchWindow: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	polling, err := watch.New(cfg, watch.Options{Watch: false, PollInterval: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*watch.Observer{watching, polling} {
		go func(o *watch.Observer) {
			if err := o.Start(ctx); err != nil {
				t.Errorf("observer stopped: %v", err)
			}
		}(o)
		select {
		case <-o.Synced():
		case <-time.After(timeout):
			t.Fatal("observer did not sync")
		}
	}

	labels := func() map[string]string {
		l := executorLabels("sales")
		l[qsv1alpha1.LabelPool] = pool
		return l
	}
	for i := 0; i < 3; i++ {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("converge-%d", i), Labels: map[string]string{qsv1alpha1.LabelPool: pool}}}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if err := c.Status().Update(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 30; i++ {
		createPod(t, c, "team-w", fmt.Sprintf("exec-%02d", i), fmt.Sprintf("converge-%d", i%3), labels(), nil, running(time.Now()))
	}
	for i := 0; i < 30; i += 3 {
		deletePod(t, c, "team-w", fmt.Sprintf("exec-%02d", i))
	}
	// A poller only knows a node is gone if a relist saw it first.
	eventually(t, "both observers seeing node converge-2", func() error {
		for _, o := range []*watch.Observer{watching, polling} {
			if _, ok := o.Store().Current().Node("converge-2"); !ok {
				return fmt.Errorf("an observer has not seen node converge-2 yet")
			}
		}
		return nil
	})
	if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "converge-2"}}); err != nil {
		t.Fatal(err)
	}

	var want []string
	eventually(t, "both observers agreeing with a fresh list", func() error {
		l, err := polling.List(ctx)
		if err != nil {
			return err
		}
		want = view(capacity.NewSnapshot(l.Pods, l.Nodes), pool)
		if diff := cmp.Diff(want, view(watching.Store().Current(), pool)); diff != "" {
			return fmt.Errorf("watching observer: -list, +snapshot:\n%s", diff)
		}
		if diff := cmp.Diff(want, view(polling.Store().Current(), pool)); diff != "" {
			return fmt.Errorf("polling observer: -list, +snapshot:\n%s", diff)
		}
		return nil
	})
	if len(want) != 2+20 {
		t.Errorf("the pool should end with 2 nodes and 20 pods, got %d lines:\n%v", len(want), want)
	}
	for _, o := range []*watch.Observer{watching, polling} {
		if !o.Store().Current().NodeGone("converge-2") {
			t.Errorf("an observer does not remember that node converge-2 is gone")
		}
	}
}

// cuttable proxies the API server and, once cut, fails every request of the
// observer's informers and ends their open watches, as a broken watch
// connection would; the poller's requests still pass.
type cuttable struct {
	proxy *httputil.ReverseProxy
	mu    sync.Mutex
	cut   bool
	open  map[*http.Request]context.CancelFunc
}

func (p *cuttable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	informer := strings.HasPrefix(r.UserAgent(), watch.UserAgentWatch)
	p.mu.Lock()
	if informer && p.cut {
		p.mu.Unlock()
		http.Error(w, "watch cut", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	r = r.WithContext(ctx)
	if informer {
		p.open[r] = cancel
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.open, r)
		p.mu.Unlock()
		cancel()
	}()
	p.proxy.ServeHTTP(w, r)
}

func (p *cuttable) cutWatch() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, cancel := range p.open {
		cancel()
	}
}

// TestWatchCut cuts an observer's watch and checks that its poller keeps the
// snapshot in step with the cluster.
func TestWatchCut(t *testing.T) {
	const pool = "cut"
	ctx := t.Context()
	c := newClient(t, "team-x")

	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0)
	px := &cuttable{proxy: rp, open: map[*http.Request]context.CancelFunc{}}
	srv := httptest.NewServer(px)
	defer srv.Close()

	obs, err := watch.New(&rest.Config{Host: srv.URL}, watch.Options{Watch: true, PollInterval: 300 * time.Millisecond, BatchWindow: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := obs.Start(ctx); err != nil {
			t.Errorf("observer stopped: %v", err)
		}
	}()
	select {
	case <-obs.Synced():
	case <-time.After(timeout):
		t.Fatal("observer did not sync")
	}

	labels := executorLabels("sales")
	labels[qsv1alpha1.LabelPool] = pool
	createPod(t, c, "team-x", "before-cut", "", labels, nil, corev1.PodStatus{Phase: corev1.PodPending})
	eventually(t, "the watch delivering a pod", func() error {
		if _, ok := obs.Store().Current().Pod(capacity.PodKey{Namespace: "team-x", Name: "before-cut"}); !ok {
			return fmt.Errorf("pod team-x/before-cut is not in the snapshot")
		}
		return nil
	})

	px.cutWatch()
	deletePod(t, c, "team-x", "before-cut")
	for i := 0; i < 5; i++ {
		createPod(t, c, "team-x", fmt.Sprintf("after-cut-%d", i), "", labels, nil, corev1.PodStatus{Phase: corev1.PodPending})
	}
	eventually(t, "the poller catching up after the watch is cut", func() error {
		got := view(obs.Store().Current(), pool)
		want := []string{}
		for i := 0; i < 5; i++ {
			want = append(want, fmt.Sprintf("pod team-x/after-cut-%d Pending on \"\"", i))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("-want, +got:\n%s", diff)
		}
		return nil
	})
}
