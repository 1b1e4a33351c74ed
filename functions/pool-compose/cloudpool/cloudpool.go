// Package cloudpool builds the node pool objects of clouds where burstpool
// cannot use Karpenter: Linode LKE and DigitalOcean DOKS (Crossplane managed
// resources of their upjet providers), CoreWeave CKS (the cluster's own
// NodePool resource), and the EKS, GKE and AKS node groups a Cluster
// Autoscaler scales (BuildNodeGroup; managed resources of Upbound's
// provider families). It is pure: Build and BuildNodeGroup read only their
// input.
package cloudpool

import (
	"slices"
	"strconv"

	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// Provisioning methods Build emits a node pool for (the values of the Pool's
// spec.provisioning.method).
const (
	MethodLKE       = "lke"
	MethodDOKS      = "doks"
	MethodCoreWeave = "coreweave"
)

// API versions and the kind of the emitted objects.
const (
	APIVersionLKE           = "lke.linode.upbound.io/v1alpha1"
	APIVersionDOKS          = "kubernetes.digitalocean.crossplane.io/v1alpha1"
	APIVersionDOKSNamespace = "kubernetes.digitalocean.m.crossplane.io/v1alpha1"
	APIVersionCoreWeave     = "compute.coreweave.com/v1alpha1"
	Kind                    = "NodePool"
)

// nameSuffix ends the name of every emitted node pool: "{pool}-nodepool".
const nameSuffix = "-nodepool"

// providerConfigKind is the kind a namespaced DOKS managed resource refers
// to: the cluster-wide provider configuration, as the provider's own default.
const providerConfigKind = "ClusterProviderConfig"

// Input is everything Build needs to describe one pool's node pool.
type Input struct {
	// Pool names the pool; the object is "{Pool}-nodepool" and its nodes
	// carry the pool label and taint with this value.
	Pool string

	// Namespace of the Pool claim. Namespaced objects (DOKS with Namespaced)
	// live there; every object records it in the pool-namespace label.
	Namespace string

	// Method is MethodLKE, MethodDOKS or MethodCoreWeave.
	Method string

	// ClusterID is the cloud's ID of the cluster the pool joins: the numeric
	// LKE cluster ID or the DOKS cluster UUID. CoreWeave node pools belong
	// to the cluster they are created in and ignore it.
	ClusterID string

	// InstanceType is the node size: a Linode type (g6-dedicated-8), a
	// Droplet size slug (s-8vcpu-16gb) or a CoreWeave instance type.
	InstanceType string

	// MinNodes and MaxNodes bound the pool's size. When they differ the
	// cloud's autoscaler works between them; when equal the size is fixed.
	MinNodes, MaxNodes int32

	// TargetNodes is the node count burstpool asks of a CoreWeave pool
	// without Autoscaling; kept between MinNodes and MaxNodes. With
	// Autoscaling it is the count the autoscaler last set (MinNodes while
	// the pool is new), so burstpool never moves it.
	TargetNodes int32

	// Autoscaling lets CKS's Cluster Autoscaler (on by default from
	// Kubernetes 1.32) size a CoreWeave pool between MinNodes and
	// MaxNodes.
	Autoscaling bool

	// Name overrides the object's name ("" is Name(Pool)). CoreWeave pools
	// are named after their instance type, which cannot change.
	Name string

	// Labels are put on the pool's nodes, besides the pool label.
	Labels map[string]string

	// Taints are put on the pool's nodes, besides the pool's identity
	// taints (IdentityTaints), which are added when missing.
	Taints []corev1.Taint

	// ProviderConfigName names the Crossplane provider configuration of LKE
	// and DOKS managed resources. Empty leaves the provider's default.
	ProviderConfigName string

	// Region is where the cluster runs. Node pools inherit it from their
	// cluster, so it is only recorded as a "region:{Region}" tag on LKE and
	// DOKS pools, for people looking pools up in the cloud console.
	Region string

	// Namespaced emits DOKS's namespaced managed resource
	// (kubernetes.digitalocean.m.crossplane.io) in Namespace instead of the
	// cluster-scoped one. Only valid with MethodDOKS.
	Namespaced bool
}

// Name returns the name of the node pool object of pool.
func Name(pool string) string {
	return pool + nameSuffix
}

// Build returns the node pool object for in. Its error names the Input field
// that is missing or wrong and says what to set.
func Build(in Input) (*unstructured.Unstructured, error) {
	if err := validate(in); err != nil {
		return nil, err
	}
	taints := poolTaints(in)
	labels := nodeLabels(in)

	var (
		u   *unstructured.Unstructured
		err error
	)
	switch in.Method {
	case MethodLKE:
		u, err = lke(in, labels, taints)
	case MethodDOKS:
		u = doks(in, labels, taints)
	case MethodCoreWeave:
		u = coreweave(in, labels, taints)
	}
	if err != nil {
		return nil, errors.Wrapf(err, "cannot build the %s node pool of pool %q", in.Method, in.Pool)
	}
	name := in.Name
	if name == "" {
		name = Name(in.Pool)
	}
	u.SetName(name)
	if in.Method == MethodDOKS && in.Namespaced {
		u.SetNamespace(in.Namespace)
	}
	u.SetLabels(objectLabels(in))
	return u, nil
}

// validate checks in before anything is built.
func validate(in Input) error {
	switch {
	case in.Pool == "":
		return errors.New("Pool is empty: set it to the pool's name")
	case !slices.Contains([]string{MethodLKE, MethodDOKS, MethodCoreWeave}, in.Method):
		return errors.Errorf("Method %q is not supported: set it to %q, %q or %q", in.Method, MethodLKE, MethodDOKS, MethodCoreWeave)
	case in.ClusterID == "" && in.Method != MethodCoreWeave:
		return errors.Errorf("ClusterID is empty: set it to the %s cluster ID (the Pool's spec.provisioning.clusterId)", in.Method)
	case in.InstanceType == "":
		return errors.Errorf("InstanceType is empty: set it to the %s node type of pool %q", in.Method, in.Pool)
	case in.MaxNodes < 1:
		return errors.Errorf("MaxNodes is %d: set it to at least 1", in.MaxNodes)
	case in.MinNodes < 0 || in.MinNodes > in.MaxNodes:
		return errors.Errorf("MinNodes is %d: set it between 0 and MaxNodes (%d)", in.MinNodes, in.MaxNodes)
	case in.Namespaced && in.Method != MethodDOKS:
		return errors.Errorf("Namespaced is set for method %q: only %q has a namespaced node pool; unset it", in.Method, MethodDOKS)
	case in.Namespaced && in.Namespace == "":
		return errors.New("Namespace is empty but Namespaced is set: set it to the Pool claim's namespace")
	}
	for i, t := range in.Taints {
		if t.Key == "" {
			return errors.Errorf("Taints[%d].Key is empty: set it", i)
		}
		if !slices.Contains([]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}, t.Effect) {
			return errors.Errorf("Taints[%d].Effect is %q: set it to NoSchedule, PreferNoSchedule or NoExecute", i, t.Effect)
		}
	}
	return nil
}

// objectLabels are the labels of the node pool object itself.
func objectLabels(in Input) map[string]string {
	l := map[string]string{qsv1alpha1.LabelPool: in.Pool}
	if in.Namespace != "" {
		l[qsv1alpha1.LabelPoolNamespace] = in.Namespace
	}
	return l
}

// nodeLabels are the labels of the pool's nodes: in.Labels and the pool's
// identity (name and namespace labels), which always wins.
func nodeLabels(in Input) map[string]any {
	l := make(map[string]any, len(in.Labels)+1)
	for k, v := range in.Labels {
		l[k] = v
	}
	l[qsv1alpha1.LabelPool] = in.Pool
	if in.Namespace != "" {
		l[qsv1alpha1.LabelPoolNamespace] = in.Namespace
	}
	return l
}

// IdentityTaints are the taints that keep every pod but the pool's own off
// its nodes: its name and, when it has one, its namespace, effect
// NoSchedule, so the scheduler places no other pod there; and its name
// again with effect NoExecute, so that a pod bound to a pool node by
// spec.nodeName, which skips the scheduler, is refused by the kubelet and
// evicted by the taint-eviction controller unless it tolerates it (and a pod
// that tolerates it is one the pool's admission policy checks).
func IdentityTaints(pool, ns string) []corev1.Taint {
	out := []corev1.Taint{{Key: qsv1alpha1.TaintPool, Value: pool, Effect: corev1.TaintEffectNoSchedule}}
	if ns != "" {
		out = append(out, corev1.Taint{Key: qsv1alpha1.TaintPoolNamespace, Value: ns, Effect: corev1.TaintEffectNoSchedule})
	}
	return append(out, corev1.Taint{Key: qsv1alpha1.TaintPool, Value: pool, Effect: corev1.TaintEffectNoExecute})
}

// poolTaints returns in.Taints with the pool's identity taints appended
// when no taint has their key and effect.
func poolTaints(in Input) []corev1.Taint {
	ts := slices.Clone(in.Taints)
	for _, o := range IdentityTaints(in.Pool, in.Namespace) {
		has := slices.ContainsFunc(ts, func(t corev1.Taint) bool {
			return t.Key == o.Key && t.Effect == o.Effect
		})
		if !has {
			ts = append(ts, o)
		}
	}
	return ts
}

// TaintList renders taints as {key, value, effect} objects, the shape of
// the three clouds' node pools and of Karpenter's NodePool.
func TaintList(ts []corev1.Taint) []any {
	out := make([]any, 0, len(ts))
	for _, t := range ts {
		m := map[string]any{"key": t.Key, "effect": string(t.Effect)}
		if t.Value != "" {
			m["value"] = t.Value
		}
		out = append(out, m)
	}
	return out
}

// tags are the cloud tags of LKE and DOKS pools, in a stable order.
func tags(in Input) []any {
	t := []any{"burstpool", "e6data-pool:" + in.Pool}
	if in.Region != "" {
		t = append(t, "region:"+in.Region)
	}
	return t
}

// providerConfigRef refers to in.ProviderConfigName, or is nil to leave the
// provider's default.
func providerConfigRef(in Input) map[string]any {
	if in.ProviderConfigName == "" {
		return nil
	}
	ref := map[string]any{"name": in.ProviderConfigName}
	if in.Namespaced {
		ref["kind"] = providerConfigKind
	}
	return ref
}

// managementPolicies are every action but LateInitialize. upjet copies
// the cloud's node count into spec.forProvider.nodeCount when it
// late-initialises a node pool whose autoscaler owns the count, and then
// sets the cloud back to that count at every update, against the
// autoscaler. upjet late-initialises only when the policies hold
// LateInitialize or * (crossplane/upjet pkg/controller/external.go,
// policyHasLateInit, in v1.4 and v2), and provider-linode and
// provider-upjet-digitalocean honour management policies by default
// (cmd/provider/main.go, --enable-management-policies, default true).
var managementPolicies = []any{"Observe", "Create", "Update", "Delete"}

// managed wraps forProvider as the spec of a Crossplane managed resource.
func managed(apiVersion string, in Input, forProvider map[string]any) *unstructured.Unstructured {
	spec := map[string]any{"forProvider": forProvider, "managementPolicies": managementPolicies}
	if ref := providerConfigRef(in); ref != nil {
		spec["providerConfigRef"] = ref
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       Kind,
		"spec":       spec,
	}}
}

// lkeMinNodes is the smallest LKE node pool: LKE cannot scale a pool to
// zero, so a smaller MinNodes is raised to it.
const lkeMinNodes = 1

// lke builds a linode/provider-linode NodePool. Held to the provider's CRD:
// clusterId is a number, sizes are numbers, autoscaler is a one-item list.
func lke(in Input, labels map[string]any, taints []corev1.Taint) (*unstructured.Unstructured, error) {
	id, err := strconv.ParseInt(in.ClusterID, 10, 64)
	if err != nil || id <= 0 {
		return nil, errors.Errorf("ClusterID %q is not an LKE cluster ID: set it to the cluster's numeric ID (linode-cli lke clusters-list)", in.ClusterID)
	}
	lo := max(in.MinNodes, lkeMinNodes)
	hi := max(in.MaxNodes, lo)
	fp := map[string]any{
		"clusterId": id,
		"type":      in.InstanceType,
		"labels":    labels,
		"taint":     TaintList(taints),
		"tags":      tags(in),
	}
	if lo == hi {
		fp["nodeCount"] = int64(hi)
	} else {
		// Without nodeCount LKE starts at the autoscaler's minimum and the
		// autoscaler owns the count from then on.
		fp["autoscaler"] = []any{map[string]any{"min": int64(lo), "max": int64(hi)}}
	}
	return managed(APIVersionLKE, in, fp), nil
}

// doks builds a crossplane-contrib/provider-upjet-digitalocean NodePool,
// cluster-scoped or namespaced. Held to the provider's CRDs: name and size
// are required, sizes are numbers, nodeCount is left out with autoScale (it
// would reset the autoscaler's count on every update).
func doks(in Input, labels map[string]any, taints []corev1.Taint) *unstructured.Unstructured {
	fp := map[string]any{
		"clusterId": in.ClusterID,
		"name":      Name(in.Pool),
		"size":      in.InstanceType,
		"labels":    labels,
		"taint":     TaintList(taints),
		"tags":      tags(in),
	}
	if in.MinNodes == in.MaxNodes {
		fp["autoScale"] = false
		fp["nodeCount"] = int64(in.MaxNodes)
	} else {
		fp["autoScale"] = true
		fp["minNodes"] = int64(in.MinNodes)
		fp["maxNodes"] = int64(in.MaxNodes)
	}
	apiVersion := APIVersionDOKS
	if in.Namespaced {
		apiVersion = APIVersionDOKSNamespace
	}
	return managed(apiVersion, in, fp)
}

// coreweave builds a CoreWeave Kubernetes Service NodePool. CoreWeave
// publishes no schema for it; the fields are held to CoreWeave's Node Pool
// reference: instanceType (immutable once created), targetNodes (required),
// autoscaling, minNodes and maxNodes, nodeLabels, nodeTaints ({key, value,
// effect}) and lifecycle.scaleDownStrategy. Without Autoscaling burstpool
// sets targetNodes itself (TargetNodes); with it, CKS's Cluster Autoscaler
// moves targetNodes between minNodes and maxNodes ("Autoscale Node
// Pools"). Either way the pool scales down IdleOnly: only nodes that run
// no pods go, never one under a running executor. It is cluster-scoped and
// applied in the cluster itself, so it has no provider configuration.
func coreweave(in Input, labels map[string]any, taints []corev1.Taint) *unstructured.Unstructured {
	spec := map[string]any{
		"instanceType": in.InstanceType,
		"autoscaling":  in.Autoscaling,
		"targetNodes":  int64(min(max(in.TargetNodes, in.MinNodes), in.MaxNodes)),
		"nodeLabels":   labels,
		"nodeTaints":   TaintList(taints),
		"lifecycle":    map[string]any{"scaleDownStrategy": "IdleOnly"},
	}
	if in.Autoscaling {
		spec["minNodes"] = int64(in.MinNodes)
		spec["maxNodes"] = int64(in.MaxNodes)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": APIVersionCoreWeave,
		"kind":       Kind,
		"spec":       spec,
	}}
}

// CoreWeaveReady tells whether an observed CoreWeave NodePool serves: its
// Accepted condition is True (a valid configuration) and its Allocated
// condition is True (reason Complete: every requested node is there).
func CoreWeaveReady(conds map[string]Condition) bool {
	a, ok := conds["Accepted"]
	if !ok || a.Status != "True" {
		return false
	}
	al, ok := conds["Allocated"]
	return ok && (al.Status == "True" || al.Reason == "Complete")
}

// Condition is one observed condition's status and reason.
type Condition struct{ Status, Reason string }
