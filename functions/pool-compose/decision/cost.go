package decision

import (
	capv1alpha1 "github.com/burstpool/burstpool/apis/capacity/v1alpha1"
	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
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
