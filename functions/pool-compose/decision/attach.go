package decision

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
)

// Attachment is the decision about one QueryService the pool knows of: it is
// allowed by the pool, points at the pool, or both.
type Attachment struct {
	// QS is the QueryService; nil when an allowedQueryServices entry names
	// one that does not exist.
	QS *QueryService

	Name, Namespace string

	// Allowed by allowedQueryServices or queryServiceSelector.
	Allowed bool
	// PointsHere: its spec.executor.poolRef names this pool.
	PointsHere bool
	// Consented: the cluster's settings let the pool attach QueryServices
	// of its namespace.
	Consented bool
	// Attached is Allowed, PointsHere and Consented.
	Attached bool
	// Reason says why it is not attached; empty when attached.
	Reason string
}

// Key is "namespace/name", how sizing and status name a QueryService.
func (a Attachment) Key() string { return a.Namespace + "/" + a.Name }

// Attach decides which QueryServices attach to the pool named pool in
// namespace ns. A QueryService attaches when the pool allows it (by name in
// allowedQueryServices, or by labels through queryServiceSelector, any
// namespace) and its spec.executor.poolRef names the pool (the poolRef
// namespace defaults to the QueryService's own). Every other QueryService
// that is allowed or points here is returned too, not attached, with the
// reason. A QueryService in another namespace attaches only when the
// settings consent too: mayAttachFrom reports whether the pool may attach
// QueryServices of a namespace (TenantOf's MayAttachFrom). qss are the
// QueryServices Crossplane supplied for the pool's Requirements, each once
// or more. The result is sorted by namespace and name. An invalid selector
// is an error.
func Attach(pool, ns string, spec poolv1alpha1.PoolSpec, qss []QueryService, mayAttachFrom func(string) bool) ([]Attachment, error) {
	var sel labels.Selector
	if spec.QueryServiceSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(spec.QueryServiceSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.queryServiceSelector is invalid: %w", err)
		}
		sel = s
	}
	byName := make(map[string]bool, len(spec.AllowedQueryServices))
	for _, r := range spec.AllowedQueryServices {
		byName[RefNamespace(r.Namespace, ns)+"/"+r.Name] = true
	}

	// Crossplane supplies only what the pool may attach or must report:
	// nearly every QueryService makes an entry.
	out := make([]Attachment, 0, len(qss)+len(byName))
	seen := make(map[string]bool, len(qss)+len(byName))
	for i := range qss {
		q := &qss[i]
		key := q.Namespace + "/" + q.Name
		if seen[key] {
			continue
		}
		a := Attachment{QS: q, Name: q.Name, Namespace: q.Namespace}
		a.Allowed = byName[key] || (sel != nil && sel.Matches(q.Labels))
		a.PointsHere = pointsAt(q, pool, ns)
		if !a.Allowed && !a.PointsHere {
			continue
		}
		seen[key] = true
		a.Consented = mayAttachFrom(q.Namespace)
		switch {
		case a.Allowed && a.PointsHere && a.Consented:
			a.Attached = true
		case a.PointsHere && !a.Consented:
			a.Reason = fmt.Sprintf("the cluster's settings do not let pools of namespace %s attach QueryServices of namespace %s: the platform team lists it in tenancy.namespaces[].attachFrom of the entry for %s", ns, q.Namespace, ns)
		case a.Allowed:
			a.Reason = notPointing(pool, ns, q.Namespace, key)
		default:
			a.Reason = fmt.Sprintf("spec.executor.poolRef names this pool but the pool does not allow it: add %s to the pool's allowedQueryServices or label it to match queryServiceSelector", key)
		}
		out = append(out, a)
	}
	for _, r := range spec.AllowedQueryServices {
		key := RefNamespace(r.Namespace, ns) + "/" + r.Name
		if seen[key] {
			continue
		}
		seen[key] = true
		reason := fmt.Sprintf("QueryService %s does not exist: create it or remove it from allowedQueryServices", key)
		if rns := RefNamespace(r.Namespace, ns); rns != ns {
			reason = notPointing(pool, ns, rns, key)
		}
		out = append(out, Attachment{Name: r.Name, Namespace: RefNamespace(r.Namespace, ns), Allowed: true, Reason: reason})
	}
	slices.SortFunc(out, func(a, b Attachment) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// notPointing explains why an allowed QueryService key of namespace qsNS is
// not attached. Where else it points is its owners' business, and so,
// outside the pool's own namespace, is whether it exists: the pool learns
// only that it is not attached.
func notPointing(pool, ns, qsNS, key string) string {
	want := fmt.Sprintf("{name: %s, namespace: %s}", pool, ns)
	if qsNS != ns {
		return fmt.Sprintf("allowed, but QueryService %s does not exist or its spec.executor.poolRef does not name this pool: its owners set it to %s to burst onto this pool", key, want)
	}
	return fmt.Sprintf("allowed, but its spec.executor.poolRef does not name this pool: set it to %s to burst onto this pool", want)
}

// RefNamespace defaults a reference's namespace.
func RefNamespace(ns, def string) string {
	if ns == "" {
		return def
	}
	return ns
}

// attached returns the attached QueryServices of as.
func attached(as []Attachment) []Attachment {
	out := make([]Attachment, 0, len(as))
	for _, a := range as {
		if a.Attached {
			out = append(out, a)
		}
	}
	return out
}

// SelectorLabels are the labels every QueryService sel selects must carry
// with one value: its matchLabels, and each matchExpressions entry with
// operator In and a single value. Crossplane fetches required resources by
// label equality only; these narrow the fetch, and the whole selector is
// then evaluated on what Crossplane returns. Nil when sel pins no label
// (Validate refuses such a selector).
func SelectorLabels(sel *metav1.LabelSelector) map[string]string {
	if sel == nil {
		return nil
	}
	out := make(map[string]string, len(sel.MatchLabels)+len(sel.MatchExpressions))
	maps.Copy(out, sel.MatchLabels)
	for _, e := range sel.MatchExpressions {
		if e.Operator == metav1.LabelSelectorOpIn && len(e.Values) == 1 {
			if v, ok := out[e.Key]; ok && v != e.Values[0] {
				// Contradicts matchLabels: selects nothing, which
				// the local evaluation finds.
				continue
			}
			out[e.Key] = e.Values[0]
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// pointsAt tells whether q's spec.executor.poolRef names the pool; its
// namespace defaults to q's own.
func pointsAt(q *QueryService, pool, ns string) bool {
	r := q.Spec.Executor.PoolRef
	return r != nil && r.Name == pool && RefNamespace(r.Namespace, q.Namespace) == ns
}
