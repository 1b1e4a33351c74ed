package gomod

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Path is burstpool's module; its go.mod marks the repository root.
const Path = "github.com/burstpool/burstpool"

// Root returns the root of the burstpool checkout that holds the working
// directory: the nearest parent whose go.mod declares Path.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot find the repository root: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declares(b, Path) { //nolint:gosec // go.mod of a parent folder
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("cannot find the repository root: no parent of %s has a go.mod for %s; run from inside the checkout", wd, Path)
		}
	}
}

// RootForTest returns the root of the checkout the test runs in, failing t
// when there is none.
func RootForTest(t testing.TB) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// declares reports whether go.mod content b declares module mod.
func declares(b []byte, mod string) bool {
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := strings.Fields(string(l)); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == mod {
			return true
		}
	}
	return false
}
