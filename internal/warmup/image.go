package warmup

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Kinds of Source.
const (
	// SourceCachedImages: the image is listed in the Pool's
	// spec.imageConfig.cachedImages.
	SourceCachedImages = "CachedImages"
	// SourceQueryService: the image is the executor image of an attached
	// QueryService, collected because autoCollectImages is on.
	SourceQueryService = "QueryService"
)

// Source tells why an image is in the warm set.
type Source struct {
	// Kind is SourceCachedImages or SourceQueryService.
	Kind string
	// Name is "namespace/name" of the QueryService; empty for
	// SourceCachedImages.
	Name string
}

// Image is one image of the warm set.
type Image struct {
	// Ref is the normalized image reference (see Normalize).
	Ref string
	// Sources are the reasons the image is wanted, sorted by Kind then Name,
	// without duplicates.
	Sources []Source
}

// Set returns the wanted image set: the cached images, plus the QueryService
// images when autoCollect is true. qsImages maps "namespace/name" of a
// QueryService to its executor image. References are normalized (so "nginx"
// and "docker.io/library/nginx:latest" are one image); blank ones are
// ignored. The result is sorted by Ref and has one Image per reference; it is
// nil when nothing is wanted. Set does not modify its arguments.
func Set(cached []string, autoCollect bool, qsImages map[string]string) []Image {
	byRef := make(map[string][]Source, len(cached))
	for _, ref := range cached {
		if n := Normalize(ref); n != "" {
			byRef[n] = append(byRef[n], Source{Kind: SourceCachedImages})
		}
	}
	if autoCollect {
		// Many QueryServices share few images: normalize each once.
		normal := make(map[string]string)
		for qs, ref := range qsImages {
			n, ok := normal[ref]
			if !ok {
				n = Normalize(ref)
				normal[ref] = n
			}
			if n != "" {
				byRef[n] = append(byRef[n], Source{Kind: SourceQueryService, Name: qs})
			}
		}
	}
	if len(byRef) == 0 {
		return nil
	}
	out := make([]Image, 0, len(byRef))
	for ref, src := range byRef {
		slices.SortFunc(src, compareSource)
		out = append(out, Image{Ref: ref, Sources: slices.Compact(src)})
	}
	slices.SortFunc(out, func(a, b Image) int { return strings.Compare(a.Ref, b.Ref) })
	return out
}

func compareSource(a, b Source) int {
	if c := strings.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// Docker Hub defaults that Normalize fills in.
const (
	defaultDomain = "docker.io"
	legacyDomain  = "index.docker.io"
	officialRepo  = "library/"
	defaultTag    = ":latest"
)

// Normalize returns ref in the fully qualified form a container runtime
// stores it under: surrounding space removed, Docker Hub's domain and
// "library/" filled in, and ":latest" added when there is neither tag nor
// digest. "nginx" becomes "docker.io/library/nginx:latest",
// "ghcr.io/e6/exec@sha256:…" is unchanged. Normalize does not validate the
// reference; a blank ref gives "".
func Normalize(ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	domain, path := defaultDomain, ref
	if i := strings.IndexByte(ref, '/'); i >= 0 && isDomain(ref[:i]) {
		domain, path = ref[:i], ref[i+1:]
	}
	if domain == legacyDomain {
		domain = defaultDomain
	}
	name, digest, hasDigest := strings.Cut(path, "@")
	if domain == defaultDomain && !strings.Contains(name, "/") {
		name = officialRepo + name
	}
	switch {
	case hasDigest:
		name += "@" + digest
	case !strings.Contains(name, ":"):
		name += defaultTag
	}
	return domain + "/" + name
}

// isDomain tells whether the first component of a reference is a registry
// host rather than a repository path component, by the rule Docker uses.
func isDomain(s string) bool {
	return s == "localhost" || strings.ContainsAny(s, ".:") || strings.ToLower(s) != s
}

// hashLen is the number of hex digits of a Hash.
const hashLen = 10

// Hash returns a short stable hash of an image reference: the first 10 hex
// digits of the SHA-256 of its normalized form. References that normalize to
// the same string have the same hash.
func Hash(ref string) string {
	return hashOf(Normalize(ref))[:hashLen]
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
