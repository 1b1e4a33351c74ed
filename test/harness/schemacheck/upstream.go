package schemacheck

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/pkg/errors"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// UpstreamDir is the repository folder that holds copies of the third-party
// CRDs burstpool emits objects of; its README names each file's source.
const UpstreamDir = "test/crds/upstream"

// upstreamPaths are the folders of UpstreamDir whose CRDs Upstream loads
// (Crossplane's package metadata schemas, crossplane/meta, are for
// crank beta validate and not loaded).
var upstreamPaths = []string{UpstreamDir, UpstreamDir + "/crossplane"}

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
// LKE and DOKS node pools, provider-aws's IAM Role, RolePolicyAttachment
// and EKS AccessEntry (node IAM), the EKS, GKE and AKS node groups of the
// provider-aws, provider-gcp and provider-azure families, Crossplane's own types, and the repository's
// generated CRDs and its XRD (the XPool composite). Everything is read from
// the checkout (UpstreamDir), so it needs neither the network nor anything
// beside the repository. It is loaded once per process.
func Upstream() (*Registry, error) {
	upstreamOnce.Do(func() { upstreamReg, upstreamErr = loadUpstream() })
	return upstreamReg, upstreamErr
}

func loadUpstream() (*Registry, error) {
	root, err := gomod.Root()
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(upstreamPaths)+len(projectCRDPaths))
	for _, d := range upstreamPaths {
		paths = append(paths, filepath.Join(root, filepath.FromSlash(d)))
	}
	for _, d := range projectCRDPaths {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			paths = append(paths, filepath.Join(root, d))
		}
	}
	r, err := Load(paths...)
	return r, errors.Wrap(err, "cannot load the upstream CRDs")
}
