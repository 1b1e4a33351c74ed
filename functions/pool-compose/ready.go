package main

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// conditionReady tells whether an observed object reports the condition
// Ready=True. An object that is not observed yet is not ready; one whose
// kind has no conditions (noConditions) is ready once it exists.
func conditionReady(u *unstructured.Unstructured, noConditions bool) bool {
	if u == nil {
		return false
	}
	if noConditions {
		return true
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

// daemonSetReady tells whether an observed DaemonSet runs a ready pod on
// every node it should.
func daemonSetReady(u *unstructured.Unstructured) bool {
	ds := observedDaemonSet(u)
	if ds == nil {
		return false
	}
	st := ds.Status
	return st.ObservedGeneration >= ds.Generation && st.NumberReady >= st.DesiredNumberScheduled
}

// nodePoolNodes is the number of nodes an observed Karpenter NodePool
// reports.
func nodePoolNodes(u *unstructured.Unstructured) int64 {
	if u == nil {
		return 0
	}
	if n := count(u.Object, "status", "nodes"); n > 0 {
		return n
	}
	return count(u.Object, "status", "resources", "nodes")
}

// count reads a number that may be stored as a JSON number or a quantity
// string.
func count(obj map[string]any, path ...string) int64 {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case string:
		q, err := resource.ParseQuantity(n)
		if err != nil {
			return 0
		}
		return q.Value()
	}
	return 0
}
