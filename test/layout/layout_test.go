// Package layout_test tests the repository's layout: what ships (apis,
// functions, internal, cmd) builds without any package of build/ or test/,
// so the folders tell the truth about what runs in a user's cluster; and
// the composition function's packages keep their roles.
package layout_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

func TestShippedCodeImportsNoBuildOrTestPackage(t *testing.T) {
	root := gomod.RootForTest(t)
	// The packages that ship and everything they link, tests left out.
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./apis/...", "./functions/...", "./internal/...", "./cmd/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list of the shipped packages: %v", err)
	}
	var found []string
	for _, p := range strings.Fields(string(out)) {
		for _, dir := range []string{"/build/", "/test/"} {
			if strings.HasPrefix(p, gomod.Path+dir) {
				found = append(found, p)
			}
		}
	}
	if len(found) > 0 {
		t.Errorf("shipped code links packages that only build or test burstpool: %v", found)
	}
}

// TestFunctionPackagesKeepTheirRoles: the readers of observed objects and
// the cloud node-pool builders depend on no other package of the
// composition function, the object builders on no decision, the decisions
// on no workload-cluster wrapping, the wrapping on nothing of package main,
// and only package main writes a response (issue #27).
func TestFunctionPackagesKeepTheirRoles(t *testing.T) {
	root := gomod.RootForTest(t)
	fn, sdk := gomod.Path+"/functions/pool-compose", "github.com/crossplane/function-sdk-go"
	response := []string{sdk, sdk + "/response", sdk + "/request", sdk + "/proto/v1"}
	cases := map[string]struct {
		reason string
		pkg    string
		forbid []string
	}{
		"Observed": {
			reason: "observed reads observed objects, nothing else",
			pkg:    fn + "/observed",
			forbid: append([]string{fn, fn + "/objects", fn + "/decision", fn + "/remote", fn + "/cloudpool", fn + "/input/v1beta1"}, response...),
		},
		"CloudPool": {
			reason: "cloudpool builds the node pools of LKE, DOKS and CoreWeave from its own input",
			pkg:    fn + "/cloudpool",
			forbid: append([]string{fn, fn + "/objects", fn + "/decision", fn + "/remote", fn + "/observed"}, response...),
		},
		"Objects": {
			reason: "objects builds objects from arguments: it links no decision, no workload-cluster wrapping and no response writing",
			pkg:    fn + "/objects",
			forbid: append([]string{fn, fn + "/decision", fn + "/remote"}, response...),
		},
		"Decision": {
			reason: "decision decides from its Input: it links no workload-cluster wrapping, nothing of package main and no response writing",
			pkg:    fn + "/decision",
			forbid: append([]string{fn, fn + "/remote"}, response...),
		},
		"Remote": {
			reason: "remote wraps a pool's Output for its workload cluster: it links nothing of package main and writes no response",
			pkg:    fn + "/remote",
			forbid: append([]string{fn}, response...),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", tc.pkg)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", tc.pkg, err)
			}
			var got []string
			for _, p := range strings.Fields(string(out)) {
				if slices.Contains(tc.forbid, p) {
					got = append(got, p)
				}
			}
			if diff := cmp.Diff([]string(nil), got); diff != "" {
				t.Errorf("%s\n%s links (-want +got):\n%s", tc.reason, tc.pkg, diff)
			}
		})
	}
}

// TestFunctionMainOnlyGathersAndApplies: package main holds the CLI,
// gathering the request, choosing the path and writing the response, and
// what it keeps across calls to do so (the decision and render caches, the
// decoded inputs, the request digest that keys them, the encodings of the
// responses the decision cache keeps, which the gRPC server sends); every
// decision (a func decide*) lives in package decision.
func TestFunctionMainOnlyGathersAndApplies(t *testing.T) {
	root := gomod.RootForTest(t)
	dir := filepath.Join(root, "functions", "pool-compose")
	cmd := exec.Command("go", "list", "-f", "{{join .GoFiles \" \"}}", "./functions/pool-compose")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./functions/pool-compose: %v", err)
	}
	want := []string{"apply.go", "decisions.go", "decoded.go", "digest.go", "doc.go", "encoded.go", "fn.go", "main.go", "render.go", "requestsize.go", "requirements.go", "reuse.go"}
	if diff := cmp.Diff(want, strings.Fields(string(out))); diff != "" {
		t.Errorf("package main's files (-want +got):\n%s", diff)
	}

	var decides []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if strings.HasPrefix(filepath.ToSlash(rel), "decision/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && strings.HasPrefix(fd.Name.Name, "decide") {
				decides = append(decides, filepath.ToSlash(rel)+" "+fd.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), decides); diff != "" {
		t.Errorf("decisions outside package decision (-want +got):\n%s", diff)
	}
}

// TestPoolCapacityArgumentsBuiltOnce: the PoolCapacity's arguments are
// made in one place (capacityArgs, in package decision), so a pool's
// PoolCapacity cannot mean one thing for a local pool and another for a
// remote one; and its spec.forProvider, the capacity API's
// PoolCapacityParameters that the provider decodes, is built in one place
// (objects/capacity.go).
func TestPoolCapacityArgumentsBuiltOnce(t *testing.T) {
	root := gomod.RootForTest(t)
	dir := filepath.Join(root, "functions", "pool-compose")
	built := map[string]bool{"CapacityArgs": true, "PoolCapacityParameters": true}
	var got []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			var name string
			switch ty := lit.Type.(type) {
			case *ast.Ident:
				name = ty.Name
			case *ast.SelectorExpr:
				name = ty.Sel.Name
			}
			if built[name] {
				rel, _ := filepath.Rel(dir, path)
				got = append(got, name+" "+filepath.ToSlash(rel))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CapacityArgs decision/capacity.go", "PoolCapacityParameters objects/capacity.go"}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files with a CapacityArgs or PoolCapacityParameters literal (-want +got):\n%s", diff)
	}
}
