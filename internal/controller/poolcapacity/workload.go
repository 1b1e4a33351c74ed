package poolcapacity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"

	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// SummaryRefresh is how often at most a workload cluster summary is read
// again for an unchanged query.
const SummaryRefresh = 15 * time.Second

// KubernetesProviderConfig is provider-kubernetes' ProviderConfig, which a
// remote pool's PoolCapacity names when no burstpool ProviderConfig has
// that name: one ProviderConfig points both providers at the cluster.
var KubernetesProviderConfig = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha1", Kind: "ProviderConfig"}

var (
	crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	qsGVK  = qsv1alpha1.GroupVersionKind
)

// kubernetesProviderConfig reads provider-kubernetes' ProviderConfig name
// as a burstpool ProviderConfig of the same credentials. Only its
// InjectedIdentity and Secret sources are understood.
func kubernetesProviderConfig(ctx context.Context, c client.Reader, name string) (*v1alpha1.ProviderConfig, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(KubernetesProviderConfig)
	if err := c.Get(ctx, types.NamespacedName{Name: name}, u); err != nil {
		return nil, err
	}
	return providerConfigFrom(u)
}

// providerConfigFrom converts provider-kubernetes' ProviderConfig u.
func providerConfigFrom(u *unstructured.Unstructured) (*v1alpha1.ProviderConfig, error) {
	pc := &v1alpha1.ProviderConfig{}
	pc.Name = u.GetName()
	src, _, _ := unstructured.NestedString(u.Object, "spec", "credentials", "source")
	pc.Spec.Credentials.Source = xpv2.CredentialsSource(src)
	if ref, ok, _ := unstructured.NestedMap(u.Object, "spec", "credentials", "secretRef"); ok {
		s := &xpv2.SecretKeySelector{}
		s.Name, _ = ref["name"].(string)
		s.Namespace, _ = ref["namespace"].(string)
		s.Key, _ = ref["key"].(string)
		pc.Spec.Credentials.SecretRef = s
	}
	switch pc.Spec.Credentials.Source {
	case xpv2.CredentialsSourceInjectedIdentity, xpv2.CredentialsSourceSecret:
		return pc, nil
	}
	return nil, errors.Errorf("provider-kubernetes ProviderConfig %q has credentials source %q; the capacity provider reads only InjectedIdentity and Secret", pc.Name, src)
}

// GetProviderConfig returns the burstpool ProviderConfig name (read by
// c), else provider-kubernetes' ProviderConfig of that name (read by
// direct, which reads without a cache: the provider may only get those).
func GetProviderConfig(ctx context.Context, c, direct client.Reader, name string) (*v1alpha1.ProviderConfig, error) {
	pc := &v1alpha1.ProviderConfig{}
	err := c.Get(ctx, types.NamespacedName{Name: name}, pc)
	if err == nil {
		return pc, nil
	}
	if !kerrors.IsNotFound(err) {
		return nil, errors.Wrapf(err, "cannot get ProviderConfig %q", name)
	}
	kpc, kerr := kubernetesProviderConfig(ctx, direct, name)
	if kerr != nil {
		return nil, errors.Errorf("cannot get ProviderConfig %q: there is no capacity.e6data.io ProviderConfig of that name, and provider-kubernetes' (kubernetes.crossplane.io/v1alpha1): %v", name, kerr)
	}
	return kpc, nil
}

// QueryDigest identifies a query.
func QueryDigest(q *v1alpha1.WorkloadClusterQuery) string {
	b, _ := json.Marshal(q)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// NeedsSummary tells whether the summary of q must be read (again): there
// is none, it answers another query, or it is SummaryRefresh old.
func NeedsSummary(q *v1alpha1.WorkloadClusterQuery, prev *v1alpha1.WorkloadClusterSummary, now time.Time) bool {
	return prev == nil || prev.Query != QueryDigest(q) || now.Sub(prev.ObservedAt.Time) >= SummaryRefresh
}

// maxSummaryScan bounds how many labelled QueryServices one summary reads
// (in pages of summaryPage) looking for those that point at the pool; a
// summary that stops there is Truncated.
const maxSummaryScan = 10 * v1alpha1.MaxSummaryQueryServices

// summaryPage is how many QueryServices one list request of a summary asks
// for.
const summaryPage = 500

// ReadSummary reads what spec.workloadCluster asks for from the workload
// cluster c reads: which of its CRDs exist, and its QueryServices, each
// once, in namespace/name order. Of the QueryServices a label selector
// matches, only those whose spec.executor.poolRef names the pool are kept.
// The QueryServices the query names (the pool's allowedQueryServices and
// inheritNodeConfigFrom) and those spec attaches are always listed (read
// by name unless a label selector brought them), then as many of the
// others as fit in MaxSummaryQueryServices; Truncated says when more
// matched. Anyone may label a QueryService in their own namespace, so
// labelled strangers never push out one the pool names or attaches.
func ReadSummary(ctx context.Context, c client.Reader, spec v1alpha1.PoolCapacityParameters, now time.Time) (*v1alpha1.WorkloadClusterSummary, error) {
	q := spec.WorkloadCluster
	s := &v1alpha1.WorkloadClusterSummary{Query: QueryDigest(q), ObservedAt: metav1.Time{Time: now.UTC().Truncate(time.Second)}}
	for _, name := range q.CRDs {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(crdGVK)
		err := c.Get(ctx, types.NamespacedName{Name: name}, u)
		switch {
		case err == nil:
			s.CRDs = append(s.CRDs, name)
		case !kerrors.IsNotFound(err):
			return nil, errors.Wrapf(err, "cannot get CustomResourceDefinition %s", name)
		}
	}
	labelled := map[string]*unstructured.Unstructured{}
	for _, sel := range q.LabelSelectors {
		truncated, err := listPointing(ctx, c, sel, spec.Pool, labelled)
		if err != nil {
			return nil, err
		}
		s.Truncated = s.Truncated || truncated
	}
	named := slices.Clone(q.QueryServices)
	for _, a := range spec.QueryServices {
		named = append(named, v1alpha1.PoolRef{Name: a.Name, Namespace: a.Namespace})
	}
	found := map[string]*unstructured.Unstructured{}
	for _, r := range named {
		k := r.Namespace + "/" + r.Name
		if _, ok := found[k]; ok {
			continue
		}
		if len(found) == v1alpha1.MaxSummaryQueryServices {
			s.Truncated = true
			break
		}
		if u, ok := labelled[k]; ok {
			// Listed already: no request.
			found[k] = u
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(qsGVK)
		err := c.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, u)
		switch {
		case err == nil:
			found[k] = u
		case kerrors.IsNotFound(err), isNoMatch(err):
		default:
			return nil, errors.Wrapf(err, "cannot get QueryService %s/%s", r.Namespace, r.Name)
		}
	}
	budget := v1alpha1.MaxSummaryQueryServices - len(found)
	for _, k := range slices.Sorted(maps.Keys(labelled)) {
		if _, ok := found[k]; ok {
			continue
		}
		if budget == 0 {
			s.Truncated = true
			break
		}
		found[k] = labelled[k]
		budget--
	}
	for _, k := range slices.Sorted(maps.Keys(found)) {
		s.QueryServices = append(s.QueryServices, SummarizeQueryService(found[k]))
	}
	return s, nil
}

// listPointing adds to into the QueryServices labelled sel whose
// spec.executor.poolRef names pool (its namespace defaults to the
// QueryService's own), reading page by page; truncated is true when it
// stopped after maxSummaryScan of them.
func listPointing(ctx context.Context, c client.Reader, sel map[string]string, pool v1alpha1.PoolRef, into map[string]*unstructured.Unstructured) (truncated bool, err error) {
	for cont, scanned := "", 0; ; {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(qsGVK.GroupVersion().WithKind(qsGVK.Kind + "List"))
		err := c.List(ctx, l, client.MatchingLabels(sel), client.Limit(summaryPage), client.Continue(cont))
		if isNoMatch(err) {
			return false, nil
		}
		if err != nil {
			return false, errors.Wrapf(err, "cannot list QueryServices labelled %v", sel)
		}
		for i := range l.Items {
			if u := &l.Items[i]; pointsAt(u, pool) {
				into[u.GetNamespace()+"/"+u.GetName()] = u
			}
		}
		scanned += len(l.Items)
		if cont = l.GetContinue(); cont == "" {
			return false, nil
		}
		if scanned >= maxSummaryScan {
			return true, nil
		}
	}
}

// pointsAt tells whether QueryService u's spec.executor.poolRef names pool.
func pointsAt(u *unstructured.Unstructured, pool v1alpha1.PoolRef) bool {
	r, ok, _ := unstructured.NestedStringMap(u.Object, "spec", "executor", "poolRef")
	if !ok || r["name"] != pool.Name {
		return false
	}
	ns := r["namespace"]
	if ns == "" {
		ns = u.GetNamespace()
	}
	return ns == pool.Namespace
}

// isNoMatch tells that the cluster has no QueryService kind: no
// QueryServices, not an error.
func isNoMatch(err error) bool {
	return meta.IsNoMatchError(err) || kerrors.IsNotFound(err)
}

// SummarizeQueryService cuts a QueryService to the fields the
// pool-compose function reads.
func SummarizeQueryService(u *unstructured.Unstructured) v1alpha1.QueryServiceSummary {
	s := v1alpha1.QueryServiceSummary{Name: u.GetName(), Namespace: u.GetNamespace(), Labels: u.GetLabels()}
	ex, _, _ := unstructured.NestedMap(u.Object, "spec", "executor")
	e := &s.Executor
	e.Image, _ = ex["image"].(string)
	e.InstanceType, _ = ex["instanceType"].(string)
	if n, ok, _ := unstructured.NestedInt64(ex, "replicas"); ok {
		r := int32(n) //nolint:gosec // replicas fit int32 by the QueryService schema
		e.Replicas = &r
	}
	e.Resources.CPU = quantityOf(ex, "resources", "cpu")
	e.Resources.Memory = quantityOf(ex, "resources", "memory")
	if ns, ok, _ := unstructured.NestedStringMap(ex, "nodeSelector"); ok && len(ns) > 0 {
		e.NodeSelector = ns
	}
	if r, ok, _ := unstructured.NestedStringMap(ex, "poolRef"); ok {
		e.PoolRef = &v1alpha1.PoolRef{Name: r["name"], Namespace: r["namespace"]}
	}
	return s
}

// quantityOf reads a quantity, given as a string or a number; nil when
// absent or unreadable.
func quantityOf(m map[string]any, path ...string) *resource.Quantity {
	v, ok, _ := unstructured.NestedFieldNoCopy(m, path...)
	if !ok {
		return nil
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = resource.NewQuantity(x, resource.DecimalSI).String()
	case float64:
		b, _ := json.Marshal(x)
		s = string(b)
	default:
		return nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return nil
	}
	return &q
}
