package sizing

import (
	"encoding/json"

	"github.com/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// KWOKZones are the zones every type of the kwok catalog is offered in by
// KWOKInstanceTypesJSON, the zones of the kwok provider's own catalog.
var KWOKZones = []string{"test-zone-a", "test-zone-b", "test-zone-c", "test-zone-d"}

// regionZones is how many zones of its region a cloud catalog's types are
// offered in when rendered for the kwok provider.
const regionZones = 3

// KWOKZonesOf are the zones KWOKInstanceTypesJSON offers c's types in: the
// kwok catalog's own zones, or the first zones of a cloud catalog's region
// (us-east-1a, us-east-1b, us-east-1c for AWS), so a kwok cluster that
// simulates that cloud labels its nodes with the cloud's zone names.
func KWOKZonesOf(c *Catalog) []string {
	if c.Cloud == CloudKWOK || c.Region == "" {
		return KWOKZones
	}
	zones := make([]string, 0, regionZones)
	for i := range regionZones {
		zones = append(zones, c.Region+string(rune('a'+i)))
	}
	return zones
}

// KWOKSpotDiscount is the share of the on-demand price a spot offering
// costs in KWOKInstanceTypesJSON.
const KWOKSpotDiscount = 0.7

// Label keys of Karpenter offerings.
const (
	labelCapacityType = "karpenter.sh/capacity-type"
	capacityOnDemand  = "on-demand"
	capacitySpot      = "spot"
)

// kwokInstanceType is one entry of the file Karpenter's kwok provider reads
// from INSTANCE_TYPES_FILE_PATH (its InstanceTypeOptions).
type kwokInstanceType struct {
	Name             string              `json:"name"`
	Offerings        []kwokOffering      `json:"offerings"`
	Architecture     string              `json:"architecture"`
	OperatingSystems []corev1.OSName     `json:"operatingSystems"`
	Resources        corev1.ResourceList `json:"resources"`
}

// kwokOffering is the provider's offering: its Price and Available fields
// carry no JSON tags upstream, so they are written capitalized, and
// Requirements are node selector requirements on capacity type and zone.
type kwokOffering struct {
	Price        float64                          `json:"Price"`
	Available    bool                             `json:"Available"`
	Requirements []corev1.NodeSelectorRequirement `json:"Requirements"`
}

// kwokResources are the CPU, memory and pods a type of cloud c is offered
// with to the kwok provider: see KWOKInstanceTypesJSON.
func kwokResources(c Cloud, t *InstanceType) (cpu, mem resource.Quantity, pods int64) {
	if c == CloudKWOK {
		return t.CPU, t.Memory, MaxPods
	}
	kwok := modelFor(CloudKWOK)
	aCPU, aMem := allocatable(c, t, 0, 0, DefaultVMMemoryOverheadPercent(c))
	return *resource.NewMilliQuantity(aCPU+kwok.reservedCPU(aCPU), resource.DecimalSI),
		*resource.NewQuantity(aMem+kwok.reservedMemory(aMem, 0), resource.BinarySI), maxPods(c, t)
}

// KWOKInstanceTypesJSON renders a catalog as the instance types file of
// Karpenter's kwok provider (the INSTANCE_TYPES_FILE_PATH it reads), so a
// kwok cluster simulates exactly the types burstpool chooses from, under
// their real names when c is a cloud's catalog (the provider reads AWS
// names such as r7gd.16xlarge as family r7gd, size 16xlarge). Every type is
// offered, linux only, in each of KWOKZonesOf(c) as on-demand at its
// catalog price and as spot at KWOKSpotDiscount of it (the catalogs hold
// no spot prices). Resources are the type's CPU, memory and pods, and its
// local NVMe as ephemeral-storage (20Gi when it has none). The output is
// indented and deterministic.
//
// The kwok provider gives a node its type's resources less a fixed 100m and
// 10Mi (kwok/cloudprovider/helpers.go), not what the cloud's provider
// reserves. So that a simulated node offers exactly what the cloud's would,
// a cloud catalog's type is rendered with the allocatable Karpenter's
// provider of that cloud predicts (NodeAllocatable, the pods its network
// holds) plus the kwok provider's 100m and 10Mi; the kwok catalog's own
// types keep their nominal CPU and memory and MaxPods pods.
func KWOKInstanceTypesJSON(c *Catalog) ([]byte, error) {
	if c == nil {
		return nil, errors.New("cannot render kwok instance types: no catalog")
	}
	out := make([]kwokInstanceType, 0, len(c.Types))
	zones := KWOKZonesOf(c)
	for _, t := range c.Types {
		storage := resource.MustParse("20Gi")
		if t.LocalNVMeGiB > 0 {
			storage = *resource.NewQuantity(t.LocalNVMeGiB*gibibyte, resource.BinarySI)
		}
		cpu, mem, pods := kwokResources(c.Cloud, &t)
		it := kwokInstanceType{
			Name:             t.Name,
			Architecture:     t.Arch,
			OperatingSystems: []corev1.OSName{corev1.Linux},
			Resources: corev1.ResourceList{
				corev1.ResourceCPU:              cpu,
				corev1.ResourceMemory:           mem,
				corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
				corev1.ResourceEphemeralStorage: storage,
			},
		}
		for _, z := range zones {
			for _, ct := range []string{capacitySpot, capacityOnDemand} {
				price := t.PricePerHour
				if ct == capacitySpot {
					price *= KWOKSpotDiscount
				}
				it.Offerings = append(it.Offerings, kwokOffering{
					Price:     price,
					Available: true,
					Requirements: []corev1.NodeSelectorRequirement{
						{Key: labelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{ct}},
						{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{z}},
					},
				})
			}
		}
		out = append(out, it)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, errors.Wrapf(err, "cannot render kwok instance types of the %s catalog", c.Cloud)
	}
	return append(b, '\n'), nil
}
