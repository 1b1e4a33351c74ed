package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// The methods below make PoolCapacity a legacy (cluster-scoped) managed
// resource, ProviderConfig a provider config and ProviderConfigUsage its
// usage record, as crossplane-runtime's reconcilers expect.

// GetCondition of this PoolCapacity.
func (mg *PoolCapacity) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this PoolCapacity.
func (mg *PoolCapacity) SetConditions(c ...xpv2.Condition) { mg.Status.SetConditions(c...) }

// GetDeletionPolicy of this PoolCapacity.
func (mg *PoolCapacity) GetDeletionPolicy() xpv2.DeletionPolicy { return mg.Spec.DeletionPolicy }

// SetDeletionPolicy of this PoolCapacity.
func (mg *PoolCapacity) SetDeletionPolicy(r xpv2.DeletionPolicy) { mg.Spec.DeletionPolicy = r }

// GetManagementPolicies of this PoolCapacity.
func (mg *PoolCapacity) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this PoolCapacity.
func (mg *PoolCapacity) SetManagementPolicies(r xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = r
}

// GetProviderConfigReference of this PoolCapacity.
func (mg *PoolCapacity) GetProviderConfigReference() *xpv2.Reference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this PoolCapacity.
func (mg *PoolCapacity) SetProviderConfigReference(r *xpv2.Reference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this PoolCapacity.
func (mg *PoolCapacity) GetWriteConnectionSecretToReference() *xpv2.SecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this PoolCapacity.
func (mg *PoolCapacity) SetWriteConnectionSecretToReference(r *xpv2.SecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration of this PoolCapacity.
func (mg *PoolCapacity) GetObservedGeneration() int64 { return mg.Status.GetObservedGeneration() }

// SetObservedGeneration of this PoolCapacity.
func (mg *PoolCapacity) SetObservedGeneration(g int64) { mg.Status.SetObservedGeneration(g) }

// GetItems of this PoolCapacityList, as a resource.ManagedList (what
// crossplane-runtime's state metrics count).
func (l *PoolCapacityList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// GetCondition of this ProviderConfig.
func (p *ProviderConfig) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions of this ProviderConfig.
func (p *ProviderConfig) SetConditions(c ...xpv2.Condition) { p.Status.SetConditions(c...) }

// GetUsers of this ProviderConfig.
func (p *ProviderConfig) GetUsers() int64 { return p.Status.Users }

// SetUsers of this ProviderConfig.
func (p *ProviderConfig) SetUsers(i int64) { p.Status.Users = i }

// GetProviderConfigReference of this ProviderConfigUsage.
func (p *ProviderConfigUsage) GetProviderConfigReference() xpv2.Reference {
	return p.ProviderConfigReference
}

// SetProviderConfigReference of this ProviderConfigUsage.
func (p *ProviderConfigUsage) SetProviderConfigReference(r xpv2.Reference) {
	p.ProviderConfigReference = r
}

// GetResourceReference of this ProviderConfigUsage.
func (p *ProviderConfigUsage) GetResourceReference() xpv2.TypedReference {
	return p.ResourceReference
}

// SetResourceReference of this ProviderConfigUsage.
func (p *ProviderConfigUsage) SetResourceReference(r xpv2.TypedReference) {
	p.ResourceReference = r
}

// GetItems of this ProviderConfigUsageList.
func (l *ProviderConfigUsageList) GetItems() []resource.ProviderConfigUsage {
	items := make([]resource.ProviderConfigUsage, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

var (
	_ resource.LegacyManaged             = &PoolCapacity{} //nolint:staticcheck // PoolCapacity is a cluster-scoped legacy managed resource: a LegacyCluster XR composes it
	_ resource.ManagedList               = &PoolCapacityList{}
	_ resource.ProviderConfig            = &ProviderConfig{}
	_ resource.LegacyProviderConfigUsage = &ProviderConfigUsage{} //nolint:staticcheck // PoolCapacity is a cluster-scoped legacy managed resource: a LegacyCluster XR composes it
	_ resource.ProviderConfigUsageList   = &ProviderConfigUsageList{}
)
