package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/burstpool/burstpool/internal/sizing"
)

// EKS Auto Mode accepts less than the karpenter.sh and EC2 APIs do; these
// are its rules that no CRD carries (AWS, "Create a Node Pool for EKS Auto
// Mode" and "Learn about Amazon EKS Auto Mode Managed instances").
const (
	// autoModeLifetime is the longest an Auto Mode node lives: a NodePool's
	// expireAfter plus its terminationGracePeriod may not exceed 21 days.
	autoModeLifetime = 21 * 24 * time.Hour
	// autoModeTerminationGrace is the terminationGracePeriod Auto Mode
	// defaults a NodePool to; pools set karpenter.terminationGracePeriod,
	// and this when it is Never or leaves less than half the lifetime.
	autoModeTerminationGrace = 24 * time.Hour
)

// autoModeLifespan is the expireAfter and terminationGracePeriod of an
// Auto Mode NodePool: the settings, with the grace period at most half
// autoModeLifetime (autoModeTerminationGrace otherwise) and expireAfter
// shortened so both fit autoModeLifetime (Never always is).
func autoModeLifespan(expireAfter, grace string) (expire, terminationGrace string) {
	g, err := time.ParseDuration(grace)
	if err != nil || g <= 0 || g > autoModeLifetime/2 {
		g = autoModeTerminationGrace
	}
	longest := autoModeLifetime - g
	d, err := time.ParseDuration(expireAfter)
	if expireAfter == "" || err != nil || d > longest {
		return durationString(longest), durationString(g)
	}
	return expireAfter, durationString(g)
}

// durationString writes d as Karpenter's durations are written (480h).
func durationString(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}

// autoModeRefuses says why EKS Auto Mode never launches it, "" when it
// does: Auto Mode launches only types with more than 1 vCPU, and no nano,
// micro or small size.
func autoModeRefuses(it sizing.InstanceType) string {
	size := it.Size
	if i := strings.LastIndex(it.Name, "."); i >= 0 {
		size = it.Name[i+1:]
	}
	switch {
	case it.CPU.CmpInt64(1) <= 0:
		return fmt.Sprintf("it has %s vCPU and EKS Auto Mode launches only types with more than 1", it.CPU.String())
	case size == "nano" || size == "micro" || size == "small":
		return fmt.Sprintf("EKS Auto Mode launches no %s size", size)
	}
	return ""
}
