package objects

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	qsv1alpha1 "github.com/burstpool/burstpool/apis/queryservice/v1alpha1"
)

// admissionAPIVersion is the GA API of ValidatingAdmissionPolicy
// (Kubernetes 1.30 and later).
const admissionAPIVersion = "admissionregistration.k8s.io/v1"

// Kinds of a pool's admission policy and its binding.
const (
	KindAccessPolicy        = "ValidatingAdmissionPolicy"
	KindAccessPolicyBinding = "ValidatingAdmissionPolicyBinding"
)

// AccessPolicyName is the name of pool ns/pool's ValidatingAdmissionPolicy
// and its binding. Namespaces hold no dots, so no two pools share it.
func AccessPolicyName(pool, ns string) string {
	return "burstpool-access." + ns + "." + pool
}

// AccessArgs is what a pool's admission policy is made of.
type AccessArgs struct {
	Pool, Namespace string
	// Allowed are the attached QueryServices, "namespace/name".
	Allowed []string
}

// celEscaper escapes backslashes and single quotes in a CEL string
// literal; a Replacer is safe for concurrent use.
var celEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// celString quotes s as a CEL string literal.
func celString(s string) string {
	return "'" + celEscaper.Replace(s) + "'"
}

// targetsPool is the CEL condition that pod obj ("object", or "oldObject"
// on UPDATE) aims at the pool's nodes:
//
//   - it tolerates both of the pool's NoSchedule identity taints (which
//     every pod the scheduler puts on a Karpenter or managed pool node
//     must);
//   - it tolerates the pool's NoExecute identity taint (which every pod
//     that runs on a pool node must, however it got there);
//   - it sets spec.nodeName (skipping the scheduler) and tolerates the
//     pool name's taint with any effect (the namespace's taint alone names
//     every pool of the namespace, and does not let a pod stay);
//   - or its node selector or required node affinity names the pool (pools
//     on existing nodes, whose taints are their owners').
//
// A toleration of every taint (no key) is not counted: node daemons carry
// it.
func targetsPool(pool, ns, obj string) string {
	p, n := celString(pool), celString(ns)
	spec := obj + ".spec"
	tolerates := func(key, value, effect string) string {
		eff := ""
		if effect != "" {
			eff = fmt.Sprintf(" && (!has(t.effect) || t.effect == '' || t.effect == %s)", celString(effect))
		}
		return fmt.Sprintf("%s.tolerations.exists(t, has(t.key) && t.key == %s && ((has(t.operator) && t.operator == 'Exists') || (has(t.value) && t.value == %s))%s)", spec, celString(key), value, eff)
	}
	return strings.Join([]string{
		fmt.Sprintf("(has(%s.tolerations) && %s && %s)", spec, tolerates(qsv1alpha1.TaintPool, p, ""), tolerates(qsv1alpha1.TaintPoolNamespace, n, "")),
		fmt.Sprintf("(has(%s.tolerations) && %s)", spec, tolerates(qsv1alpha1.TaintPool, p, string(corev1.TaintEffectNoExecute))),
		fmt.Sprintf("(has(%[1]s.nodeName) && %[1]s.nodeName != '' && has(%[1]s.tolerations) && %[2]s)", spec, tolerates(qsv1alpha1.TaintPool, p, "")),
		fmt.Sprintf("(has(%[5]s.nodeSelector) && %[1]s in %[5]s.nodeSelector && %[5]s.nodeSelector[%[1]s] == %[2]s && (!(%[3]s in %[5]s.nodeSelector) || %[5]s.nodeSelector[%[3]s] == %[4]s))",
			celString(qsv1alpha1.LabelPool), p, celString(qsv1alpha1.LabelPoolNamespace), n, spec),
		fmt.Sprintf("(has(%[3]s.affinity) && has(%[3]s.affinity.nodeAffinity) && has(%[3]s.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) && "+
			"%[3]s.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.exists(term, has(term.matchExpressions) && "+
			"term.matchExpressions.exists(e, e.key == %[1]s && e.operator == 'In' && has(e.values) && %[2]s in e.values)))", celString(qsv1alpha1.LabelPool), p, spec),
	}, " || ")
}

// newlyTargets is the CEL condition that a pod UPDATE is one the policy
// checks: the pod did not aim at the pool before (an update may add
// tolerations at any time, and node selector and affinity terms while the
// pod has scheduling gates), or it still had scheduling gates, so it was
// never scheduled. Every other update of a pod that already aimed at the
// pool (labels, annotations, finalizers, an image) is let through: such a
// pod passed the policy when it was created or when it came to aim at the
// pool, and refusing its updates would not move it off the node but would
// block its owner. Nor is an update of a pod being deleted checked (the
// scheduler does not place such a pod), so removing a finalizer always
// works. Status updates are of the pods/status subresource, which the
// policy does not match.
func newlyTargets(pool, ns string) string {
	return fmt.Sprintf("request.operation != 'UPDATE' || (!has(object.metadata.deletionTimestamp) && (!(%s) || (has(oldObject.spec.schedulingGates) && size(oldObject.spec.schedulingGates) > 0)))", targetsPool(pool, ns, "oldObject"))
}

// missingLabels is the CEL list of the labels of want ("key=value", sorted
// by key) that pod object does not carry with their value.
func missingLabels(want map[string]string) string {
	pairs := make([]string, 0, len(want))
	for _, k := range slices.Sorted(maps.Keys(want)) {
		pairs = append(pairs, fmt.Sprintf("[%s, %s]", celString(k), celString(want[k])))
	}
	return fmt.Sprintf("[%s].filter(l, !has(object.metadata.labels) || !(l[0] in object.metadata.labels) || object.metadata.labels[l[0]] != l[1]).map(l, l[0] + '=' + l[1])",
		strings.Join(pairs, ", "))
}

// AccessPolicy returns the ValidatingAdmissionPolicy that lets onto the
// pool's nodes only executors of attached QueryServices (a pod's
// QueryService is its namespace and e6data.io/query-service label) and the
// pool's own placeholder, warmup and storage agent pods in its namespace.
// An executor of an attached QueryService must also carry the pool's
// executor labels (status.executorScheduling.labels), by which the pool
// counts, gates, shares and charges it: one without them would run on the
// pool uncounted, its cost booked as the pool's waste.
func AccessPolicy(a AccessArgs) *unstructured.Unstructured {
	allowed := make([]string, 0, len(a.Allowed))
	for _, q := range slices.Sorted(slices.Values(a.Allowed)) {
		allowed = append(allowed, celString(q))
	}
	own := make([]string, 0, 3)
	for _, c := range []string{qsv1alpha1.ComponentPlaceholder, qsv1alpha1.ComponentWarmup, qsv1alpha1.ComponentStorageAgent} {
		own = append(own, celString(c))
	}
	qsLabel := celString(qsv1alpha1.LabelQueryService)
	compLabel := celString(qsv1alpha1.LabelComponent)
	key := fmt.Sprintf("%s + '/' + (has(object.metadata.labels) && %[2]s in object.metadata.labels ? object.metadata.labels[%[2]s] : '')", "request.namespace", qsLabel)
	ownPod := fmt.Sprintf("request.namespace == %s && has(object.metadata.labels) && %[2]s in object.metadata.labels && object.metadata.labels[%[2]s] in [%[3]s]",
		celString(a.Namespace), compLabel, strings.Join(own, ", "))
	id := a.Namespace + "/" + a.Pool
	msg := fmt.Sprintf("'pool %s admits only executors of the QueryServices attached to it, and ' + (variables.queryService.endsWith('/') ? 'this pod has no %s label' : 'QueryService ' + variables.queryService + ' is not one') + "+
		"'. To be allowed, ask the pool owners to add the QueryService to spec.allowedQueryServices of pool %s (or to label it to match spec.queryServiceSelector), set its spec.executor.poolRef to {name: %s, namespace: %s}, and label its executor pods %s=<QueryService name>'",
		id, qsv1alpha1.LabelQueryService, id, a.Pool, a.Namespace, qsv1alpha1.LabelQueryService)

	executor := WithIdentity(a.Pool, a.Namespace, qsv1alpha1.LabelExecutorType, qsv1alpha1.ExecutorTypePool)
	unlabelledMsg := fmt.Sprintf("'pool %s counts, gates, shares and charges its executors by their labels, and this executor of QueryService ' + variables.queryService + "+
		"' lacks ' + variables.missingLabels.join(', ') + '. Label the executor pods the QueryService runs on the pool with every label of status.executorScheduling.labels of the Pool'", id)

	u := New(admissionAPIVersion, KindAccessPolicy, AccessPolicyName(a.Pool, a.Namespace), "", Identity(a.Pool, a.Namespace))
	u.Object["spec"] = map[string]any{
		"failurePolicy": "Fail",
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
			"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE", "UPDATE"}, "resources": []any{"pods"},
		}}},
		"matchConditions": []any{
			map[string]any{"name": "targets-pool", "expression": targetsPool(a.Pool, a.Namespace, "object")},
			map[string]any{"name": "newly-targets-pool", "expression": newlyTargets(a.Pool, a.Namespace)},
		},
		"variables": []any{
			map[string]any{"name": "queryService", "expression": key},
			map[string]any{"name": "missingLabels", "expression": missingLabels(executor)},
		},
		"validations": []any{
			map[string]any{
				"expression":        fmt.Sprintf("variables.queryService in [%s] || (%s)", strings.Join(allowed, ", "), ownPod),
				"messageExpression": msg,
				"reason":            "Forbidden",
			},
			// Checked once the first holds: an attached QueryService's pod.
			map[string]any{
				"expression":        fmt.Sprintf("!(variables.queryService in [%s]) || size(variables.missingLabels) == 0 || (%s)", strings.Join(allowed, ", "), ownPod),
				"messageExpression": unlabelledMsg,
				"reason":            "Forbidden",
			},
		},
	}
	return u
}

// AccessPolicyBinding binds the pool's admission policy to every
// namespace, denying what it rejects.
func AccessPolicyBinding(pool, ns string) *unstructured.Unstructured {
	u := New(admissionAPIVersion, KindAccessPolicyBinding, AccessPolicyName(pool, ns), "", Identity(pool, ns))
	u.Object["spec"] = map[string]any{
		"policyName":        AccessPolicyName(pool, ns),
		"validationActions": []any{"Deny"},
	}
	return u
}
