package devplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
	"github.com/burstpool/burstpool/test/harness/ocireg"
)

// provider-kubernetes, which composes a remote pool's objects in its
// workload cluster.
const (
	ProviderKubernetesName    = "provider-kubernetes"
	ProviderKubernetesModule  = "github.com/crossplane-contrib/provider-kubernetes"
	ProviderKubernetesVersion = "v1.2.1"
)

// providerKubernetesActivation activates provider-kubernetes' cluster-scoped
// Object: the package declares SafeStart, so its managed resources start
// inactive.
const providerKubernetesActivation = `apiVersion: apiextensions.crossplane.io/v1alpha1
kind: ManagedResourceActivationPolicy
metadata:
  name: burstpool-remote
spec:
  activate:
  - objects.kubernetes.crossplane.io
`

// InstallProviderKubernetes installs provider-kubernetes the way burstpool's
// own packages are installed: its package (built with crank from the
// module's package/ folder) is pushed to the stack's loopback registry and
// installed as a Provider, with the activation policy of its Object, and the
// provider binary (hack/tool.sh provider-kubernetes) runs as the revision's
// local runtime, in its own network namespace, reaching the management API
// server and the ports in forward (workload clusters' API servers). poll is
// how often it checks each Object for drift.
func (s *Stack) InstallProviderKubernetes(ctx context.Context, forward []int, poll time.Duration) (localcp.Process, error) {
	var p localcp.Process
	err := s.step("install provider-kubernetes "+ProviderKubernetesVersion, func() error {
		root := s.cfg.Root
		bin, err := localcp.Tool(ctx, root, ProviderKubernetesName)
		if err != nil {
			return err
		}
		dir, err := gomod.Dir(ctx, ProviderKubernetesModule, ProviderKubernetesVersion)
		if err != nil {
			return err
		}
		// crank packs everything under the package root: a copy holds only
		// the package metadata and the CRDs.
		stage := filepath.Join(s.cfg.Dir, "provider-kubernetes", "package")
		if err := os.MkdirAll(stage, 0o755); err != nil {
			return err
		}
		if err := copyDir(filepath.Join(dir, "package"), stage); err != nil {
			return err
		}
		xpkg := filepath.Join(s.cfg.Dir, "provider-kubernetes", "provider-kubernetes.xpkg")
		if err := crankBuild(ctx, root, stage, xpkg); err != nil {
			return err
		}
		ref, err := ocireg.PushXpkg(ctx, s.registry, "crossplane-contrib/provider-kubernetes", ProviderKubernetesVersion, xpkg)
		if err != nil {
			return err
		}
		if err := localcp.Apply(ctx, s.Cluster.Config, []byte(providerKubernetesActivation)); err != nil {
			return err
		}
		o := pkg("Provider", ProviderKubernetesName, ref, true)
		if err := s.Client.Create(ctx, o); err != nil {
			return fmt.Errorf("cannot install provider-kubernetes: %w", err)
		}
		certs := filepath.Join(s.cfg.Dir, "certs", ProviderKubernetesName)
		if _, err := s.runProviderLocally(ctx, ProviderKubernetesName, certs, "objects.kubernetes.crossplane.io", "providerconfigs.kubernetes.crossplane.io"); err != nil {
			return err
		}
		p, err = s.Cluster.StartIsolated(localcp.Isolated{
			Name: ProviderKubernetesName, Path: bin,
			Args:    []string{"--poll", poll.String(), "--debug"},
			Env:     []string{"KUBECONFIG=" + s.Cluster.Kubeconfig, "TLS_SERVER_CERTS_DIR=" + certs},
			Forward: forward,
		})
		return err
	})
	return p, err
}

// copyDir copies the regular files under src into dst.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path) //nolint:gosec // a file of the module cache
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644) //nolint:gosec // a package staging copy
	})
}
