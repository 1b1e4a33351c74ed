package schemacheck

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// moduleCopies are the files of UpstreamDir copied from Go modules the
// module proxy serves, by module version and path inside the module; the
// README's table says the same.
var moduleCopies = []struct {
	module, version string
	copies          map[string]string // path in UpstreamDir: path in the module (a folder copies every YAML file in it)
}{
	{"sigs.k8s.io/karpenter", "v1.14.1", map[string]string{
		"karpenter.sh_nodepools.yaml":            "pkg/apis/crds/karpenter.sh_nodepools.yaml",
		"karpenter.sh_nodeclaims.yaml":           "pkg/apis/crds/karpenter.sh_nodeclaims.yaml",
		"karpenter.kwok.sh_kwoknodeclasses.yaml": "kwok/apis/crds/karpenter.kwok.sh_kwoknodeclasses.yaml",
	}},
	{"github.com/aws/karpenter-provider-aws", "v1.14.1", map[string]string{
		"karpenter.k8s.aws_ec2nodeclasses.yaml": "pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml",
	}},
	{"github.com/Azure/karpenter-provider-azure", "v1.14.2", map[string]string{
		"karpenter.azure.com_aksnodeclasses.yaml": "pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml",
	}},
	{"github.com/crossplane-contrib/provider-kubernetes", "v1.2.1", map[string]string{
		"kubernetes.crossplane.io_objects.yaml":         "package/crds/kubernetes.crossplane.io_objects.yaml",
		"kubernetes.crossplane.io_providerconfigs.yaml": "package/crds/kubernetes.crossplane.io_providerconfigs.yaml",
	}},
	{"github.com/upbound/provider-aws", "v1.23.0", map[string]string{
		"iam.aws.upbound.io_roles.yaml":                 "package/crds/iam.aws.upbound.io_roles.yaml",
		"iam.aws.upbound.io_rolepolicyattachments.yaml": "package/crds/iam.aws.upbound.io_rolepolicyattachments.yaml",
		"eks.aws.upbound.io_accessentries.yaml":         "package/crds/eks.aws.upbound.io_accessentries.yaml",
		"eks.aws.upbound.io_nodegroups.yaml":            "package/crds/eks.aws.upbound.io_nodegroups.yaml",
	}},
	{"github.com/upbound/provider-gcp", "v1.14.0", map[string]string{
		"container.gcp.upbound.io_nodepools.yaml": "package/crds/container.gcp.upbound.io_nodepools.yaml",
	}},
	{"github.com/upbound/provider-azure", "v1.13.0", map[string]string{
		"containerservice.azure.upbound.io_kubernetesclusternodepools.yaml": "package/crds/containerservice.azure.upbound.io_kubernetesclusternodepools.yaml",
	}},
	{"github.com/crossplane/crossplane/v2", "v2.4.0", map[string]string{
		"crossplane":      "cluster/crds",
		"crossplane/meta": "cluster/meta",
	}},
}

// TestUpstreamCopies checks that every schema copied from a Go module is
// byte for byte the file of the module version the README names, so a copy
// cannot drift from the version the local control plane runs. It reads the
// modules through the module proxy (or the module cache), as make test's
// binaries do.
func TestUpstreamCopies(t *testing.T) {
	root := gomod.RootForTest(t)
	up := filepath.Join(root, filepath.FromSlash(UpstreamDir))
	for _, m := range moduleCopies {
		dir, err := gomod.Dir(context.Background(), m.module, m.version)
		if err != nil {
			t.Fatalf("cannot read %s@%s to compare the copies in %s with: %v", m.module, m.version, UpstreamDir, err)
		}
		for local, src := range m.copies {
			pairs := map[string]string{filepath.Join(up, local): filepath.Join(dir, filepath.FromSlash(src))}
			if fi, err := os.Stat(pairs[filepath.Join(up, local)]); err == nil && fi.IsDir() {
				pairs = folderPairs(t, filepath.Join(up, local), filepath.Join(dir, filepath.FromSlash(src)))
			}
			for got, want := range pairs {
				g, err := os.ReadFile(got) //nolint:gosec // a file of the checkout
				if err != nil {
					t.Errorf("%s@%s %s is not copied: %v", m.module, m.version, want, err)
					continue
				}
				w, err := os.ReadFile(want) //nolint:gosec // a file of the module cache
				if err != nil {
					t.Errorf("%s has no source in %s@%s: %v", got, m.module, m.version, err)
					continue
				}
				if !bytes.Equal(g, w) {
					t.Errorf("%s differs from %s@%s %s: copy it again", got, m.module, m.version, src)
				}
			}
		}
	}
}

// folderPairs pairs each YAML file of the module folder src with its copy
// in the folder local, and each YAML copy in local with its source, so a
// file added on either side is reported.
func folderPairs(t *testing.T, local, src string) map[string]string {
	t.Helper()
	pairs := map[string]string{}
	for _, d := range []string{src, local} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || filepath.Ext(e.Name()) != ".yaml" {
				continue
			}
			pairs[filepath.Join(local, e.Name())] = filepath.Join(src, e.Name())
		}
	}
	return pairs
}
