package decision

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"

	"github.com/burstpool/burstpool/functions/pool-compose/objects"
)

var unauthorizedPolicies = []string{string(capv1alpha1.UnauthorizedReport), string(capv1alpha1.UnauthorizedEvict), objects.PolicyDeny}

// unauthorizedPolicy is the pool's spec.unauthorizedExecutors, else the
// function input's.
func unauthorizedPolicy(in Input) string {
	if p := in.Spec.UnauthorizedExecutors; p != "" {
		return p
	}
	return in.Config.Capacity.UnauthorizedExecutors
}

// decideAdmission decides the pool's admission policy and binding, in Deny
// mode: only executors of the attached QueryServices get onto its nodes.
func decideAdmission(in Input, f Facts) Outcome {
	var o Outcome
	if unauthorizedPolicy(in) != objects.PolicyDeny {
		return o
	}
	if len(f.Scheduling.NodeSelector) == 0 {
		o.preserve(objects.ComposedAccessPolicy, objects.ComposedAccessBinding)
		return o
	}
	allowed := make([]string, 0, len(f.Attached))
	for _, a := range f.Attached {
		allowed = append(allowed, a.Key())
	}
	// Lazy: the policy's CEL text for an unchanged set of QueryServices
	// comes from the render cache, not built again.
	a := objects.AccessArgs{Pool: in.Pool, Namespace: in.Namespace, Allowed: allowed}
	name := objects.AccessPolicyName(in.Pool, in.Namespace)
	o.desireLazy(objects.ComposedAccessPolicy, objects.KindAccessPolicy, name, Lazy{Key: lazyKey("accesspolicy", a), Build: func() *unstructured.Unstructured { return objects.AccessPolicy(a) }},
		in.Observed[objects.ComposedAccessPolicy] != nil, true)
	o.desireLazy(objects.ComposedAccessBinding, objects.KindAccessPolicyBinding, name, Lazy{Key: lazyKey("accessbinding", a.Pool+"/"+a.Namespace), Build: func() *unstructured.Unstructured { return objects.AccessPolicyBinding(in.Pool, in.Namespace) }},
		in.Observed[objects.ComposedAccessBinding] != nil, true)
	return o
}
