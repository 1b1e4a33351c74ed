package packaging_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	bin := crank(t)
	root := repoRoot(t)
	cases := map[string]struct {
		reason   string
		files    []string
		wantFail bool
		want     []string
	}{
		"Valid": {
			reason: "A valid XRD, Composition, Configuration and Function metadata and an XR of the XRD all pass.",
			files:  []string{"testdata/valid"},
			want: []string{
				"apiextensions.crossplane.io/v2, Kind=CompositeResourceDefinition, xbuckets.example.burstpool.io validated successfully",
				"apiextensions.crossplane.io/v1, Kind=Composition, xbuckets validated successfully",
				"meta.pkg.crossplane.io/v1, Kind=Configuration, buckets validated successfully",
				"meta.pkg.crossplane.io/v1, Kind=Function, function-buckets validated successfully",
				"example.burstpool.io/v1alpha1, Kind=XBucket, small validated successfully",
				"Total 5 resources: 0 missing schemas, 5 success cases, 0 failure cases",
			},
		},
		"Broken": {
			reason:   "Schema errors in an XRD, a Composition and Function metadata each fail validation, with the field at fault.",
			files:    []string{"testdata/broken/definition.yaml", "testdata/broken/composition.yaml", "testdata/broken/function.yaml"},
			wantFail: true,
			want: []string{
				`spec.scope: Unsupported value: "Galactic"`,
				`spec.mode: Unsupported value: "Sequential"`,
				"spec.compositeTypeRef: Required value",
				`unknown field: "runtimeImage"`,
				"3 failure cases",
			},
		},
		"MissingSchema": {
			reason:   "A kind without a known schema fails rather than passing unchecked.",
			files:    []string{"testdata/valid/composition.yaml", "testdata/valid/xr.yaml"},
			wantFail: true,
			want:     []string{"could not find CRD/XRD for: example.burstpool.io/v1alpha1, Kind=XBucket"},
		},
		"MissingFile": {
			reason:   "A file that is not there fails, even beside files that validate.",
			files:    []string{"testdata/valid/composition.yaml", "testdata/valid/nothere.yaml"},
			wantFail: true,
			want:     []string{"testdata/valid/nothere.yaml: no such file or folder"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			args := make([]string, 0, len(tc.files))
			for _, f := range tc.files {
				args = append(args, filepath.Join(root, "test", "package", f))
			}
			cmd := exec.CommandContext(t.Context(), filepath.Join(root, "hack", "validate.sh"), args...)
			cmd.Dir = root
			// A fresh cache shows that the script fills crank's cache
			// itself, with nothing to download; crank comes from its own.
			cmd.Env = append(cmd.Environ(), "XDG_CACHE_HOME="+t.TempDir(), "BURSTPOOL_BIN_CACHE="+filepath.Dir(bin))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if _, ok := err.(*exec.ExitError); err != nil && !ok {
				t.Fatalf("cannot run hack/validate.sh: %v", err)
			}
			if failed := err != nil; failed != tc.wantFail {
				t.Errorf("\n%s\nhack/validate.sh %s: failed %t, want %t; output:\n%s", tc.reason, strings.Join(tc.files, " "), failed, tc.wantFail, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("\n%s\nhack/validate.sh %s: output lacks %q; output:\n%s", tc.reason, strings.Join(tc.files, " "), w, out.String())
				}
			}
		})
	}
}
