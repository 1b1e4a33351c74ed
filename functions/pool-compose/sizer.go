package main

import (
	"math"
	"strings"

	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
	"github.com/burstpool/burstpool/internal/sizing"
)

// catalogSizer sizes pools with internal/sizing, from the cloud's catalog
// plus the input's overrides. Pools on a kwok cluster are sized from
// kwokCatalog when it is set: the catalog whose types that cluster's
// Karpenter kwok provider offers (for example aws, so a pool naming
// r7gd.16xlarge gets r7gd.16xlarge nodes), with that cloud's allocatable,
// which the simulated nodes offer (sizing.KWOKInstanceTypesJSON).
func catalogSizer(overrides []v1beta1.InstanceType, kwokCatalog sizing.Cloud) func(SizeInput) (SizeResult, error) {
	extra := make([]sizing.InstanceType, 0, len(overrides))
	for _, o := range overrides {
		cpu, err1 := resource.ParseQuantity(o.CPU)
		mem, err2 := resource.ParseQuantity(o.Memory)
		if err1 != nil || err2 != nil {
			// WithOverrides skips entries it cannot size; so does this.
			continue
		}
		extra = append(extra, sizing.InstanceType{Name: o.Name, CPU: cpu, Memory: mem, Arch: o.Arch, LocalNVMeGiB: o.LocalNVMeGiB})
	}
	return func(in SizeInput) (SizeResult, error) {
		from := sizing.Cloud(in.Cloud)
		if from == sizing.CloudKWOK && kwokCatalog != "" {
			from = kwokCatalog
			in.Cloud = string(from)
		}
		cat, err := sizing.LoadCatalog(from)
		if err != nil {
			return SizeResult{}, errors.Wrapf(err, "cannot load the instance catalog of cloud %q", from)
		}
		if len(extra) > 0 {
			cat = cat.WithOverrides(extra)
		}
		if in.Method == methodEKSAutoMode {
			for _, p := range []struct{ field, name string }{{"spec.instanceConfig.instanceType", in.InstanceType}, {"the type inherited from " + in.InheritQueryService, in.InheritInstanceType}} {
				if it, ok := cat.Lookup(p.name); ok && autoModeRefuses(it) != "" {
					return SizeResult{}, errors.Errorf("%s: EKS Auto Mode never launches %s: %s; choose a type with more than 1 vCPU", p.field, p.name, autoModeRefuses(it))
				}
			}
			cat = cat.Only(func(it sizing.InstanceType) bool { return autoModeRefuses(it) == "" })
		}
		if fams := in.InstanceFamilies; len(fams) > 0 {
			cat = cat.Only(func(t sizing.InstanceType) bool { return allowedType(fams, t.Name, t.Family) })
			if len(cat.Types) == 0 {
				return SizeResult{}, errors.Errorf("the settings' tenancy.instanceFamilies (%s) allow no instance type of the %s catalog", strings.Join(fams, ", "), from)
			}
		}
		return derive(cat, in)
	}
}

// derive runs sizing.Derive on cat and converts its result.
func derive(cat *sizing.Catalog, in SizeInput) (SizeResult, error) {
	sin := sizing.Input{
		Cloud: sizing.Cloud(in.Cloud), Catalog: cat,
		InstanceType: in.InstanceType, InstanceFamily: in.InstanceFamily,
		AutoUpgrade: in.AutoUpgrade, Spot: in.Spot,
		ExecutorsPerNode: in.ExecutorsPerNode,
		Previous:         in.Previous, ExecutorsHaveRun: in.ExecutorsHaveRun,
		Arch: in.Arch, MaxSpotTypes: maxSpotTypes,
		SpotNeighbours: in.SpotNeighbours, AllowMetal: in.AllowMetal,
	}
	if in.InheritQueryService != "" {
		sin.Inherit = &sizing.Inherited{QueryService: in.InheritQueryService, InstanceType: in.InheritInstanceType}
	}
	for _, e := range in.Executors {
		sin.Executors = append(sin.Executors, sizing.Executor{QueryService: e.QueryService, CPU: e.CPU, Memory: e.Memory})
	}
	for _, p := range in.Overhead {
		sin.Overhead.DaemonSets = append(sin.Overhead.DaemonSets, sizing.PodRequests{Init: sizingResources(p.Init), Containers: sizingResources(p.Containers)})
	}
	res, err := sizing.Derive(sin)
	if err != nil {
		return SizeResult{}, err
	}
	out := SizeResult{
		InstanceType: res.InstanceType, SpotTypes: res.SpotTypes, DerivedFrom: res.DerivedFrom, Arch: res.Arch,
		Allocatable: Resources{CPU: res.Allocatable.CPU, Memory: res.Allocatable.Memory},
		Upgraded:    res.Upgraded, Kept: res.Kept, PerNode: clampInt32(res.PerNode),
	}
	for _, o := range res.Offered {
		out.Offered = append(out.Offered, OfferedType{Name: o.Name, PerNode: clampInt32(o.PerNode), Reason: o.Reason})
	}
	out.Capacity = Resources{CPU: res.LargestOffered.CPU, Memory: res.LargestOffered.Memory}
	out.Kubelet, out.LocalNVMe = res.Kubelet, res.LocalNVMe
	for _, c := range res.Compatibility {
		out.Compatibility = append(out.Compatibility, Compatibility{
			QueryService: c.QueryService, Compatible: c.Compatible,
			RequiredCPU: c.RequiredCPU.String(), RequiredMemory: c.RequiredMemory.String(),
			InstanceType: c.InstanceType, Message: c.Message,
		})
	}
	return out, nil
}

// sizingResources converts resource amounts.
func sizingResources(rs []Resources) []sizing.Resources {
	out := make([]sizing.Resources, 0, len(rs))
	for _, r := range rs {
		out = append(out, sizing.Resources{CPU: r.CPU, Memory: r.Memory})
	}
	return out
}

// clampInt32 narrows a count to int32, saturating.
func clampInt32(n int64) int32 {
	return int32(max(min(n, math.MaxInt32), math.MinInt32))
}
