package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WarmPolicy asks the provider for a learned warm level: set when the
// pool's spec.warmPolicy.type is Learned. The provider records every
// pool's demand history (status.atProvider.demand) whatever its policy;
// it publishes status.atProvider.warmRecommendation only when this asks.
type WarmPolicy struct {
	// Learned is the goal of the learned warm level.
	// +optional
	Learned *LearnedGoal `json:"learned,omitempty"`
}

// LearnedGoal is what a learned warm level must achieve, and within what.
type LearnedGoal struct {
	// TargetWarmPercent is the share of executors, in percent, to start
	// on a node that was there before them.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetWarmPercent int32 `json:"targetWarmPercent"`

	// Lead is how far ahead of the demand history's bursts the level
	// rises: at least the time a new node takes to run an executor.
	Lead metav1.Duration `json:"lead"`

	// MaxSlots caps the learned level in warm slots (0: no cap beside
	// the pool's maxExecutors).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxSlots int32 `json:"maxSlots,omitempty"`

	// MaxDollarsPerHour caps what the learned warm slots cost per hour,
	// as a decimal (empty: no cap). A slot costs its node's price
	// (forProvider.pricing) divided by executorsPerNode.
	// +kubebuilder:validation:Pattern=`^[0-9]{1,9}(\.[0-9]{1,6})?$`
	// +optional
	MaxDollarsPerHour string `json:"maxDollarsPerHour,omitempty"`
}

// DemandHistory is a pool's demand by time of week (package
// internal/warmpolicy), kept in status so that it survives a restart of
// the provider.
type DemandHistory struct {
	// Encoded is the history in warmpolicy's compact form. The provider
	// writes at most warmpolicy.MaxEncodedBytes (8 KiB) and replaces a
	// longer one as unreadable; the schema bounds what any writer may
	// store.
	// +kubebuilder:validation:MaxLength=16384
	Encoded string `json:"encoded"`

	// Since is when the history began.
	Since metav1.Time `json:"since"`

	// Weeks is how many weeks of history it holds.
	// +optional
	Weeks int32 `json:"weeks,omitempty"`
}

// WarmRecommendation is a learned warm level, published for the
// pool-compose function to apply.
type WarmRecommendation struct {
	// Executors is the warm level to hold now.
	Executors int32 `json:"executors"`

	// Until is when the recommendation is next revised.
	Until metav1.Time `json:"until"`

	// Reason says in a sentence what the history says, the target, and
	// which cap bound the level.
	Reason string `json:"reason"`

	// ExpectedWarmPercent is the share of executors, in percent, the
	// history says start on an existing node at this level.
	// +optional
	ExpectedWarmPercent int32 `json:"expectedWarmPercent,omitempty"`

	// DollarsPerHour is what the recommended warm slots cost per hour.
	// +optional
	DollarsPerHour string `json:"dollarsPerHour,omitempty"`

	// Capped names the cap that bound the level: maxSlots,
	// maxDollarsPerHour or maxExecutors; empty when none did.
	// +optional
	Capped string `json:"capped,omitempty"`

	// Weeks is how many weeks of history the recommendation rests on.
	// +optional
	Weeks int32 `json:"weeks,omitempty"`
}
