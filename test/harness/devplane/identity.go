package devplane

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// ProviderKubeconfig gives the capacity provider the identity Crossplane's
// pod runtime would: it creates the service account the runtime config
// names, asks the API server for a token of it (TokenRequest, valid for
// lifetime) and writes a kubeconfig at path that authenticates with it, so
// the provider runs with the shipped roles and nothing else.
func ProviderKubeconfig(ctx context.Context, c client.Client, cfg *rest.Config, path string, lifetimeSeconds int64) error {
	return AccountKubeconfig(ctx, c, cfg, ProviderServiceAccount, path, lifetimeSeconds)
}

// AccountKubeconfig does what ProviderKubeconfig does for the service
// account name of CrossplaneNS.
func AccountKubeconfig(ctx context.Context, c client.Client, cfg *rest.Config, name, path string, lifetimeSeconds int64) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: CrossplaneNS}}
	if err := c.Create(ctx, sa); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot create service account %s/%s: %w", CrossplaneNS, name, err)
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
