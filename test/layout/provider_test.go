package layout_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// The capacity provider's pure cores and its controller.
var (
	providerCores = []string{"internal/capacity", "internal/cost"}
	providerCtrl  = "internal/controller/poolcapacity"
)

// shippedFiles parses the non-test Go files of the folder rel.
func shippedFiles(t *testing.T, root, rel string) map[string]*ast.File {
	t.Helper()
	dir := filepath.Join(root, rel)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		out[rel+"/"+n] = f
	}
	return out
}

// TestProviderCoreImportsNoClient: the capacity provider's cores count and
// decide from a snapshot and a clock they are given: no file of theirs
// imports an API client (client-go, controller-runtime,
// crossplane-runtime) or takes a context (issue #41). The API types they
// read link those packages; the cores never call them.
func TestProviderCoreImportsNoClient(t *testing.T) {
	root := gomod.RootForTest(t)
	forbid := []string{"context", "k8s.io/client-go", "sigs.k8s.io/controller-runtime", "github.com/crossplane/crossplane-runtime"}
	var found []string
	for _, core := range providerCores {
		for name, f := range shippedFiles(t, root, core) {
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, fb := range forbid {
					if p == fb || strings.HasPrefix(p, fb+"/") {
						found = append(found, name+" imports "+p)
					}
				}
			}
		}
	}
	slices.Sort(found)
	if diff := cmp.Diff([]string(nil), found); diff != "" {
		t.Errorf("the provider's pure cores reach for a client (-want +got):\n%s", diff)
	}
}

// snapshotWalkers are the methods of capacity.Snapshot that read its pods
// and nodes: counting them is the core's, not the controller's.
var snapshotWalkers = []string{"Pods", "Nodes", "Departed", "Pod", "NodeGone"}

// TestProviderControllerDecidesNothing: the PoolCapacity controller
// gathers, has the cores compute, and applies their plan; it walks no
// snapshot and reads no pod or node of one (the core's objects
// capacity.Pod and capacity.Node), so every count and decision is in a
// package a unit test can call without an API server (issue #41).
func TestProviderControllerDecidesNothing(t *testing.T) {
	root := gomod.RootForTest(t)
	var found []string
	for name, f := range shippedFiles(t, root, providerCtrl) {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "capacity" && (sel.Sel.Name == "Pod" || sel.Sel.Name == "Node") {
				found = append(found, name+" reads capacity."+sel.Sel.Name)
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && slices.Contains(snapshotWalkers, sel.Sel.Name) && isSnapshot(sel.X) {
				found = append(found, name+" walks a snapshot ("+sel.Sel.Name+")")
			}
			return true
		})
	}
	slices.Sort(found)
	if diff := cmp.Diff([]string(nil), found); diff != "" {
		t.Errorf("the controller counts or decides itself (-want +got):\n%s", diff)
	}
}

// isSnapshot tells whether x names a snapshot as the controller spells
// one: a variable or field called snap, or a call of Current() (the
// store's snapshot).
func isSnapshot(x ast.Expr) bool {
	switch v := x.(type) {
	case *ast.Ident:
		return v.Name == "snap"
	case *ast.SelectorExpr:
		return v.Sel.Name == "snap"
	case *ast.CallExpr:
		if s, ok := v.Fun.(*ast.SelectorExpr); ok {
			return s.Sel.Name == "Current"
		}
	}
	return false
}

// TestProviderActuatorsOneFileEach: the controller applies a plan through
// the actuators table, in its stated order, each actuator in a file of
// its own named for what it does (issue #41).
func TestProviderActuatorsOneFileEach(t *testing.T) {
	root := gomod.RootForTest(t)
	files := shippedFiles(t, root, providerCtrl)
	defined := map[string]string{}
	var table []string
	for name, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				defined[fd.Name.Name] = filepath.Base(name)
			}
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if len(vs.Names) != 1 || vs.Names[0].Name != "actuators" || len(vs.Values) != 1 {
					continue
				}
				lit, _ := vs.Values[0].(*ast.CompositeLit)
				if lit == nil {
					continue
				}
				for _, el := range lit.Elts {
					for _, kv := range el.(*ast.CompositeLit).Elts {
						if kv := kv.(*ast.KeyValueExpr); kv.Key.(*ast.Ident).Name == "apply" {
							table = append(table, kv.Value.(*ast.Ident).Name)
						}
					}
				}
			}
		}
	}
	var got []string
	for _, fn := range table {
		got = append(got, fn+" in "+defined[fn])
	}
	want := []string{
		"openNodes in open.go",
		"releasePlaceholders in placeholders.go",
		"applyBufferScale in buffer.go",
		"bindGate in gate.go",
		"releaseExecutors in release.go",
		"evict in evict.go",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the actuators and their files, in order (-want +got):\n%s", diff)
	}
}
