package main

import (
	"time"

	"google.golang.org/protobuf/types/known/structpb"

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

// costValue encodes status.cost as statusValue writes the status.
func costValue(c *poolv1alpha1.PoolCost) *structpb.Value {
	o := fields{}
	o.set("dollarsPerHour", structpb.NewStringValue(c.DollarsPerHour))
	o.set("warmDollarsPerHour", structpb.NewStringValue(c.WarmDollarsPerHour))
	o.set("wasteDollarsPerHour", structpb.NewStringValue(c.WasteDollarsPerHour))
	o.set("dollars", structpb.NewStringValue(c.Dollars))
	o.set("warmDollars", structpb.NewStringValue(c.WarmDollars))
	o.set("wasteDollars", structpb.NewStringValue(c.WasteDollars))
	o.set("since", structpb.NewStringValue(c.Since.UTC().Format(time.RFC3339)))
	setList(o, "queryServices", c.QueryServices, func(q poolv1alpha1.QueryServiceCost) *structpb.Value {
		qo := fields{}
		qo.set("queryService", queryServiceValue(q.QueryService))
		qo.set("dollarsPerHour", structpb.NewStringValue(q.DollarsPerHour))
		qo.set("dollars", structpb.NewStringValue(q.Dollars))
		return qo.value()
	})
	setList(o, "executorStarts", c.ExecutorStarts, func(e poolv1alpha1.ExecutorStartSummary) *structpb.Value {
		eo := fields{}
		eo.set("placement", structpb.NewStringValue(e.Placement))
		eo.set("executors", structpb.NewNumberValue(float64(e.Executors)))
		eo.set("p50Seconds", structpb.NewStringValue(e.P50Seconds))
		return eo.value()
	})
	return o.value()
}
