package decision

import (
	"math"
	"strings"

	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
)

// CatalogSizer sizes pools with internal/sizing, from the cloud's catalog
// plus the input's overrides. Pools on a kwok cluster are sized from
// kwokCatalog when it is set: the catalog whose types that cluster's
// Karpenter kwok provider offers (for example aws, so a pool naming
// r7gd.16xlarge gets r7gd.16xlarge nodes), with that cloud's allocatable,
// which the simulated nodes offer (sizing.KWOKInstanceTypesJSON).
func CatalogSizer(overrides []v1beta1.InstanceType, kwokCatalog sizing.Cloud) func(SizeRequest) (sizing.Result, error) {
	extra := catalogOverrides(overrides)
	return func(in SizeRequest) (sizing.Result, error) {
		from := in.Cloud
		if from == sizing.CloudKWOK && kwokCatalog != "" {
			from = kwokCatalog
			in.Cloud = from
		}
		// Only read here: Derive, Only and WithOverrides copy what they
		// change.
		cat, err := sizing.SharedCatalog(from)
		if err != nil {
			return sizing.Result{}, errors.Wrapf(err, "cannot load the instance catalog of cloud %q", from)
		}
		if len(extra) > 0 {
			cat = cat.WithOverrides(extra)
		}
		if in.Method == methodEKSAutoMode {
			for _, p := range []struct{ field, name string }{{"spec.instanceConfig.instanceType", in.InstanceType}, {"the type inherited from " + in.Inherited().QueryService, in.Inherited().InstanceType}} {
				if it, ok := cat.Lookup(p.name); ok && autoModeRefuses(it) != "" {
					return sizing.Result{}, errors.Errorf("%s: EKS Auto Mode never launches %s: %s; choose a type with more than 1 vCPU", p.field, p.name, autoModeRefuses(it))
				}
			}
			cat = cat.Only(func(it sizing.InstanceType) bool { return autoModeRefuses(it) == "" })
		}
		if fams := in.InstanceFamilies; len(fams) > 0 {
			cat = cat.Only(func(t sizing.InstanceType) bool { return allowedType(fams, t.Name, t.Family) })
			if len(cat.Types) == 0 {
				return sizing.Result{}, errors.Errorf("the settings' tenancy.instanceFamilies (%s) allow no instance type of the %s catalog", strings.Join(fams, ", "), from)
			}
		}
		in.Input.Catalog, in.MaxSpotTypes = cat, maxSpotTypes
		return sizing.Derive(in.Input)
	}
}

// catalogOverrides are the settings' catalogOverrides as catalog types; an
// entry whose CPU or memory does not parse is left out (ValidateInput
// refuses it).
func catalogOverrides(overrides []v1beta1.InstanceType) []sizing.InstanceType {
	extra := make([]sizing.InstanceType, 0, len(overrides))
	for _, o := range overrides {
		cpu, err1 := resource.ParseQuantity(o.CPU)
		mem, err2 := resource.ParseQuantity(o.Memory)
		if err1 != nil || err2 != nil {
			continue
		}
		extra = append(extra, sizing.InstanceType{Name: o.Name, CPU: cpu, Memory: mem, Arch: o.Arch, LocalNVMeGiB: o.LocalNVMeGiB})
	}
	return extra
}

// clampInt32 narrows a count to int32, saturating.
func clampInt32(n int64) int32 {
	return int32(max(min(n, math.MaxInt32), math.MinInt32))
}
