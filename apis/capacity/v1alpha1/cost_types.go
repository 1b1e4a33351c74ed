package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Pricing says what a pool node costs per hour. Without it, on-demand
// prices come from the embedded instance catalogs (the first cloud whose
// catalog lists the node's instance type) and spot nodes are priced as
// on-demand ones.
type Pricing struct {
	// Catalog is the cloud whose embedded catalog gives on-demand prices:
	// aws, azure, coreweave, digitalocean, gcp, kwok or linode.
	// +optional
	Catalog string `json:"catalog,omitempty"`

	// Discounts take a share off the catalog's on-demand price, per
	// capacity type (the karpenter.sh/capacity-type label: on-demand,
	// spot, reserved): a spot discount of "0.65" prices spot nodes at 35%
	// of on-demand.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=capacityType
	// +optional
	Discounts []CapacityTypeDiscount `json:"discounts,omitempty"`

	// Prices set the hourly price of an instance type, for one capacity
	// type or (capacityType empty) for all; they win over the catalog and
	// the discounts.
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Prices []InstancePrice `json:"prices,omitempty"`
}

// CapacityTypeDiscount is the share taken off on-demand prices for one
// capacity type.
type CapacityTypeDiscount struct {
	// CapacityType is a value of the karpenter.sh/capacity-type label.
	// +kubebuilder:validation:MinLength=1
	CapacityType string `json:"capacityType"`
	// Discount is a decimal from 0 to 1.
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{1,6})?|1(\.0{1,6})?)$`
	Discount string `json:"discount"`
}

// InstancePrice is the hourly price of an instance type.
type InstancePrice struct {
	// InstanceType is a value of the node.kubernetes.io/instance-type label.
	// +kubebuilder:validation:MinLength=1
	InstanceType string `json:"instanceType"`
	// CapacityType is a value of the karpenter.sh/capacity-type label;
	// empty applies to every capacity type.
	// +optional
	CapacityType string `json:"capacityType,omitempty"`
	// PerHour is the price in US dollars per hour, a decimal.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,6}(\.[0-9]{1,8})?$`
	PerHour string `json:"perHour"`
}

// CostPart says what a share of the pool's node time went to.
// +kubebuilder:validation:Enum=QueryService;Warm;Waste
type CostPart string

// Cost parts.
const (
	// CostQueryService is the share of nodes a QueryService's executors
	// requested while they ran there.
	CostQueryService CostPart = "QueryService"
	// CostWarm is node time kept idle on purpose: what placeholder pods
	// request, and the unrequested rest of nodes that hold executors or
	// placeholders (free slots ready for a burst).
	CostWarm CostPart = "Warm"
	// CostWaste is node time of nodes that hold neither executors nor
	// placeholders: empty nodes awaiting consolidation, or launching.
	CostWaste CostPart = "Waste"
)

// CostObservation is what the pool's nodes cost, counted by the provider.
// Node time up to accountedUntil is in the totals; the rates, taken from
// the last observation, price the time after it. Numbers are decimals in
// strings: the totals round-trip exactly through status.
type CostObservation struct {
	// AccountedUntil is the watermark: node time before it is in the
	// totals, node time after it is not.
	AccountedUntil metav1.Time `json:"accountedUntil"`
	// Since is when counting began.
	Since metav1.Time `json:"since"`
	// DollarsPerHour is what the pool's nodes cost now.
	DollarsPerHour string `json:"dollarsPerHour"`
	// Dollars is what the pool's nodes cost since counting began.
	Dollars string `json:"dollars"`
	// NodeSeconds counts the pool's node time since counting began.
	NodeSeconds string `json:"nodeSeconds"`
	// UnaccountedSeconds is time the provider did not observe the pool for
	// longer than it prices from its last observation (a gap above 15
	// minutes, such as a provider down): no node time of it is counted.
	// +optional
	UnaccountedSeconds int64 `json:"unaccountedSeconds,omitempty"`
	// ByNodeType splits the pool by instance type and capacity type.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	ByNodeType []NodeTypeCost `json:"byNodeType,omitempty"`
	// ByUse splits the pool between the QueryServices whose executors ran
	// on it, warm slots and waste. Beyond 1,000 lines, QueryServices are
	// folded (those that hold nothing now first, smallest first) into one
	// line of part QueryService with no name.
	// +kubebuilder:validation:MaxItems=1002
	// +optional
	ByUse []UseCost `json:"byUse,omitempty"`
}

// CostFigures are a rate and the total it adds up to.
type CostFigures struct {
	// Nodes is how many nodes' worth this holds now (a decimal).
	Nodes string `json:"nodes"`
	// DollarsPerHour is what it costs now.
	DollarsPerHour string `json:"dollarsPerHour"`
	// NodeSeconds counts its node time since counting began.
	NodeSeconds string `json:"nodeSeconds"`
	// Dollars is what it cost since counting began.
	Dollars string `json:"dollars"`
}

// NodeTypeCost is the cost of the pool's nodes of one instance type and
// capacity type.
type NodeTypeCost struct {
	// InstanceType is the nodes' node.kubernetes.io/instance-type label,
	// empty when they carry none.
	// +optional
	InstanceType string `json:"instanceType,omitempty"`
	// CapacityType is the nodes' karpenter.sh/capacity-type label,
	// on-demand when they carry none.
	CapacityType string `json:"capacityType"`
	// PricePerHour is the price of one such node, empty when none is
	// known (their node time is counted, priced at zero).
	// +optional
	PricePerHour string `json:"pricePerHour,omitempty"`
	CostFigures  `json:",inline"`
}

// UseCost is the cost of one use of the pool.
type UseCost struct {
	// Part is what the node time went to.
	Part CostPart `json:"part"`
	// QueryService whose executors requested it, for part QueryService.
	// +optional
	QueryService string `json:"queryService,omitempty"`
	// Namespace of the QueryService.
	// +optional
	Namespace   string `json:"namespace,omitempty"`
	CostFigures `json:",inline"`
}
