package warmup

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestDaemonSetName(t *testing.T) {
	const ref = "nginx"
	h := Hash(ref)
	long := strings.Repeat("a", 60)
	cases := map[string]struct {
		reason string
		pool   string
		want   string
	}{
		"Plain": {
			reason: "A pool name that fits is used as is.",
			pool:   "analytics",
			want:   "analytics-warmup-" + h,
		},
		"Longest": {
			reason: "A pool name of 45 characters still fits whole.",
			pool:   long[:45],
			want:   long[:45] + "-warmup-" + h,
		},
		"TooLong": {
			reason: "A longer pool name is cut and marked with a hash of the whole name.",
			pool:   long,
			want:   long[:39] + "-" + hashOf(long)[:poolHashLen] + "-warmup-" + h,
		},
		"CutAtDash": {
			reason: "A cut that ends in '-' drops it, so the name stays a label.",
			pool:   strings.Repeat("a", 38) + "-" + strings.Repeat("b", 20),
			want:   strings.Repeat("a", 38) + "-" + hashOf(strings.Repeat("a", 38) + "-" + strings.Repeat("b", 20))[:poolHashLen] + "-warmup-" + h,
		},
		"Subdomain": {
			reason: "Dots and capitals are rewritten, and the hash keeps a.b apart from a-b.",
			pool:   "Team.Pool_1",
			want:   "team-pool-1-" + hashOf("Team.Pool_1")[:poolHashLen] + "-warmup-" + h,
		},
		"NothingUsable": {
			reason: "A pool name with no letter or digit leaves only its hash.",
			pool:   "...",
			want:   hashOf("...")[:poolHashLen] + "-warmup-" + h,
		},
		"Empty": {
			reason: "Without a pool the name is the image part alone.",
			pool:   "",
			want:   "warmup-" + h,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DaemonSetName(tc.pool, ref)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDaemonSetName(%q, %q): -want, +got:\n%s", tc.reason, tc.pool, ref, diff)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("%s\nDaemonSetName(%q, %q) = %q: %v", tc.reason, tc.pool, ref, got, errs)
			}
		})
	}
}

func TestResourceName(t *testing.T) {
	if diff := cmp.Diff("warmup-"+Hash("nginx"), ResourceName("docker.io/library/nginx")); diff != "" {
		t.Errorf("ResourceName: -want, +got:\n%s", diff)
	}
}
