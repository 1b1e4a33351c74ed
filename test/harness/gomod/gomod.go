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
	"strings"
	"sync"
)

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
