package schemacheck

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/pkg/errors"

	"github.com/burstpool/burstpool/internal/gomod"
)

// EnvShared names the folder shared between burstpool checkouts that holds
// crds/upstream/ (schemas whose Go modules the module proxy lacks). Unset,
// it is the folder "shared" beside the repository root.
const EnvShared = "BURSTPOOL_SHARED"

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
	root, err := gomod.Root()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, m := range upstreamModules {
		dir, err := gomod.Dir(context.Background(), m.module, m.version)
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
