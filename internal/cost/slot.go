package cost

import "github.com/burstpool/burstpool/apis/capacity/v1alpha1"

// SlotPrice is what one warm slot of the pool spec describes costs per
// hour, from its cost observation o: the highest hourly price of the node
// types o has priced since counting began (a line of byNodeType keeps its
// price after its nodes are gone), divided by executorsPerNode. The
// highest, not the current mix, so that a cap in dollars holds whichever
// of the pool's node types the warm slots land on, and so that the price
// does not move with every node a burst adds. ok is false while no node of
// the pool was priced.
func SlotPrice(spec v1alpha1.PoolCapacityParameters, o *v1alpha1.CostObservation) (perHour float64, ok bool) {
	if o == nil || spec.ExecutorsPerNode <= 0 {
		return 0, false
	}
	for _, t := range o.ByNodeType {
		if t.PricePerHour == "" {
			continue
		}
		if p := number(t.PricePerHour); !ok || p > perHour {
			perHour, ok = p, true
		}
	}
	return perHour / float64(spec.ExecutorsPerNode), ok
}
