// Package gomod is test harness: it finds burstpool's checkout and the folders
// of Go modules in the module cache (the sources of upstream CRDs and of the
// components the local control plane runs).
package gomod

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

var (
	dirsMu sync.Mutex
	dirs   = map[string]string{}
)

// Dir returns the folder of module@version in the Go module cache,
// downloading it through the module proxy when missing (with `go mod
// download`, so GOPROXY, GOFLAGS and GONOSUMDB apply). The module need not
// be required by go.mod. Results are cached for the process.
func Dir(ctx context.Context, module, version string) (string, error) {
	key := module + "@" + version
	dirsMu.Lock()
	defer dirsMu.Unlock()
	if d, ok := dirs[key]; ok {
		return d, nil
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", key) //nolint:gosec // module and version are fixed by the caller
	// Outside any module, so the repository's go.mod neither constrains nor
	// changes.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &res); jerr == nil && res.Error != "" {
		return "", fmt.Errorf("cannot download %s: %s", key, res.Error)
	}
	if err != nil {
		return "", fmt.Errorf("cannot download %s: %w: %s", key, err, strings.TrimSpace(stderr.String()))
	}
	if res.Dir == "" {
		return "", fmt.Errorf("cannot download %s: go mod download printed no Dir", key)
	}
	dirs[key] = res.Dir
	return res.Dir, nil
}
