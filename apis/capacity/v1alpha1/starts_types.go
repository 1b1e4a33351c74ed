package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Placement says whether an executor started on a node that was there
// before it.
// +kubebuilder:validation:Enum=ExistingNode;NewNode
type Placement string

// Placements.
const (
	// PlacementExistingNode is a node created before the executor: a warm
	// slot, or room left on a node of an earlier burst.
	PlacementExistingNode Placement = "ExistingNode"
	// PlacementNewNode is a node created after the executor: launched
	// for it (or for its burst), so the executor waited for it.
	PlacementNewNode Placement = "NewNode"
)

// ExecutorStarts counts the pool's executors by how long they took from
// creation (metadata.creationTimestamp) to running (the latest
// state.running.startedAt of their containers), as a histogram per
// placement. Each executor is counted once, by the status write that
// moves countedUntil past the moment it ran.
type ExecutorStarts struct {
	// CountedUntil is the watermark: executors that ran before it are
	// counted, those that ran after it are not yet.
	CountedUntil metav1.Time `json:"countedUntil"`
	// Since is when counting began.
	Since metav1.Time `json:"since"`
	// ByPlacement holds one histogram per placement.
	// +kubebuilder:validation:MaxItems=2
	// +listType=atomic
	// +optional
	ByPlacement []PlacementStarts `json:"byPlacement,omitempty"`
}

// PlacementStarts is the histogram of the start times of executors of
// one placement.
type PlacementStarts struct {
	Placement Placement `json:"placement"`
	// Count is how many executors were counted.
	Count int64 `json:"count"`
	// SumSeconds is the sum of their start times (a decimal).
	SumSeconds string `json:"sumSeconds"`
	// Buckets count the executors that started within each bound,
	// cumulatively (as Prometheus histograms do); Count is the rest's
	// bound, +Inf.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Buckets []StartBucket `json:"buckets,omitempty"`
	// P50Seconds is the median start time estimated from the buckets,
	// by linear interpolation within the median's bucket (as
	// Prometheus's histogram_quantile estimates it).
	P50Seconds string `json:"p50Seconds"`
}

// StartBucket counts the executors that started within UpToSeconds.
type StartBucket struct {
	// UpToSeconds is the bucket's upper bound, in seconds (a decimal).
	UpToSeconds string `json:"upToSeconds"`
	// Count is how many executors started within it.
	Count int64 `json:"count"`
}
