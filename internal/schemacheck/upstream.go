package schemacheck

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pkg/errors"
)

// EnvShared names the folder shared between burstpool checkouts that holds
// crds/upstream/ (schemas whose Go modules the module proxy lacks). Unset,
// it is the folder "shared" beside the repository root.
const EnvShared = "BURSTPOOL_SHARED"

// modulePath is the repository's module; its go.mod marks the root.
const modulePath = "github.com/burstpool/burstpool"

// upstreamModule is a Go module version and the CRD files inside it that
// burstpool's objects must satisfy.
type upstreamModule struct {
	module, version string
	files           []string // relative to the module root; a directory reads all of it
}

// upstreamModules are the controllers whose CRDs burstpool emits objects of.
// Files are named one by one where a module ships copies of another module's
// CRDs, so each kind comes from its owner.
var upstreamModules = []upstreamModule{
	{"sigs.k8s.io/karpenter", "v1.14.1", []string{
		"pkg/apis/crds/karpenter.sh_nodepools.yaml",
		"pkg/apis/crds/karpenter.sh_nodeclaims.yaml",
		"kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml",
	}},
	{"github.com/aws/karpenter-provider-aws", "v1.14.1", []string{"pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml"}},
	{"github.com/Azure/karpenter-provider-azure", "v1.14.2", []string{"pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml"}},
	{"github.com/crossplane/crossplane/v2", "v2.4.0", []string{"cluster/crds"}},
}

// projectCRDPaths are the repository's own generated CRDs and XRD, read when
// present.
var projectCRDPaths = []string{"apis/crds", "apis/definition.yaml", "package/provider/crds"}

var (
	upstreamOnce sync.Once
	upstreamReg  *Registry
	upstreamErr  error
)

// Upstream returns the registry of every kind burstpool emits: Karpenter's
// NodePool and NodeClaim, the NodeClasses of AWS (EC2NodeClass), Azure
// (AKSNodeClass), GCP (GCENodeClass) and Karpenter's KWOK test cloud, the
// LKE and DOKS node pools, Crossplane's own types, and the repository's
// generated CRDs and its XRD (the XPool composite). Module CRDs are read from the Go module cache (downloaded
// through the module proxy when missing); the others from the shared
// crds/upstream folder (see EnvShared). It is loaded once per process.
func Upstream() (*Registry, error) {
	upstreamOnce.Do(func() { upstreamReg, upstreamErr = loadUpstream() })
	return upstreamReg, upstreamErr
}

func loadUpstream() (*Registry, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, m := range upstreamModules {
		dir, err := ModuleDir(m.module, m.version)
		if err != nil {
			return nil, err
		}
		for _, f := range m.files {
			paths = append(paths, filepath.Join(dir, filepath.FromSlash(f)))
		}
	}
	shared := os.Getenv(EnvShared)
	if shared == "" {
		shared = filepath.Join(root, "..", "shared")
	}
	up := filepath.Join(shared, "crds", "upstream")
	if _, err := os.Stat(up); err != nil {
		return nil, errors.Wrapf(err, "cannot find the upstream CRDs: set %s to the folder that holds crds/upstream", EnvShared)
	}
	paths = append(paths, up)
	for _, d := range projectCRDPaths {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			paths = append(paths, filepath.Join(root, d))
		}
	}
	r, err := Load(paths...)
	return r, errors.Wrap(err, "cannot load the upstream CRDs")
}

// RepoRoot returns the root of the burstpool checkout that holds the working
// directory: the nearest parent whose go.mod declares burstpool's module.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", errors.Wrap(err, "cannot find the repository root")
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declares(b, modulePath) { //nolint:gosec // G304: go.mod of a parent folder
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.Errorf("cannot find the repository root: no parent of %s has a go.mod for %s; run from inside the checkout", wd, modulePath)
		}
	}
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
	moduleDirsMu sync.Mutex
	moduleDirs   = map[string]string{}
)

// ModuleDir returns the folder of module@version in the Go module cache,
// downloading it through the module proxy when missing (with `go mod
// download`, so GOPROXY, GOFLAGS and GONOSUMDB apply). The module need not
// be required by go.mod. Results are cached for the process.
func ModuleDir(module, version string) (string, error) {
	key := module + "@" + version
	moduleDirsMu.Lock()
	defer moduleDirsMu.Unlock()
	if d, ok := moduleDirs[key]; ok {
		return d, nil
	}
	cmd := exec.Command("go", "mod", "download", "-json", key) //nolint:gosec // G204: module and version are fixed by this package or its caller
	// Outside any module, so the repository's go.mod neither constrains nor
	// changes.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &res); jerr == nil && res.Error != "" {
		return "", errors.Errorf("cannot download %s: %s", key, res.Error)
	}
	if err != nil {
		return "", errors.Wrapf(err, "cannot download %s: %s", key, strings.TrimSpace(stderr.String()))
	}
	if res.Dir == "" {
		return "", errors.Errorf("cannot download %s: go mod download printed no Dir", key)
	}
	moduleDirs[key] = res.Dir
	return res.Dir, nil
}
