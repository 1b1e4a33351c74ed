package warmup

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
)

// maxNamedSources is how many QueryServices SourceText names before it only
// counts the rest.
const maxNamedSources = 3

// SourceText describes an image's sources for a person, deterministically:
// "cachedImages", "QueryServices a/q, b/r", or both joined by "; ". At most
// three QueryServices are named and the rest counted. An image that left the
// warm set has no sources and gives "".
func SourceText(sources []Source) string {
	var parts []string
	var qs []string
	for _, s := range sources {
		switch s.Kind {
		case SourceCachedImages:
			parts = append(parts, "cachedImages")
		case SourceQueryService:
			qs = append(qs, s.Name)
		}
	}
	if len(qs) > 0 {
		word := "QueryServices "
		if len(qs) == 1 {
			word = "QueryService "
		}
		named := strings.Join(qs[:min(len(qs), maxNamedSources)], ", ")
		if more := len(qs) - maxNamedSources; more > 0 {
			named += fmt.Sprintf(" and %d more", more)
		}
		parts = append(parts, word+named)
	}
	return strings.Join(parts, "; ")
}

// CachedImage reports one kept Entry of a pool for the Pool's status, from
// its warmup DaemonSet as observed (nil when it does not exist yet). The
// image is Ready once the DaemonSet controller has seen the latest spec and
// every node the DaemonSet targets runs a ready pod, whose init containers
// pulled the image; a pool without nodes is Ready with nothing to pull. Otherwise it is Pending with a message saying what
// it waits for. A DaemonSet's status cannot tell a failing pull from a slow
// one, so CachedImage never reports Failed; a caller that sees the pods may.
func CachedImage(pool string, e Entry, observed *appsv1.DaemonSet) poolv1alpha1.CachedImage {
	ci := poolv1alpha1.CachedImage{
		Image:         e.Image.Ref,
		Hash:          Hash(e.Image.Ref),
		Source:        SourceText(e.Image.Sources),
		DaemonSetName: DaemonSetName(pool, e.Image.Ref),
	}
	if e.UnusedSince != nil {
		t := metav1.NewTime(*e.UnusedSince)
		ci.UnusedSince = &t
	}
	if observed == nil {
		ci.WarmupStatus = poolv1alpha1.WarmupPending
		ci.Message = fmt.Sprintf("Waiting for warmup DaemonSet %s to be created.", ci.DaemonSetName)
		return ci
	}
	s := observed.Status
	ci.NodesTotal = s.DesiredNumberScheduled
	ci.NodesReady = s.NumberReady
	switch {
	case s.ObservedGeneration < observed.Generation:
		ci.WarmupStatus = poolv1alpha1.WarmupPending
		ci.Message = fmt.Sprintf("Waiting for the DaemonSet controller to roll out warmup DaemonSet %s.", ci.DaemonSetName)
	case ci.NodesReady < ci.NodesTotal:
		ci.WarmupStatus = poolv1alpha1.WarmupPending
		ci.Message = fmt.Sprintf("%d of %d pool nodes have pulled the image; if this persists, check the image reference and pull secrets on the pods of DaemonSet %s.",
			ci.NodesReady, ci.NodesTotal, ci.DaemonSetName)
	default:
		ci.WarmupStatus = poolv1alpha1.WarmupReady
	}
	return ci
}
