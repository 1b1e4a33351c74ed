// Package burst is test harness for the burst-latency benchmark (make
// bench-burst): a simulated cloud in which a new node takes a launch time
// before it is Ready and a pod waits for its images to be pulled onto its
// node before it runs, and the figures the benchmark reports.
//
// kwok plays the kubelet: its stages (kwok.x-k8s.io/v1alpha1 Stage) make a
// node Ready and a pod Running. Here they are kwok's own default stages with
// one change each: a node becomes Ready, and a pod Running, only once it
// carries AnnotationStartAt, and not before the time it names (kwok's
// delay.durationFrom accepts an RFC 3339 time). The benchmark's image model
// writes that annotation: a node's launch time after it appears, and for a
// pod the time its images are on its node (Cloud.Start).
package burst

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// AnnotationStartAt is the RFC 3339 time at which kwok makes the node Ready
// or the pod Running.
const AnnotationStartAt = "bench.burstpool.io/start-at"

// The simulated cloud's figures: the defaults of make bench-burst's flags,
// and the figures of make bench-warm's replayed week.
const (
	// DefaultLaunch is a node's launch, registration to Ready. Node
	// start-up on EKS: 45-65 s from instance launch to Ready, as measured
	// across about 1,000 nodes (KubeFM, "Faster EKS Node and Pod
	// Startup", 2026); Karpenter's own docs promise capacity "in under a
	// minute".
	DefaultLaunch = 45 * time.Second
	// DefaultPullMiBPerSecond is the image pull throughput: gp3, the EBS
	// default for EKS node volumes, has a baseline throughput of 125
	// MiB/s, which bounds pulling plus unpacking an image.
	DefaultPullMiBPerSecond = 125
	// DefaultExecutorImageMiB is the modelled size of the executor image,
	// an assumption; other images are DefaultOtherImageMiB.
	DefaultExecutorImageMiB = 3072
	DefaultOtherImageMiB    = 50
	// MeasuredWarmStart is what make bench-burst measured from an
	// executor's creation to Running on a warm slot of a pool whose
	// images are warm: p50 0.7 s ("pool, warm slots and images", the
	// table in README.md).
	MeasuredWarmStart = 700 * time.Millisecond
)

// Cloud is what the simulated cloud costs in time.
type Cloud struct {
	// Launch is the time from a node's registration until it is Ready.
	Launch time.Duration
	// Throughput is how fast a node pulls and unpacks an image, in bytes
	// per second.
	Throughput int64
	// ImageSizes are the sizes of known images, in bytes; other images
	// have DefaultImageSize.
	ImageSizes       map[string]int64
	DefaultImageSize int64
}

// Pull is the time it takes a node to pull image.
func (c Cloud) Pull(image string) time.Duration {
	size, ok := c.ImageSizes[image]
	if !ok {
		size = c.DefaultImageSize
	}
	if c.Throughput <= 0 {
		return 0
	}
	return time.Duration(float64(size) / float64(c.Throughput) * float64(time.Second))
}

// Node is what the simulated kubelet of one node knows: when the node is
// Ready and when each image is, or will be, on it.
type Node struct {
	Ready  time.Time
	Images map[string]time.Time
}

// NewNode is a node that appeared at seen and has no images.
func (c Cloud) NewNode(seen time.Time) *Node {
	return &Node{Ready: seen.Add(c.Launch), Images: map[string]time.Time{}}
}

// Start returns when a pod bound to n at now with images starts, and
// records on n the pulls it begins. A pull begins once both the pod is
// bound and the node is Ready; an image already on the node, or being
// pulled for another pod, is not pulled again (the container runtime
// shares one pull); pulls of different images run in parallel, each at
// the full throughput (kubelet's serializeImagePulls=false).
func (c Cloud) Start(n *Node, now time.Time, images []string) time.Time {
	begin := now
	if n.Ready.After(begin) {
		begin = n.Ready
	}
	start := begin
	for _, img := range images {
		at, ok := n.Images[img]
		if !ok {
			at = begin.Add(c.Pull(img))
			n.Images[img] = at
		}
		if at.After(start) {
			start = at
		}
	}
	return start
}

// String names the modelled figures, for the benchmark's output.
func (c Cloud) String() string {
	s := fmt.Sprintf("node launch %s (registration to Ready); image pull at %d MiB/s", c.Launch, c.Throughput>>20)
	for _, img := range slices.Sorted(maps.Keys(c.ImageSizes)) {
		s += fmt.Sprintf("; %s: %d MiB, %s to pull", img, c.ImageSizes[img]>>20, c.Pull(img).Round(100*time.Millisecond))
	}
	return s + fmt.Sprintf("; other images: %d MiB, %s", c.DefaultImageSize>>20, c.Pull("").Round(100*time.Millisecond))
}
