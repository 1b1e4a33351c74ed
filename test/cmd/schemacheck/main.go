// Command schemacheck is test tooling, run by hack/render.sh: it validates the
// objects in YAML files against the real schemas of their kinds (see package
// schemacheck), as the API server would on create. It prints one line per
// object and every field error, and exits 1 when any object is invalid or has
// no schema, 2 on a usage or load error.
//
//	go run ./test/cmd/schemacheck [-crds DIR]... [-skip KIND.GROUP]... FILE...
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/schemacheck"
)

// renderGroup holds the results and context that crossplane render prints
// beside the objects; they are not objects to validate.
const renderGroup = "render.crossplane.io"

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var crds, skip list
	flag.Var(&crds, "crds", "also load the CRDs in this file or directory (repeatable)")
	flag.Var(&skip, "skip", "do not validate objects of this KIND.GROUP, e.g. XPool.e6data.io (repeatable)")
	quiet := flag.Bool("q", false, "print only invalid objects and the summary")
	flag.Usage = func() {
		_, _ = fmt.Fprintf(flag.CommandLine.Output(), "usage: schemacheck [-crds PATH]... [-skip KIND.GROUP]... [-q] FILE...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(crds, skip, *quiet, flag.Args()))
}

func run(crds, skip []string, quiet bool, files []string) int {
	reg, err := schemacheck.Upstream()
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemacheck:", err)
		return 2
	}
	if len(crds) > 0 {
		extra, err := schemacheck.Load(crds...)
		if err == nil {
			reg, err = reg.Merge(extra)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "schemacheck:", err)
			return 2
		}
	}
	var valid, invalid, skipped int
	for _, f := range files {
		objs, err := read(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "schemacheck:", err)
			return 2
		}
		for i, o := range objs {
			gk := o.GroupVersionKind().GroupKind()
			where := fmt.Sprintf("%s#%d %s %s", f, i+1, gk, name(o))
			if gk.Group == renderGroup || contains(skip, gk.String()) {
				skipped++
				if !quiet {
					fmt.Printf("skip    %s\n", where)
				}
				continue
			}
			if err := reg.Validate(o); err != nil {
				invalid++
				fmt.Printf("INVALID %s\n  %s\n", where, strings.ReplaceAll(err.Error(), "\n", "\n  "))
				continue
			}
			valid++
			if !quiet {
				fmt.Printf("ok      %s\n", where)
			}
		}
	}
	fmt.Printf("schemacheck: %d valid, %d invalid, %d skipped\n", valid, invalid, skipped)
	if invalid > 0 {
		return 1
	}
	return 0
}

// read returns the objects of a multi-document YAML file.
func read(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path) //nolint:gosec // G304: validating the files the user names is the point
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only file
	docs, err := schemacheck.Documents(f)
	if err != nil {
		return nil, fmt.Errorf("cannot split %s into documents: %w", path, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(docs))
	for i, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(d, &u.Object); err != nil {
			return nil, fmt.Errorf("cannot parse document %d of %s: %w", i+1, path, err)
		}
		out = append(out, u)
	}
	return out, nil
}

func name(o *unstructured.Unstructured) string {
	n := o.GetName()
	if n == "" {
		n = o.GetGenerateName() + "*"
	}
	if o.GetNamespace() != "" {
		n = o.GetNamespace() + "/" + n
	}
	return n
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
