package decision

import (
	"github.com/burstpool/burstpool/internal/sizing"
)

// SizeRequest is what the pool's sizing needs: sizing's own input, and the
// two filters the function applies to the catalog before sizing from it.
type SizeRequest struct {
	sizing.Input
	// Method provisions the nodes (karpenter, eks-auto-mode, ...); EKS
	// Auto Mode launches only some types.
	Method string
	// InstanceFamilies are the families or types the settings allow
	// (tenancy.instanceFamilies); empty allows the whole catalog.
	InstanceFamilies []string
}

// Inherited is the QueryService the pool inherits its type from, and
// that type; empty when it inherits none.
func (r SizeRequest) Inherited() sizing.Inherited {
	if r.Inherit == nil {
		return sizing.Inherited{}
	}
	return *r.Inherit
}

// maxSpotTypes is how many types a spot pool offers Karpenter.
const maxSpotTypes = 5
