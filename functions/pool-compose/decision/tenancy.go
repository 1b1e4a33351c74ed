package decision

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// reasonClaimNotAllowed is the condition reason of a Pool that asks for
// what the platform's settings do not grant its namespace.
const reasonClaimNotAllowed = "ClaimNotAllowed"

// PlatformChoices are what the settings choose for a pool that asks for
// nothing: a claim may always ask for the same.
type PlatformChoices struct {
	WorkloadCluster, ClusterID, Method, Cloud string
	ManageNodePool, ComposeNodeIAM            bool
}

// platformChoices reads what the settings choose, detecting the method and
// cloud from the CRDs as a pool without spec.provisioning would.
func platformChoices(cfg *v1beta1.Input, crds map[string]bool) PlatformChoices {
	d := Detect(nil, cfg, crds)
	c := PlatformChoices{Method: d.Method, Cloud: d.Cloud}
	if w := cfg.WorkloadCluster; w != nil {
		c.WorkloadCluster = w.ProviderConfigName
	}
	if p := cfg.Provisioning; p != nil {
		c.ClusterID, c.ManageNodePool = p.ClusterID, p.ManageNodePool
	}
	if a := cfg.AWS; a != nil && a.NodeIAM != nil {
		c.ComposeNodeIAM = a.NodeIAM.Enabled
	}
	return c
}

// ClaimArgs is what CheckClaim reads.
type ClaimArgs struct {
	Spec   poolv1alpha1.PoolSpec
	Tenant Tenant
	Choice PlatformChoices
	// Inherited is the instance type spec.inheritNodeConfigFrom takes
	// (only from a QueryService that consented); empty when none.
	Inherited string
	// PerNode and MaxNodes are the pool's Facts: executors a node and the
	// most nodes Spec asks for.
	PerNode  int32
	MaxNodes int64
}

// CheckClaim lists what the Pool asks for that the settings do not grant
// its namespace, each by the setting that forbids it. A value equal to the
// settings' own choice is always allowed.
func CheckClaim(a ClaimArgs) []SettingError {
	var errs []SettingError
	t, s, c := a.Tenant, a.Spec, a.Choice
	grant := func(field, specPath, v, chosen string, listed []string) {
		if v != "" && v != chosen && !slices.Contains(listed, v) {
			errs = append(errs, t.refuse(field, specPath, v))
		}
	}
	if w := s.WorkloadCluster; w != nil {
		grant("workloadClusters", "spec.workloadCluster.providerConfigName", w.ProviderConfigName, c.WorkloadCluster, t.Grants.WorkloadClusters)
	}
	if p := s.Provisioning; p != nil {
		grant("clusterIds", "spec.provisioning.clusterId", p.ClusterID, c.ClusterID, t.Grants.ClusterIDs)
		grant("methods", "spec.provisioning.method", p.Method, c.Method, t.Grants.Methods)
		grant("clouds", "spec.provisioning.cloud", p.Cloud, c.Cloud, t.Grants.Clouds)
		if p.ManageNodePool && !c.ManageNodePool && !t.Grants.ManageNodePool {
			errs = append(errs, t.refuseFlag("manageNodePool", "spec.provisioning.manageNodePool"))
		}
		if p.ComposeNodeIAM != nil && *p.ComposeNodeIAM && !c.ComposeNodeIAM && !t.Grants.ComposeNodeIAM {
			errs = append(errs, t.refuseFlag("composeNodeIAM", "spec.provisioning.composeNodeIAM"))
		}
	}
	if s.MaxExecutors > t.MaxExecutors {
		errs = append(errs, SettingError{Path: t.MaxExecutorsPath, Message: fmt.Sprintf(
			"allows at most %d executors per Pool%s, and spec.maxExecutors is %d: lower it, or ask the platform team to raise the limit",
			t.MaxExecutors, defaulted(t.MaxExecutorsPath, "tenancy.maxExecutors"), s.MaxExecutors)})
	}
	if nodes := int32(a.MaxNodes); t.MaxNodes > 0 && nodes > t.MaxNodes {
		errs = append(errs, SettingError{Path: t.MaxNodesPath, Message: fmt.Sprintf(
			"allows at most %d nodes per Pool, and spec.maxExecutors %d at spec.executorsPerNode %d asks for %d: lower maxExecutors or raise executorsPerNode",
			t.MaxNodes, s.MaxExecutors, a.PerNode, nodes)})
	}
	if fams := t.InstanceFamilies; len(fams) > 0 {
		family := func(specPath, v string) {
			if v != "" && !allowedType(fams, v, "") {
				errs = append(errs, SettingError{Path: t.FamiliesPath, Message: fmt.Sprintf(
					"allows only %s, and %s is %q: pick one of them", strings.Join(fams, ", "), specPath, v)})
			}
		}
		if ic := s.InstanceConfig; ic != nil {
			family("spec.instanceConfig.instanceType", ic.InstanceType)
			family("spec.instanceConfig.instanceFamily", ic.InstanceFamily)
		}
		family("the instance type inherited through spec.inheritNodeConfigFrom", a.Inherited)
	}
	return errs
}

// allowedType tells whether a type (by name, and by family when known) or
// a family named name is one of the allowed families or types.
func allowedType(allowed []string, name, family string) bool {
	return slices.ContainsFunc(allowed, func(f string) bool { return name == f || family == f || typeInFamily(name, f) })
}

// defaulted notes when a limit is the default because path is unset.
func defaulted(path, def string) string {
	if path == def {
		return " (the default when it is unset)"
	}
	return ""
}

// refuseClaim makes the pool Failed, keeping every composed object as it
// is, while its claim asks for what the settings do not grant: the claim's
// condition, event and message name the setting.
func refuseClaim(in Input, f Facts) Outcome {
	var o Outcome
	errs := claimErrors(in, f)
	if len(errs) == 0 {
		return o
	}
	msg := in.Settings.Problem(errs)
	o.Problem = failed(reasonClaimNotAllowed, msg)
	if in.PreviousConditions[CondProvisioned] != reasonClaimNotAllowed {
		o.event(true, reasonClaimNotAllowed, msg)
	}
	o.preserve(slices.Sorted(maps.Keys(in.Observed))...)
	return o
}

// ClaimRefused tells whether the pool's claim asks for more than the
// settings grant, before its workload cluster is chosen from it.
func ClaimRefused(in Input) bool {
	f := specFacts(in.Spec)
	f.Tenant = TenantOf(in.Config, in.Namespace)
	return in.SettingsProblem == "" && len(claimErrors(in, f)) > 0
}

// claimErrors checks the pool's claim against what the settings grant its
// namespace (f.Tenant).
func claimErrors(in Input, f Facts) []SettingError {
	return CheckClaim(ClaimArgs{Spec: in.Spec, Tenant: f.Tenant, Choice: platformChoices(in.Config, in.CRDs), Inherited: InheritedType(in, f.Tenant),
		PerNode: f.PerNode, MaxNodes: f.MaxNodes})
}

// InheritedType is the instance type spec.inheritNodeConfigFrom names: the
// named QueryService's executor instance type, only when it consented (its
// poolRef names the pool) and the settings let the pool attach from its
// namespace. Otherwise it is empty, as for a QueryService that does not
// exist, so a pool learns nothing of QueryServices that never agreed.
func InheritedType(in Input, t Tenant) string {
	r := in.Spec.InheritNodeConfigFrom
	if r == nil {
		return ""
	}
	ns := RefNamespace(r.Namespace, in.Namespace)
	if !t.MayAttachFrom(ns) {
		return ""
	}
	for i := range in.QueryServices {
		q := &in.QueryServices[i]
		if q.Namespace == ns && q.Name == r.Name && pointsAt(q, in.Pool, in.Namespace) {
			return q.Spec.Executor.InstanceType
		}
	}
	return ""
}
