package warmup

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// AnnotationUnusedSince is carried on a warmup DaemonSet whose image left the
// warm set. Its value, an RFC 3339 timestamp, is when the image was first
// seen unwanted; the DaemonSet is removed once the pool's unused-image
// retention has passed since then. It is set on the DaemonSet only, never on
// its pod template, so setting or clearing it restarts no pod.
const AnnotationUnusedSince = "e6data.io/unused-since"

// AnnotationImage is the normalized image reference a warmup DaemonSet
// warms. It is on the DaemonSet and on its pods.
const AnnotationImage = "e6data.io/image"

// Observed is a warmup DaemonSet read back from the observed composed
// resources.
type Observed struct {
	// Name identifies the DaemonSet to the caller, normally its
	// composed-resource name. Retain hands it back unchanged.
	Name string
	// Image is the AnnotationImage value. An empty Image marks a DaemonSet
	// that cannot be rendered again; Retain drops it.
	Image string
	// UnusedSince is the AnnotationUnusedSince value, nil when absent.
	UnusedSince *time.Time
}

// ParseObserved reads an Observed from a DaemonSet's name and annotations.
// A malformed AnnotationUnusedSince is an error; the caller may warn and
// treat it as absent, which restarts the retention from now.
func ParseObserved(name string, annotations map[string]string) (Observed, error) {
	o := Observed{Name: name, Image: annotations[AnnotationImage]}
	v, ok := annotations[AnnotationUnusedSince]
	if !ok {
		return o, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return o, fmt.Errorf("cannot parse annotation %s of warmup DaemonSet %q: %w", AnnotationUnusedSince, name, err)
	}
	o.UnusedSince = &t
	return o, nil
}

// Entry is a warmup DaemonSet to render.
type Entry struct {
	// Image is the image to warm. For an image that left the warm set it has
	// no Sources.
	Image Image
	// Name is the Observed name when the DaemonSet exists, else
	// ResourceName(Image.Ref).
	Name string
	// UnusedSince is nil while the image is wanted; otherwise when it was
	// first seen unwanted, to be written to AnnotationUnusedSince.
	UnusedSince *time.Time
}

// Plan is what Retain decided.
type Plan struct {
	// Keep are the DaemonSets to render, sorted by Name.
	Keep []Entry
	// Dropped are the names of observed DaemonSets not to render again
	// (their retention expired, they duplicate another DaemonSet of the same
	// image, or they carry no image), sorted.
	Dropped []string
	// RequeueAfter is how soon the caller must run again for the next drop
	// to happen on time; 0 when no unwanted image is pending.
	RequeueAfter time.Duration
}

// Retain decides which warmup DaemonSets to keep. Every wanted image is kept
// with UnusedSince nil. An observed image that is no longer wanted keeps its
// DaemonSet, with UnusedSince the time it was first seen unwanted (now when
// not yet set, and never later than now), until retention has passed since
// then; then it is dropped. A new UnusedSince is now in UTC, cut to whole
// seconds as AnnotationUnusedSince stores it. RequeueAfter is the shortest
// time left until a kept unwanted DaemonSet is due. Images are compared by
// normalized reference; when several observed DaemonSets warm one image, the
// first by name is kept and the others are dropped. The clock is the argument
// now; Retain reads no clock and does not modify its arguments.
func Retain(now time.Time, retention time.Duration, wanted []Image, observed []Observed) Plan {
	obs := slices.Clone(observed)
	slices.SortFunc(obs, func(a, b Observed) int { return strings.Compare(a.Name, b.Name) })

	var p Plan
	seen := make(map[string]Observed, len(obs)) // normalized image -> first DaemonSet
	for _, o := range obs {
		ref := Normalize(o.Image)
		if _, dup := seen[ref]; ref == "" || dup {
			p.Dropped = append(p.Dropped, o.Name)
			continue
		}
		seen[ref] = o
	}

	p.Keep = make([]Entry, 0, len(wanted)+len(seen))
	kept := make(map[string]bool, len(wanted))
	for _, img := range wanted {
		img.Ref = Normalize(img.Ref)
		if img.Ref == "" || kept[img.Ref] {
			continue
		}
		kept[img.Ref] = true
		name := ResourceName(img.Ref)
		if o, ok := seen[img.Ref]; ok {
			name = o.Name
			delete(seen, img.Ref)
		}
		p.Keep = append(p.Keep, Entry{Image: img, Name: name})
	}

	for ref, o := range seen {
		// Whole seconds, as the annotation stores them, so the next run
		// computes the same time left.
		since := now.UTC().Truncate(time.Second)
		if o.UnusedSince != nil && o.UnusedSince.Before(since) {
			since = *o.UnusedSince
		}
		left := retention - now.Sub(since)
		if left <= 0 {
			p.Dropped = append(p.Dropped, o.Name)
			continue
		}
		if p.RequeueAfter == 0 || left < p.RequeueAfter {
			p.RequeueAfter = left
		}
		p.Keep = append(p.Keep, Entry{Image: Image{Ref: ref}, Name: o.Name, UnusedSince: &since})
	}

	slices.SortFunc(p.Keep, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(p.Dropped)
	if len(p.Keep) == 0 {
		p.Keep = nil
	}
	return p
}
