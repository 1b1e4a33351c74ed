package localcp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecode(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   []string // kind/name of each object
		err    bool
	}{
		"MultiDocument": {
			reason: "Documents come back in order; empty ones are skipped.",
			in:     "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
			want:   []string{"Namespace/a", "ConfigMap/b"},
		},
		"JSON": {
			reason: "A JSON object is a manifest too.",
			in:     `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"j"}}`,
			want:   []string{"Namespace/j"},
		},
		"Empty": {
			reason: "Nothing to apply is not an error.",
			in:     "\n---\n",
		},
		"NoKind": {
			reason: "An object without a kind cannot be applied.",
			in:     "apiVersion: v1\nmetadata:\n  name: x\n",
			err:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := Decode([]byte(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("%s\ndecode: error %v, want error %t", tc.reason, err, tc.err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ndecode: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDecodeNumbers: whole numbers come back as int64, as in objects read
// from an API server, so a decoded manifest compares equal to its stored
// copy and unstructured's NestedInt64 reads it.
func TestDecodeNumbers(t *testing.T) {
	objs, err := Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\nspec:\n  whole: 20\n  part: 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"whole": int64(20), "part": 0.5}
	if diff := cmp.Diff(want, objs[0].Object["spec"]); diff != "" {
		t.Errorf("decoded spec: -want, +got:\n%s", diff)
	}
}
