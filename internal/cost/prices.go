package cost

import (
	"strconv"

	"github.com/pkg/errors"

	"github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	"github.com/burstpool/burstpool/internal/sizing"
)

// Label keys a node's price is read from.
const (
	// LabelInstanceType is the well-known label of a node's instance type.
	LabelInstanceType = "node.kubernetes.io/instance-type"
	// LabelCapacityType is Karpenter's label of how a node is bought.
	LabelCapacityType = "karpenter.sh/capacity-type"
	// OnDemand is the capacity type of nodes without LabelCapacityType.
	OnDemand = "on-demand"
)

// Prices prices pool nodes from a Pricing. Its methods are pure.
type Prices struct {
	catalogs  []*sizing.Catalog
	discounts map[string]float64
	table     map[typeKey]float64
}

// NewPrices returns the prices p sets; a nil p prices every node at the
// on-demand price of the first embedded catalog that lists its type. An
// unknown catalog or a number that does not parse is an error.
func NewPrices(p *v1alpha1.Pricing) (Prices, error) {
	var out Prices
	if p == nil {
		p = &v1alpha1.Pricing{}
	}
	clouds := sizing.Clouds()
	if p.Catalog != "" {
		clouds = []sizing.Cloud{sizing.Cloud(p.Catalog)}
	}
	for _, c := range clouds {
		cat, err := sizing.SharedCatalog(c)
		if err != nil {
			return Prices{}, errors.Wrap(err, "cannot load the pricing catalog")
		}
		out.catalogs = append(out.catalogs, cat)
	}
	out.discounts = make(map[string]float64, len(p.Discounts))
	for _, d := range p.Discounts {
		f, err := strconv.ParseFloat(d.Discount, 64)
		if err != nil || f < 0 || f > 1 {
			return Prices{}, errors.Errorf("pricing: discount %q of capacity type %q is not a decimal from 0 to 1", d.Discount, d.CapacityType)
		}
		out.discounts[d.CapacityType] = f
	}
	out.table = make(map[typeKey]float64, len(p.Prices))
	for _, ip := range p.Prices {
		f, err := strconv.ParseFloat(ip.PerHour, 64)
		if err != nil || f < 0 {
			return Prices{}, errors.Errorf("pricing: price %q of instance type %q is not a non-negative decimal", ip.PerHour, ip.InstanceType)
		}
		out.table[typeKey{ip.InstanceType, ip.CapacityType}] = f
	}
	return out, nil
}

// PerHour returns the hourly price of one node of the instance type and
// capacity type: the price table's for both, else its for the type, else
// the catalog's on-demand price less the capacity type's discount. ok is
// false when no price is known.
func (p Prices) PerHour(instanceType, capacityType string) (price float64, ok bool) {
	if f, ok := p.table[typeKey{instanceType, capacityType}]; ok {
		return f, true
	}
	if f, ok := p.table[typeKey{instanceType, ""}]; ok {
		return f, true
	}
	for _, cat := range p.catalogs {
		if it, ok := cat.Lookup(instanceType); ok {
			return it.PricePerHour * (1 - p.discounts[capacityType]), true
		}
	}
	return 0, false
}
