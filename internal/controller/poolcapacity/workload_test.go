package poolcapacity_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/controller/poolcapacity"
	"github.com/burstpool/burstpool/internal/watch"
	"github.com/burstpool/burstpool/test/harness/apiserver"
)

// installWorkloadCRDs installs the QueryService CRD and provider-kubernetes'
// ProviderConfig CRD (the vendored copy).
func installWorkloadCRDs(t *testing.T) {
	t.Helper()
	root := filepath.Join("..", "..", "..")
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{
		filepath.Join(root, "examples", "crds", "e6data.io_queryservices.yaml"),
		filepath.Join(root, "test", "crds", "upstream", "kubernetes.crossplane.io_providerconfigs.yaml"),
	}}); err != nil {
		t.Fatal(err)
	}
}

// queryService is a QueryService in the raw shapes a workload cluster may
// hold (quantities as strings or numbers), for the summary's reader.
var queryService = apiserver.QueryService

// TestReadSummary reads a workload cluster summary from a real API server:
// QueryServices by name (those the query names and those the pool
// attaches) and by label (only those pointing at the pool), each once, cut
// to the fields the function reads, and which CRDs exist.
func TestReadSummary(t *testing.T) {
	installWorkloadCRDs(t)
	ctx := context.Background()
	c := newClient(t, "wl-a", "wl-b")
	exec := map[string]any{
		"image": "ghcr.io/e6data/executor:3.1", "replicas": int64(2),
		"resources": map[string]any{"cpu": "4", "memory": "16Gi"},
		"poolRef":   map[string]any{"name": "burst", "namespace": "pools"},
		"extra":     "not summarized",
	}
	for _, q := range []*unstructured.Unstructured{
		queryService("named", "wl-a", nil, exec),
		queryService("labelled", "wl-b", map[string]string{"e6data.io/pool": "burst"}, exec),
		queryService("both", "wl-a", map[string]string{"e6data.io/pool": "burst"}, exec),
		queryService("other", "wl-b", map[string]string{"e6data.io/pool": "other"}, exec),
		// Labelled for the pool but pointing elsewhere: anyone can label
		// a QueryService of their own.
		queryService("stray", "wl-b", map[string]string{"e6data.io/pool": "burst"}, map[string]any{"poolRef": map[string]any{"name": "burst", "namespace": "elsewhere"}}),
		// Attached to the pool (by an earlier summary) and read by name.
		queryService("attached", "wl-b", nil, exec),
	} {
		if err := c.Create(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	q := &v1alpha1.WorkloadClusterQuery{
		QueryServices:  []v1alpha1.PoolRef{{Name: "named", Namespace: "wl-a"}, {Name: "both", Namespace: "wl-a"}, {Name: "missing", Namespace: "wl-a"}},
		LabelSelectors: []map[string]string{{"e6data.io/pool": "burst"}},
		CRDs:           []string{"queryservices.e6data.io", "nodepools.karpenter.sh"},
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	spec := v1alpha1.PoolCapacityParameters{Pool: v1alpha1.PoolRef{Name: "burst", Namespace: "pools"}, WorkloadCluster: q,
		QueryServices: []v1alpha1.AttachedQueryService{{Name: "attached", Namespace: "wl-b"}}}
	s, err := poolcapacity.ReadSummary(ctx, c, spec, now)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, qs := range s.QueryServices {
		names = append(names, qs.Namespace+"/"+qs.Name)
	}
	if diff := cmp.Diff([]string{"wl-a/both", "wl-a/named", "wl-b/attached", "wl-b/labelled"}, names); diff != "" {
		t.Errorf("QueryServices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"queryservices.e6data.io"}, s.CRDs); diff != "" {
		t.Errorf("CRDs (-want +got):\n%s", diff)
	}
	e := s.QueryServices[0].Executor
	got := fmt.Sprintf("%s %d %s %s %s/%s", e.Image, *e.Replicas, e.Resources.CPU, e.Resources.Memory, e.PoolRef.Namespace, e.PoolRef.Name)
	if want := "ghcr.io/e6data/executor:3.1 2 4 16Gi pools/burst"; got != want {
		t.Errorf("executor %q, want %q", got, want)
	}
	if s.Query != poolcapacity.QueryDigest(q) || !s.ObservedAt.Time.Equal(now) {
		t.Errorf("summary answers query %q at %v", s.Query, s.ObservedAt)
	}
	if poolcapacity.NeedsSummary(q, s, now.Add(poolcapacity.SummaryRefresh-time.Second)) {
		t.Error("a summary younger than SummaryRefresh is read again")
	}
	if !poolcapacity.NeedsSummary(q, s, now.Add(poolcapacity.SummaryRefresh)) {
		t.Error("a summary SummaryRefresh old is not read again")
	}
	q2 := q.DeepCopy()
	q2.CRDs = nil
	if !poolcapacity.NeedsSummary(q2, s, now) {
		t.Error("a summary of another query is kept")
	}
}

// TestProviderKubernetesProviderConfig: a PoolCapacity naming no burstpool
// ProviderConfig uses provider-kubernetes' ProviderConfig of that name.
func TestProviderKubernetesProviderConfig(t *testing.T) {
	installWorkloadCRDs(t)
	ctx := context.Background()
	c := newClient(t)
	createKubernetesProviderConfig(t, c, "west", "crossplane-system", "west-kubeconfig")
	got, err := poolcapacity.GetProviderConfig(ctx, c, c, "west")
	if err != nil {
		t.Fatal(err)
	}
	ref := got.Spec.Credentials.SecretRef
	if diff := cmp.Diff("Secret crossplane-system/west-kubeconfig kubeconfig", fmt.Sprintf("%s %s/%s %s", got.Spec.Credentials.Source, ref.Namespace, ref.Name, ref.Key)); diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	_, err = poolcapacity.GetProviderConfig(ctx, c, c, "nowhere")
	if err == nil || !strings.Contains(err.Error(), "provider-kubernetes") {
		t.Errorf("missing ProviderConfig: %v", err)
	}
}

// createKubernetesProviderConfig creates provider-kubernetes'
// ProviderConfig name, whose credentials are the key kubeconfig of the
// Secret namespace/secret.
func createKubernetesProviderConfig(t *testing.T, c client.Client, name, namespace, secret string) {
	t.Helper()
	pc := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"credentials": map[string]any{
		"source": "Secret", "secretRef": map[string]any{"namespace": namespace, "name": secret, "key": "kubeconfig"},
	}}}}
	pc.SetGroupVersionKind(poolcapacity.KubernetesProviderConfig)
	pc.SetName(name)
	if err := c.Create(context.Background(), pc); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteSummary runs the provider on a PoolCapacity that names only a
// provider-kubernetes ProviderConfig, whose kubeconfig Secret reaches the
// API server as a remote cluster would be reached, and asks for a
// summary: the provider observes the pool through it and publishes the
// summary in status.atProvider.workloadCluster.
func TestRemoteSummary(t *testing.T) {
	installWorkloadCRDs(t)
	ctx := context.Background()
	c := newClient(t, "wl-remote", "burstpool-system")
	if err := c.Create(ctx, queryService("sales", "wl-remote", map[string]string{"e6data.io/pool": "wl-pool"},
		map[string]any{"image": "e6/exec:2", "poolRef": map[string]any{"name": pool, "namespace": "team-a"}})); err != nil {
		t.Fatal(err)
	}
	createKubeconfigSecret(t, c, "workload-observer", "wl-kubeconfig")
	createKubernetesProviderConfig(t, c, "wl", "burstpool-system", "wl-kubeconfig")
	pc := poolCapacity("wl-pool-capacity", "wl")
	pc.Spec.ForProvider.WorkloadCluster = &v1alpha1.WorkloadClusterQuery{
		LabelSelectors: []map[string]string{{"e6data.io/pool": "wl-pool"}},
		CRDs:           []string{"queryservices.e6data.io"},
	}
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	p := startProvider(t, watch.Options{Watch: true, PollInterval: time.Second, BatchWindow: 20 * time.Millisecond})
	defer p.stop(t)
	eventually(t, "the workload cluster summary", func() error {
		got := &v1alpha1.PoolCapacity{}
		if err := c.Get(ctx, client.ObjectKey{Name: pc.Name}, got); err != nil {
			return err
		}
		s := got.Status.AtProvider.WorkloadCluster
		if s == nil || len(s.QueryServices) != 1 || len(s.CRDs) != 1 {
			return fmt.Errorf("summary %+v; conditions %+v", s, got.Status.Conditions)
		}
		if s.QueryServices[0].Executor.Image != "e6/exec:2" {
			return fmt.Errorf("summary of sales: %+v", s.QueryServices[0])
		}
		return nil
	})
}

// TestReadSummaryIgnoresStrangers: 1,001 QueryServices labelled for a pool
// but pointing at another (anyone may label a QueryService of their own),
// named to sort first, neither fill the summary's 1,000 entries nor push
// out the pool's own QueryService, which its label alone brings.
func TestReadSummaryIgnoresStrangers(t *testing.T) {
	installWorkloadCRDs(t)
	ctx := context.Background()
	c := newClient(t, "strangers", "own-team")
	label := map[string]string{"e6data.io/pool": "crowded"}
	elsewhere := map[string]any{"poolRef": map[string]any{"name": "crowded", "namespace": "strangers"}}
	parallel(t, v1alpha1.MaxSummaryQueryServices+1, 8, func(i int) error {
		return c.Create(ctx, queryService(fmt.Sprintf("aa-%04d", i), "strangers", label, elsewhere))
	})
	if err := c.Create(ctx, queryService("zz-own", "own-team", label, map[string]any{"poolRef": map[string]any{"name": "crowded", "namespace": "pools"}})); err != nil {
		t.Fatal(err)
	}
	spec := v1alpha1.PoolCapacityParameters{Pool: v1alpha1.PoolRef{Name: "crowded", Namespace: "pools"},
		WorkloadCluster: &v1alpha1.WorkloadClusterQuery{LabelSelectors: []map[string]string{label}}}
	s, err := poolcapacity.ReadSummary(ctx, c, spec, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range s.QueryServices {
		names = append(names, q.Namespace+"/"+q.Name)
	}
	if diff := cmp.Diff([]string{"own-team/zz-own"}, names); diff != "" || s.Truncated {
		t.Errorf("summary (truncated %t) (-want +got):\n%s", s.Truncated, diff)
	}
}
