package warmup

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	cases := map[string]struct {
		reason string
		ref    string
		want   string
	}{
		"Blank": {
			reason: "A blank reference normalizes to the empty string.",
			ref:    "  \t",
			want:   "",
		},
		"Official": {
			reason: "A bare Docker Hub name gets the domain, library/ and :latest.",
			ref:    "nginx",
			want:   "docker.io/library/nginx:latest",
		},
		"Space": {
			reason: "Surrounding space is removed.",
			ref:    " nginx:1.27 ",
			want:   "docker.io/library/nginx:1.27",
		},
		"HubUser": {
			reason: "A Docker Hub user repository gets the domain only.",
			ref:    "e6data/executor:3.1",
			want:   "docker.io/e6data/executor:3.1",
		},
		"LegacyHub": {
			reason: "index.docker.io is Docker Hub.",
			ref:    "index.docker.io/library/nginx",
			want:   "docker.io/library/nginx:latest",
		},
		"Registry": {
			reason: "A reference with a registry keeps it; only the tag is defaulted.",
			ref:    "ghcr.io/e6data/executor",
			want:   "ghcr.io/e6data/executor:latest",
		},
		"RegistryPort": {
			reason: "A registry port is not a tag.",
			ref:    "registry.local:5000/executor",
			want:   "registry.local:5000/executor:latest",
		},
		"Localhost": {
			reason: "localhost is a registry.",
			ref:    "localhost/executor:dev",
			want:   "localhost/executor:dev",
		},
		"Digest": {
			reason: "A digest reference gets no tag.",
			ref:    "123456789012.dkr.ecr.us-east-1.amazonaws.com/exec@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			want:   "123456789012.dkr.ecr.us-east-1.amazonaws.com/exec@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		},
		"TagAndDigest": {
			reason: "A tag and a digest are both kept.",
			ref:    "busybox:1.36@sha256:abc",
			want:   "docker.io/library/busybox:1.36@sha256:abc",
		},
		"AlreadyNormal": {
			reason: "Normalizing is idempotent.",
			ref:    "docker.io/library/nginx:latest",
			want:   "docker.io/library/nginx:latest",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Normalize(tc.ref)); diff != "" {
				t.Errorf("%s\nNormalize(%q): -want, +got:\n%s", tc.reason, tc.ref, diff)
			}
		})
	}
}

func TestHash(t *testing.T) {
	cases := map[string]struct {
		reason string
		a, b   string
		same   bool
	}{
		"SameImageTwoSpellings": {
			reason: "References that normalize alike hash alike.",
			a:      "nginx",
			b:      "docker.io/library/nginx:latest",
			same:   true,
		},
		"OtherTag": {
			reason: "Another tag is another image.",
			a:      "nginx:1.26",
			b:      "nginx:1.27",
		},
		"OtherRegistry": {
			reason: "Another registry is another image.",
			a:      "ghcr.io/e6/exec:1",
			b:      "quay.io/e6/exec:1",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := Hash(tc.a), Hash(tc.b)
			for _, h := range []string{a, b} {
				if len(h) != hashLen || !isLabel(h) {
					t.Errorf("%s\nHash: %q is not %d lowercase hex digits", tc.reason, h, hashLen)
				}
			}
			if diff := cmp.Diff(tc.same, a == b); diff != "" {
				t.Errorf("%s\nHash(%q) == Hash(%q): -want, +got:\n%s", tc.reason, tc.a, tc.b, diff)
			}
		})
	}
	// The hash names DaemonSets in live clusters: it must never change.
	if diff := cmp.Diff("86cee2c108", Hash("nginx")); diff != "" {
		t.Errorf("Hash(nginx) changed, which would rename every warmup DaemonSet: -want, +got:\n%s", diff)
	}
}

func TestSet(t *testing.T) {
	const (
		exec1 = "ghcr.io/e6data/executor:1.0"
		exec2 = "ghcr.io/e6data/executor:2.0"
		nginx = "docker.io/library/nginx:latest"
	)
	type args struct {
		cached      []string
		autoCollect bool
		qsImages    map[string]string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   []Image
	}{
		"Empty": {
			reason: "Nothing cached and nothing collected is an empty set.",
			args:   args{autoCollect: true},
			want:   nil,
		},
		"CachedOnly": {
			reason: "Cached images are wanted, normalized and sorted.",
			args:   args{cached: []string{exec2, "nginx", exec1}},
			want: []Image{
				{Ref: nginx, Sources: []Source{{Kind: SourceCachedImages}}},
				{Ref: exec1, Sources: []Source{{Kind: SourceCachedImages}}},
				{Ref: exec2, Sources: []Source{{Kind: SourceCachedImages}}},
			},
		},
		"AutoCollectOff": {
			reason: "QueryService images are ignored when auto-collection is off.",
			args:   args{cached: []string{exec1}, qsImages: map[string]string{"a/q": exec2}},
			want:   []Image{{Ref: exec1, Sources: []Source{{Kind: SourceCachedImages}}}},
		},
		"AutoCollect": {
			reason: "With auto-collection, QueryService images join the cached ones, one Image per reference with every source sorted.",
			args: args{
				cached:      []string{exec1, exec1, " "},
				autoCollect: true,
				qsImages:    map[string]string{"b/q": exec1, "a/q": exec1, "a/r": exec2, "c/blank": ""},
			},
			want: []Image{
				{Ref: exec1, Sources: []Source{
					{Kind: SourceCachedImages},
					{Kind: SourceQueryService, Name: "a/q"},
					{Kind: SourceQueryService, Name: "b/q"},
				}},
				{Ref: exec2, Sources: []Source{{Kind: SourceQueryService, Name: "a/r"}}},
			},
		},
		"SpellingsMerge": {
			reason: "Two spellings of one image are one Image.",
			args: args{
				cached:      []string{"nginx"},
				autoCollect: true,
				qsImages:    map[string]string{"a/q": "docker.io/library/nginx"},
			},
			want: []Image{{Ref: nginx, Sources: []Source{{Kind: SourceCachedImages}, {Kind: SourceQueryService, Name: "a/q"}}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Set(tc.args.cached, tc.args.autoCollect, tc.args.qsImages)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nSet(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
