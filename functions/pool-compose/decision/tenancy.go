package decision

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// reasonClaimNotAllowed is the condition reason of a Pool that asks for
// what the platform's settings do not grant its namespace.
const reasonClaimNotAllowed = "ClaimNotAllowed"

// Tenant is what the settings grant the Pools of one namespace: the
// tenancy.namespaces entry that applies (Entry, -1 for none) and the
// limits, each with the setting path it comes from.
type Tenant struct {
	// Namespace is the pool's namespace.
	Namespace string
	// Entry is the index of the tenancy.namespaces entry that applies;
	// -1 when none does.
	Entry  int
	Grants v1beta1.TenantNamespaces

	MaxExecutors     int32
	MaxExecutorsPath string
	// MaxNodes is 0 when only MaxExecutors bounds the nodes.
	MaxNodes         int32
	MaxNodesPath     string
	InstanceFamilies []string
	FamiliesPath     string
}

// TenantOf resolves the settings' tenancy for Pools in namespace ns: the
// first tenancy.namespaces entry whose names match ns (path.Match
// patterns), and its limits over the tenancy's own, field by field.
func TenantOf(cfg *v1beta1.Input, ns string) Tenant {
	t := Tenant{Namespace: ns, Entry: -1, MaxExecutors: v1beta1.DefaultMaxExecutors, MaxExecutorsPath: "tenancy.maxExecutors",
		MaxNodesPath: "tenancy.maxNodes", FamiliesPath: "tenancy.instanceFamilies"}
	ten := cfg.Tenancy
	if ten == nil {
		return t
	}
	t.limit(ten.Limits, "tenancy.")
	for i, e := range ten.Namespaces {
		if matchAny(e.Names, ns) {
			t.Entry, t.Grants = i, e
			t.limit(e.Limits, fmt.Sprintf("tenancy.namespaces[%d].", i))
			break
		}
	}
	return t
}

// limit takes the limits l sets, naming them under prefix.
func (t *Tenant) limit(l v1beta1.Limits, prefix string) {
	if l.MaxExecutors != nil {
		t.MaxExecutors, t.MaxExecutorsPath = *l.MaxExecutors, prefix+"maxExecutors"
	}
	if l.MaxNodes != nil {
		t.MaxNodes, t.MaxNodesPath = *l.MaxNodes, prefix+"maxNodes"
	}
	if l.InstanceFamilies != nil {
		t.InstanceFamilies, t.FamiliesPath = l.InstanceFamilies, prefix+"instanceFamilies"
	}
}

// matchAny tells whether any of the path.Match patterns matches s. A
// malformed pattern matches nothing.
func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, s); err == nil && ok {
			return true
		}
	}
	return false
}

// MayAttachFrom tells whether the settings let the pool's QueryServices
// come from namespace ns: the pool's own namespace always, others when the
// entry's attachFrom matches them.
func (t Tenant) MayAttachFrom(ns string) bool {
	return ns == t.Namespace || matchAny(t.Grants.AttachFrom, ns)
}

// grantPath is the setting path of one of the entry's grants, or of the
// namespaces list when no entry applies.
func (t Tenant) grantPath(field string) string {
	if t.Entry < 0 {
		return "tenancy.namespaces"
	}
	return fmt.Sprintf("tenancy.namespaces[%d].%s", t.Entry, field)
}

// refuse is the error of a claim value v at specPath that the grant field
// does not list.
func (t Tenant) refuse(field, specPath, v string) SettingError {
	if t.Entry < 0 {
		return SettingError{Path: t.grantPath(field), Message: fmt.Sprintf(
			"has no entry for namespace %s, so its Pools may not set %s to %q: ask the platform team to add an entry that lists it in %s, or remove it from the Pool",
			t.Namespace, specPath, v, field)}
	}
	return SettingError{Path: t.grantPath(field), Message: fmt.Sprintf(
		"does not list %q, which the Pool's %s names: ask the platform team to add it, or remove it from the Pool", v, specPath)}
}

// refuseFlag is the error of a claim that turns on specPath, which only
// the grant field (a boolean) allows.
func (t Tenant) refuseFlag(field, specPath string) SettingError {
	if t.Entry < 0 {
		return SettingError{Path: t.grantPath(field), Message: fmt.Sprintf(
			"has no entry for namespace %s, so its Pools may not set %s: ask the platform team to add an entry with %s: true, or remove it from the Pool",
			t.Namespace, specPath, field)}
	}
	return SettingError{Path: t.grantPath(field), Message: fmt.Sprintf(
		"is not true, so the Pool may not set %s: ask the platform team to set it, or remove it from the Pool", specPath)}
}

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
	if nodes := int32(ceilDiv64(int64(s.MaxExecutors), int64(perNode(s)))); t.MaxNodes > 0 && nodes > t.MaxNodes {
		errs = append(errs, SettingError{Path: t.MaxNodesPath, Message: fmt.Sprintf(
			"allows at most %d nodes per Pool, and spec.maxExecutors %d at spec.executorsPerNode %d asks for %d: lower maxExecutors or raise executorsPerNode",
			t.MaxNodes, s.MaxExecutors, perNode(s), nodes)})
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
	errs := claimErrors(in, f.Tenant)
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
	return in.SettingsProblem == "" && len(claimErrors(in, TenantOf(in.Config, in.Namespace))) > 0
}

// claimErrors checks the pool's claim against what the settings grant t.
func claimErrors(in Input, t Tenant) []SettingError {
	return CheckClaim(ClaimArgs{Spec: in.Spec, Tenant: t, Choice: platformChoices(in.Config, in.CRDs), Inherited: InheritedType(in, t)})
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

// pointsAt tells whether q's spec.executor.poolRef names the pool; its
// namespace defaults to q's own.
func pointsAt(q *QueryService, pool, ns string) bool {
	r := q.Spec.Executor.PoolRef
	return r != nil && r.Name == pool && RefNamespace(r.Namespace, q.Namespace) == ns
}
