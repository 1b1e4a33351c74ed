package warmup

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

func FuzzDaemonSetName(f *testing.F) {
	for _, s := range [][2]string{
		{"analytics", "nginx"},
		{"", ""},
		{strings.Repeat("a", 70), "ghcr.io/e6/exec:1"},
		{"Team.Pool_1", "localhost:5000/x@sha256:00"},
		{"-a-", " busybox "},
		{"ü", "\x00"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pool, ref string) {
		name := DaemonSetName(pool, ref)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Fatalf("DaemonSetName(%q, %q) = %q: %v", pool, ref, name, errs)
		}
		if !strings.HasSuffix(name, "warmup-"+Hash(ref)) {
			t.Fatalf("DaemonSetName(%q, %q) = %q does not end in the image hash %s", pool, ref, name, Hash(ref))
		}
		if again := DaemonSetName(pool, ref); again != name {
			t.Fatalf("DaemonSetName(%q, %q) is not stable: %q then %q", pool, ref, name, again)
		}
		if isLabel(pool) && len(pool) <= maxNameLen-len(nameInfix)-hashLen && !strings.HasPrefix(name, pool+nameInfix) {
			t.Fatalf("DaemonSetName(%q, %q) = %q rewrote a pool name that fits", pool, ref, name)
		}
		if errs := validation.IsDNS1123Label(ResourceName(ref)); len(errs) > 0 {
			t.Fatalf("ResourceName(%q) = %q: %v", ref, ResourceName(ref), errs)
		}
	})
}

func FuzzSet(f *testing.F) {
	f.Add("nginx", "docker.io/library/nginx", "ns/q", "ghcr.io/e6/exec:1", true)
	f.Add("", " ", "", "", false)
	f.Add("a@b:c", "x/", "ns/r", "index.docker.io/a", true)
	f.Fuzz(func(t *testing.T, c1, c2, qs, qsImage string, auto bool) {
		cached := []string{c1, c2}
		qsImages := map[string]string{qs: qsImage, qs + "-2": c1}
		set := Set(cached, auto, qsImages)

		want := map[string]bool{}
		for _, r := range cached {
			if n := Normalize(r); n != "" {
				want[n] = true
			}
		}
		if auto {
			for _, r := range qsImages {
				if n := Normalize(r); n != "" {
					want[n] = true
				}
			}
		}
		if len(set) != len(want) {
			t.Fatalf("Set: %d images, want %d: %+v", len(set), len(want), set)
		}
		for i, img := range set {
			if !want[img.Ref] {
				t.Fatalf("Set: unexpected image %q", img.Ref)
			}
			if Normalize(img.Ref) != img.Ref {
				t.Fatalf("Set: Ref %q is not normalized (%q)", img.Ref, Normalize(img.Ref))
			}
			if i > 0 && set[i-1].Ref >= img.Ref {
				t.Fatalf("Set: refs not strictly sorted: %q then %q", set[i-1].Ref, img.Ref)
			}
			if len(img.Sources) == 0 {
				t.Fatalf("Set: image %q has no source", img.Ref)
			}
			for j := 1; j < len(img.Sources); j++ {
				if compareSource(img.Sources[j-1], img.Sources[j]) >= 0 {
					t.Fatalf("Set: sources of %q not strictly sorted: %+v", img.Ref, img.Sources)
				}
			}
			if errs := validation.IsDNS1123Label(DaemonSetName(qs, img.Ref)); len(errs) > 0 {
				t.Fatalf("DaemonSetName(%q, %q): %v", qs, img.Ref, errs)
			}
		}

		// Everything wanted is kept, under distinct names, with no stamp.
		p := Retain(time.Unix(0, 0), time.Hour, set, nil)
		if len(p.Keep) != len(set) || len(p.Dropped) != 0 || p.RequeueAfter != 0 {
			t.Fatalf("Retain of the wanted set alone: %+v", p)
		}
		for i, e := range p.Keep {
			if e.UnusedSince != nil || i > 0 && p.Keep[i-1].Name >= e.Name {
				t.Fatalf("Retain: bad entry %d in %+v", i, p.Keep)
			}
		}
	})
}
