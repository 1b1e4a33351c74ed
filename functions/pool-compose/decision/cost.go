package decision

import (
	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/internal/cost"
	"github.com/burstpool/burstpool/internal/sizing"
)

// cost turns the PoolCapacity's cost into the Pool's status.cost: the
// hourly rate and total of the pool, of its warm slots and waste, and of every
// attached QueryService (zero for one whose executors hold no node now)
// and any other the PoolCapacity charged, and the median start of its
// executors on existing and new nodes (what the warm slots buy). nil until
// the PoolCapacity counts cost.
func (o *CapacityObservation) cost() *poolv1alpha1.PoolCost {
	if o == nil || o.Cost == nil {
		return nil
	}
	c := o.Cost
	out := &poolv1alpha1.PoolCost{DollarsPerHour: c.DollarsPerHour, Dollars: c.Dollars, Since: c.Since,
		WarmDollarsPerHour: "0", WasteDollarsPerHour: "0", WarmDollars: "0", WasteDollars: "0"}
	type key struct{ ns, name string }
	at := map[key]int{}
	add := func(k key) int {
		if i, ok := at[k]; ok {
			return i
		}
		at[k] = len(out.QueryServices)
		out.QueryServices = append(out.QueryServices, poolv1alpha1.QueryServiceCost{
			QueryService: poolv1alpha1.QueryServiceReference{Name: k.name, Namespace: k.ns}, DollarsPerHour: "0", Dollars: "0"})
		return at[k]
	}
	for _, a := range o.Allocations {
		add(key{a.Namespace, a.QueryService})
	}
	for _, u := range c.ByUse {
		switch u.Part {
		case capv1alpha1.CostWarm:
			out.WarmDollarsPerHour, out.WarmDollars = u.DollarsPerHour, u.Dollars
		case capv1alpha1.CostWaste:
			out.WasteDollarsPerHour, out.WasteDollars = u.DollarsPerHour, u.Dollars
		case capv1alpha1.CostQueryService:
			q := &out.QueryServices[add(key{u.Namespace, u.QueryService})]
			q.DollarsPerHour, q.Dollars = u.DollarsPerHour, u.Dollars
		}
	}
	if st := o.ExecutorStarts; st != nil {
		for _, p := range st.ByPlacement {
			out.ExecutorStarts = append(out.ExecutorStarts, poolv1alpha1.ExecutorStartSummary{
				Placement: string(p.Placement), Executors: p.Count, P50Seconds: p.P50Seconds})
		}
	}
	return out
}

// slotDollarsPerHour is what one of the pool's warm slots costs per hour,
// for status.warmPolicy: as the capacity provider prices a slot for a
// learned level's cap (cost.SlotPrice: the highest hourly price of the
// node types the PoolCapacity has priced, over executorsPerNode), so the
// status and the cap agree; before any node is priced, the sized instance
// type's price as the provider would price it (from the settings'
// capacity.pricing; spot for a spot pool) over executorsPerNode. 0 when
// neither is known, or when the pool sets no warm policy (nothing shows
// it).
func slotDollarsPerHour(in Input, f Facts, size *sizing.Result) float64 {
	if in.Spec.WarmPolicy == nil {
		return 0
	}
	if c := f.Capacity; c != nil {
		if p, ok := cost.SlotPrice(capacityArgs(in, f, nil).Parameters(), c.Cost); ok {
			return p
		}
	}
	if size == nil || size.InstanceType == "" {
		return 0
	}
	prices, err := cost.NewPrices(in.Config.Capacity.Pricing)
	if err != nil {
		return 0
	}
	capacityType := cost.OnDemand
	if ic := in.Spec.InstanceConfig; ic != nil && ic.SpotEnabled {
		capacityType = "spot"
	}
	price, ok := prices.PerHour(size.InstanceType, capacityType)
	if !ok {
		return 0
	}
	return price / float64(f.PerNode)
}
