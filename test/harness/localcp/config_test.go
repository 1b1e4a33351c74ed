package localcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBinariesCheck(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "exe")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil { //nolint:gosec // an executable test file
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil { //nolint:gosec // a test file
		t.Fatal(err)
	}
	all := Binaries{Etcd: exe, KubeAPIServer: exe, KubeControllerManager: exe, KubeScheduler: exe, Kwok: exe, Karpenter: exe, Crossplane: exe}

	cases := map[string]struct {
		reason     string
		b          func(Binaries) Binaries
		crossplane bool
		want       string // substring of the error; "" for none
	}{
		"AllPresent": {
			reason:     "Every binary is an executable file.",
			b:          func(b Binaries) Binaries { return b },
			crossplane: true,
		},
		"MissingFile": {
			reason: "A path to nothing names the hack/tool.sh command that builds it.",
			b:      func(b Binaries) Binaries { b.Kwok = filepath.Join(dir, "nope"); return b },
			want:   "hack/tool.sh kwok",
		},
		"NotExecutable": {
			reason: "A file without the executable bit is as good as missing.",
			b:      func(b Binaries) Binaries { b.Etcd = plain; return b },
			want:   "hack/tool.sh etcd",
		},
		"EmptyPath": {
			reason: "An unset path names the hack/tool.sh command too.",
			b:      func(b Binaries) Binaries { b.Karpenter = ""; return b },
			want:   "hack/tool.sh karpenter-kwok",
		},
		"SkippedComponent": {
			reason: "Crossplane's binary is not needed when Crossplane is skipped.",
			b:      func(b Binaries) Binaries { b.Crossplane = ""; return b },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.b(all).check(true, tc.crossplane)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s\ncheck: unexpected error %v", tc.reason, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s\ncheck: error %v, want one naming %q", tc.reason, err, tc.want)
			}
		})
	}
}
