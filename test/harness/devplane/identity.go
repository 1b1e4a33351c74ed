package devplane

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// The capacity provider's runtime config and service account, as shipped
// in deploy/provider.
const (
	ProviderRuntimeConfig  = "provider-burstpool"
	ProviderServiceAccount = "provider-burstpool"
)

// ProviderManifests are the files of deploy/provider applied for every
// installation: the DeploymentRuntimeConfig and the roles (the opt-in
// eviction roles are left out).
var ProviderManifests = []string{"runtimeconfig.yaml", "rbac.yaml"}

// ApplyProviderManifests applies ProviderManifests from the checkout at root.
func ApplyProviderManifests(ctx context.Context, cfg *rest.Config, root string) error {
	return ApplyProviderManifestsFor(ctx, cfg, root, ShippedRegistry)
}

// ShippedRegistry is the registry path burstpool's packages are published
// under and deploy/provider's ImageConfig matches.
const ShippedRegistry = "ghcr.io/burstpool"

// ApplyProviderManifestsFor applies ProviderManifests with the ImageConfig's
// prefix changed from ShippedRegistry to registry, as docs/install.md tells
// a team that publishes the packages under its own path.
func ApplyProviderManifestsFor(ctx context.Context, cfg *rest.Config, root, registry string) error {
	for _, f := range ProviderManifests {
		b, err := os.ReadFile(filepath.Join(root, "deploy", "provider", f)) //nolint:gosec // a file of the checkout
		if err != nil {
			return fmt.Errorf("cannot read the provider's manifests: %w", err)
		}
		b = bytes.ReplaceAll(b, []byte("prefix: "+ShippedRegistry+"/"), []byte("prefix: "+registry+"/"))
		if err := localcp.Apply(ctx, cfg, b); err != nil {
			return fmt.Errorf("cannot apply deploy/provider/%s: %w", f, err)
		}
	}
	return nil
}

// AccountKubeconfig gives a runtime the identity a pod of service account
// name of CrossplaneNS would have: it waits until the account exists
// (whoever installs burstpool creates it: deploy/provider's manifests, or
// Crossplane for a revision that runs under an account of its own), asks
// the API server for a token of it (TokenRequest, valid for lifetime) and
// writes a kubeconfig at path that authenticates with it, so the runtime
// has the rights bound to that account and nothing else.
func AccountKubeconfig(ctx context.Context, c client.Client, cfg *rest.Config, name, path string, lifetimeSeconds int64) error {
	sa := &corev1.ServiceAccount{}
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, packageActive, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, types.NamespacedName{Namespace: CrossplaneNS, Name: name}, sa) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("service account %s/%s does not exist after %s (the installation creates it): %w", CrossplaneNS, name, packageActive, err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(lifetimeSeconds)}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return fmt.Errorf("cannot get a token of service account %s/%s: %w", CrossplaneNS, name, err)
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		b, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return fmt.Errorf("cannot read the API server's CA: %w", err)
		}
		ca = b
	}
	kc, err := clientcmd.Write(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"local": {Server: cfg.Host, CertificateAuthorityData: ca}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{name: {Token: tr.Status.Token}},
		Contexts:       map[string]*clientcmdapi.Context{"local": {Cluster: "local", AuthInfo: name}},
		CurrentContext: "local",
	})
	if err != nil {
		return err
	}
	return os.WriteFile(path, kc, 0o600)
}

// CrossplaneRoleFile is the ClusterRole that lets Crossplane core compose
// pool objects, relative to the checkout (docs/install.md, step 1).
const CrossplaneRoleFile = "examples/rbac/crossplane-burstpool.yaml"

// ApplyCrossplaneRole applies CrossplaneRoleFile from the checkout at root.
// It aggregates into the ClusterRole of Crossplane's Helm chart, so it
// matters where core runs under that role (Config.HelmInstall).
func ApplyCrossplaneRole(ctx context.Context, cfg *rest.Config, root string) error {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(CrossplaneRoleFile))) //nolint:gosec // a file of the checkout
	if err != nil {
		return err
	}
	return localcp.Apply(ctx, cfg, b)
}
