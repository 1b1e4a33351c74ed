package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/go-logr/logr"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/burstpool/burstpool/test/harness/apiserver"
)

// TestTenOfTenThousandAPIServer is TestTenOfTenThousand on a real API
// server: it creates BURSTPOOL_LOADTEST_QS (default 10,000) QueryServices
// of real size (spec, labels, last-applied annotation, managedFields,
// status through the status subresource), then fetches the pool's
// requirements the way Crossplane v2.4.0 does (internal/xfn
// ExistingRequiredResourcesFetcher over Crossplane's informer-backed
// client: Get by namespace and name, List by labels across namespaces), and
// composes the pool from that request. It logs the time of Crossplane's
// first fetch (which starts a QueryService informer and lists them all) and
// of a fetch from the synced informer, and the request's bytes. It runs with
// BURSTPOOL_LOADTEST=1 (make loadtest), as it takes minutes.
func TestTenOfTenThousandAPIServer(t *testing.T) {
	if os.Getenv("BURSTPOOL_LOADTEST") != "1" {
		t.Skip("set BURSTPOOL_LOADTEST=1 (make loadtest) to run the 10,000-QueryService test on a real API server")
	}
	total := 10000
	if v := os.Getenv("BURSTPOOL_LOADTEST_QS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 12 {
			t.Fatalf("BURSTPOOL_LOADTEST_QS=%q: want a number of at least 12", v)
		}
		total = n
	}
	ctrllog.SetLogger(logr.Discard())
	cfg := apiserver.Start(t, filepath.Join("..", "..", "examples", "crds")).Config
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	for i := range crowdNamespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("workspace-%03d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	create(t, ctx, c, total)
	t.Logf("created %d QueryServices in %s", total, time.Since(start).Round(time.Millisecond))

	spec := crowdPool()
	s := scenario{XR: xpool("burst", "pools", spec), CRDs: kwokCRDs}
	req := s.request(t)
	first := proto.Clone(req).(*fnv1.RunFunctionRequest)
	first.RequiredResources = nil
	f := &Function{now: func() time.Time { return now }, size: fakeSize}
	rsp, err := f.RunFunction(ctx, first)
	if err != nil {
		t.Fatal(err)
	}

	// Crossplane's client: reads go to an informer cache, started on first
	// use of a kind.
	ca, err := cache.New(cfg, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go func() { _ = ca.Start(cctx) }()
	// Crossplane's manager starts the cache before any reconcile; it holds
	// no informer yet.
	if !ca.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not start")
	}
	cached, err := client.New(cfg, client.Options{Cache: &client.CacheOptions{Reader: ca, Unstructured: true}})
	if err != nil {
		t.Fatal(err)
	}
	fetchAll := func() map[string]*fnv1.Resources {
		out := map[string]*fnv1.Resources{}
		for n, sel := range rsp.GetRequirements().GetResources() {
			if !isQSRequirement(n) {
				// CRDs and owned names come from the scenario, as in the other tests.
				out[n] = req.GetRequiredResources()[n]
				continue
			}
			r, err := crossplaneFetch(ctx, cached, sel)
			if err != nil {
				t.Fatalf("fetching %s: %v", n, err)
			}
			out[n] = r
		}
		return out
	}
	t0 := time.Now()
	req.RequiredResources = fetchAll()
	firstFetch := time.Since(t0)
	var warm []time.Duration
	for range 20 {
		t0 := time.Now()
		req.RequiredResources = fetchAll()
		warm = append(warm, time.Since(t0))
	}
	slices.Sort(warm)

	var items int
	for n, r := range req.GetRequiredResources() {
		if isQSRequirement(n) {
			items += len(r.GetItems())
		}
	}
	size := proto.Size(req)
	t.Logf("Crossplane's fetch of the pool's %d requirements: first (starts the QueryService informer over %d QueryServices) %s; from the synced informer p50 %s",
		len(rsp.GetRequirements().GetResources()), total, firstFetch.Round(time.Millisecond), warm[len(warm)/2].Round(time.Microsecond))
	var one int
	for _, r := range req.GetRequiredResources() {
		if len(r.GetItems()) > 0 && r.GetItems()[0].GetResource().GetFields()["spec"].GetStructValue().GetFields()["executor"] != nil {
			one = proto.Size(r.GetItems()[0])
			break
		}
	}
	t.Logf("request: %d bytes with %d QueryServices (one as the API server returns it: %d bytes)", size, items, one)
	if items != 12 {
		t.Errorf("the request carries %d QueryServices, want the 10 attached and the 2 labelled for the pool", items)
	}

	rsp, err = f.RunFunction(ctx, req)
	if err != nil || fatal(rsp) != "" {
		t.Fatalf("RunFunction: %v %s", err, fatal(rsp))
	}
	attached := 0
	for _, q := range status(rsp)["attachedQueryServices"].([]any) {
		if q.(map[string]any)["attached"] == true {
			attached++
		}
	}
	if attached != 10 {
		t.Errorf("%d attached, want 10: %v", attached, results(rsp))
	}
}

// crossplaneFetch is Crossplane v2.4.0's ExistingRequiredResourcesFetcher.Fetch:
// a match_name selector is a Get in its namespace (nothing when not found);
// a match_labels selector is a List in its namespace (every namespace when
// unset) by those labels, sorted by namespace/name.
func crossplaneFetch(ctx context.Context, c client.Reader, rs *fnv1.ResourceSelector) (*fnv1.Resources, error) {
	if m, ok := rs.GetMatch().(*fnv1.ResourceSelector_MatchName); ok {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(rs.GetApiVersion())
		u.SetKind(rs.GetKind())
		err := c.Get(ctx, types.NamespacedName{Namespace: rs.GetNamespace(), Name: m.MatchName}, u)
		if client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		if err != nil {
			return &fnv1.Resources{}, nil
		}
		st, err := resource.AsStruct(u)
		if err != nil {
			return nil, err
		}
		return &fnv1.Resources{Items: []*fnv1.Resource{{Resource: st}}}, nil
	}
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion(rs.GetApiVersion())
	l.SetKind(rs.GetKind())
	opts := []client.ListOption{client.InNamespace(rs.GetNamespace())}
	if m, ok := rs.GetMatch().(*fnv1.ResourceSelector_MatchLabels); ok {
		opts = append(opts, client.MatchingLabels(m.MatchLabels.GetLabels()))
	}
	if err := c.List(ctx, l, opts...); err != nil {
		return nil, err
	}
	slices.SortFunc(l.Items, func(a, b unstructured.Unstructured) int {
		return strings.Compare(a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName())
	})
	out := &fnv1.Resources{}
	for i := range l.Items {
		st, err := resource.AsStruct(&l.Items[i])
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, &fnv1.Resource{Resource: st})
	}
	return out, nil
}

// create creates the first total QueryServices of the crowd, each with its
// status written through the status subresource.
func create(t *testing.T, ctx context.Context, c client.Client, total int) {
	t.Helper()
	const workers = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				o := crowdMember(i)
				u := &unstructured.Unstructured{Object: o}
				st := o["status"]
				for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp"} {
					unstructured.RemoveNestedField(u.Object, "metadata", k)
				}
				delete(u.Object, "status")
				err := c.Create(ctx, u)
				if err == nil {
					u.Object["status"] = st
					err = c.Status().Update(ctx, u)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s/%s: %w", u.GetNamespace(), u.GetName(), err))
					mu.Unlock()
				}
			}
		})
	}
	for i := range total {
		next <- i
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d QueryServices not created, first: %v", len(errs), errs[0])
	}
}
