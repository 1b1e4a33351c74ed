package decision

import (
	"fmt"
	"path"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

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
