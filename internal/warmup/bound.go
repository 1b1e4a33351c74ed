package warmup

import (
	"cmp"
	"slices"
	"strings"
)

// Bound keeps at most limit images of the wanted set, so that no number of
// QueryServices grows a pool's warmup DaemonSets (and the function's
// response) without limit. It ranks images the pool names itself
// (SourceCachedImages) first, then those of more QueryServices, then by
// reference, and keeps the first limit, sorted by reference as Set returns
// them. Left are the references left out, in rank order. Bound is pure and
// does not modify images.
func Bound(images []Image, limit int) (kept []Image, left []string) {
	if len(images) <= limit {
		return images, nil
	}
	ranked := slices.Clone(images)
	slices.SortStableFunc(ranked, func(a, b Image) int {
		if c := cmp.Compare(rankCached(b), rankCached(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.Sources), len(a.Sources)); c != 0 {
			return c
		}
		return strings.Compare(a.Ref, b.Ref)
	})
	limit = max(limit, 0)
	kept = slices.Clone(ranked[:limit])
	for _, img := range ranked[limit:] {
		left = append(left, img.Ref)
	}
	slices.SortFunc(kept, func(a, b Image) int { return strings.Compare(a.Ref, b.Ref) })
	return kept, left
}

// rankCached is 1 for an image the pool's cachedImages name.
func rankCached(img Image) int {
	if slices.ContainsFunc(img.Sources, func(s Source) bool { return s.Kind == SourceCachedImages }) {
		return 1
	}
	return 0
}

// Cap keeps at most limit DaemonSets of p: wanted images first, then the
// images kept for their retention, the most recently used first; the
// others are dropped now. It returns p when it holds no more than limit.
func Cap(p Plan, limit int) Plan {
	if len(p.Keep) <= limit {
		return p
	}
	keep := slices.Clone(p.Keep)
	slices.SortStableFunc(keep, func(a, b Entry) int {
		switch {
		case a.UnusedSince == nil && b.UnusedSince == nil:
			return 0
		case a.UnusedSince == nil:
			return -1
		case b.UnusedSince == nil:
			return 1
		}
		return b.UnusedSince.Compare(*a.UnusedSince)
	})
	limit = max(limit, 0)
	out := Plan{Keep: keep[:limit], Dropped: slices.Clone(p.Dropped), RequeueAfter: p.RequeueAfter}
	for _, e := range keep[limit:] {
		out.Dropped = append(out.Dropped, e.Name)
	}
	slices.SortFunc(out.Keep, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(out.Dropped)
	return out
}
