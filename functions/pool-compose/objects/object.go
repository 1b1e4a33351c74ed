package objects

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// Identity are the labels that tell a pool's nodes, and every object
// the function emits, from every other pool's: its name and, when it has
// one, its namespace.
func Identity(pool, ns string) map[string]string {
	l := map[string]string{qsv1alpha1.LabelPool: pool}
	if ns != "" {
		l[qsv1alpha1.LabelPoolNamespace] = ns
	}
	return l
}

// StringMap copies a string map into an unstructured one.
func StringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// object starts an unstructured object.
func New(apiVersion, kind, name, namespace string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetName(name)
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	if len(labels) > 0 {
		u.SetLabels(labels)
	}
	return u
}

// WithIdentity is the pool's identity labels and one more label k=v: the
// selector of one kind of the pool's pods.
func WithIdentity(pool, ns, k, v string) map[string]string {
	l := Identity(pool, ns)
	l[k] = v
	return l
}

// TolerationList renders tolerations as unstructured objects.
func TolerationList(ts []corev1.Toleration) []any {
	out := make([]any, 0, len(ts))
	for _, t := range ts {
		m := map[string]any{}
		for k, v := range map[string]string{"key": t.Key, "operator": string(t.Operator), "value": t.Value, "effect": string(t.Effect)} {
			if v != "" {
				m[k] = v
			}
		}
		if t.TolerationSeconds != nil {
			m["tolerationSeconds"] = *t.TolerationSeconds
		}
		out = append(out, m)
	}
	return out
}

// Scheduling is where the pool's own pods go: the node selector of pool
// nodes and the tolerations of their taints. Every pod the function emits
// uses it.
type Scheduling struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// affinity pins pods to pool nodes with a required node affinity that
// repeats the node selector, so a scheduler extension that ignores
// nodeSelector still keeps them there.
func (s Scheduling) affinity() *corev1.Affinity {
	if len(s.NodeSelector) == 0 {
		return nil
	}
	var exprs []corev1.NodeSelectorRequirement
	for _, k := range slices.Sorted(maps.Keys(s.NodeSelector)) {
		exprs = append(exprs, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{s.NodeSelector[k]}})
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}},
		},
	}}
}

// ToUnstructured converts a typed object, leaving out the empty status and
// creationTimestamp that typed objects always carry.
func ToUnstructured(o runtime.Object) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		// Typed Kubernetes objects always convert.
		panic(err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	// A workload's pod template sits in its spec; a PodTemplate's at the
	// top.
	for _, parent := range []any{m["spec"], m} {
		if p, ok := parent.(map[string]any); ok {
			if tmpl, ok := p["template"].(map[string]any); ok {
				if md, ok := tmpl["metadata"].(map[string]any); ok {
					delete(md, "creationTimestamp")
				}
			}
		}
	}
	return &unstructured.Unstructured{Object: m}
}

// Well-known node labels the NodePool's requirements use.
const (
	LabelInstanceType = "node.kubernetes.io/instance-type"
	LabelArch         = "kubernetes.io/arch"
	LabelOS           = "kubernetes.io/os"
	LabelCapacityType = "karpenter.sh/capacity-type"
	LabelHostname     = "kubernetes.io/hostname"
)
