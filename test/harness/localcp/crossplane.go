package localcp

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// Crossplane core serves its Usage webhook inside its network namespace on
// crossplaneWebhookPort; the relay carries it out to the host port named
// crossplaneWebhookName, which the ValidatingWebhookConfiguration points
// the API server at by URL, as a Helm install points it at core's Service.
const (
	crossplaneWebhookName = "crossplane-webhook"
	crossplaneWebhookPort = 9443
	// noUsagesWebhook is Crossplane's own configuration of the webhook
	// that refuses to delete an object in use, in its module.
	noUsagesWebhook = "cluster/webhookconfigurations/usage.yaml"
)

// Names of the Secrets Crossplane's Helm chart has core init fill.
const (
	tlsCASecret     = "crossplane-root-ca"
	tlsServerSecret = "crossplane-tls-server"
	tlsClientSecret = "crossplane-tls-client"
)

func (u *upper) startCrossplane(ctx context.Context) error {
	if err := u.ensureNamespace(ctx, CrossplaneNS); err != nil {
		return err
	}
	if err := u.applyCRDs(ctx, u.cfg.CrossplaneCRDDir); err != nil {
		return fmt.Errorf("cannot install Crossplane's CRDs: %w", err)
	}
	// Core's identity: the plane's admin, or with HelmInstall the chart's
	// service account and roles, beside the RBAC manager.
	kubeconfig, rbacKubeconfig := u.c.Kubeconfig, ""
	if u.cfg.HelmInstall {
		mod, err := gomod.Dir(ctx, CrossplaneModule, CrossplaneVersion)
		if err != nil {
			return err
		}
		if kubeconfig, rbacKubeconfig, err = u.helmIdentities(ctx, mod); err != nil {
			return err
		}
	}
	common := []string{
		"KUBECONFIG=" + kubeconfig,
		"POD_NAMESPACE=" + CrossplaneNS,
		"POD_SERVICE_ACCOUNT=crossplane",
		"TLS_SERVER_SECRET_NAME=" + tlsServerSecret,
		"TLS_CLIENT_SECRET_NAME=" + tlsClientSecret,
	}
	// Init without webhooks: with them it points CRD conversion at core's
	// Service, which nothing routes to here.
	if err := u.crossplaneRun(ctx, "crossplane-init", slices.Concat(common, []string{
		"ENABLE_WEBHOOKS=false",
		"CRDS_PATH=" + u.cfg.CrossplaneCRDDir,
		"TLS_CA_SECRET_NAME=" + tlsCASecret,
	}), "core", "init"); err != nil {
		return err
	}
	rbacManager := make(chan error, 1)
	if u.cfg.HelmInstall {
		go func() { rbacManager <- u.startRBACManager(ctx, rbacKubeconfig) }()
	} else {
		rbacManager <- nil
	}
	clientDir := u.path("crossplane", "tls", "client")
	if err := u.writeSecret(ctx, CrossplaneNS, tlsClientSecret, clientDir); err != nil {
		return err
	}
	xpkg, xfn := u.path("crossplane", "cache", "xpkg"), u.path("crossplane", "cache", "xfn")
	for _, d := range []string{xpkg, xfn} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	env := slices.Concat(common, []string{
		// Core serves its Usage webhook, as a Helm install's does, so
		// objects in use cannot be deleted (see installNoUsagesWebhook).
		"ENABLE_WEBHOOKS=true",
		"TLS_SERVER_CERTS_DIR=" + u.pki.WebhookCertDir,
		"WEBHOOK_PORT=" + strconv.Itoa(crossplaneWebhookPort),
		"TLS_CLIENT_CERTS_DIR=" + clientDir,
		"XPKG_CACHE_DIR=" + xpkg,
		"XFN_CACHE_DIR=" + xfn,
		"METRICS_PORT=" + strconv.Itoa(nsMetricsPort),
		"HEALTH_PROBE_PORT=" + strconv.Itoa(nsHealthPort),
	}, u.cfg.CrossplaneEnv)
	p, err := u.startInNetns(netnsComponent{
		name:    "crossplane",
		path:    u.cfg.Binaries.Crossplane,
		args:    append([]string{"core", "start"}, u.cfg.CrossplaneArgs...),
		env:     env,
		forward: append([]int{u.c.Ports["apiserver"]}, u.cfg.ForwardPorts...),
		expose: map[string]int{"crossplane-health": nsHealthPort, "crossplane-metrics": nsMetricsPort,
			crossplaneWebhookName: crossplaneWebhookPort},
	})
	if err != nil {
		return err
	}
	if err := u.waitReady(ctx, p, httpOK(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/readyz", u.c.Ports["crossplane-health"]))); err != nil {
		return err
	}
	if err := <-rbacManager; err != nil {
		return err
	}
	return u.installUsageWebhook(ctx)
}

// installUsageWebhook installs Crossplane's Usage webhook configuration,
// pointed at core through its relay.
func (u *upper) installUsageWebhook(ctx context.Context) error {
	c, err := client.New(u.c.Config, client.Options{})
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(u.pki.CACert)
	if err != nil {
		return err
	}
	mod, err := gomod.Dir(ctx, CrossplaneModule, CrossplaneVersion)
	if err != nil {
		return err
	}
	if err := installNoUsagesWebhook(ctx, c, mod, u.c.Ports[crossplaneWebhookName], ca); err != nil {
		return fmt.Errorf("cannot install Crossplane's Usage webhook: %w", err)
	}
	return nil
}

// crossplaneRun runs the crossplane binary with args to completion, logging
// to logs/name.log: `core init` makes the TLS Secrets and applies core's
// CRDs, `rbac init` waits for the CRDs the RBAC manager watches.
func (u *upper) crossplaneRun(ctx context.Context, name string, env []string, args ...string) error {
	logPath := u.path("logs", name+".log")
	f, err := os.Create(logPath) //nolint:gosec // a log this package writes
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // written by the child
	ctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, u.cfg.Binaries.Crossplane, args...) //nolint:gosec // binary from the configuration
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("`crossplane %s` failed: %w; last lines of %s:\n%s", strings.Join(args, " "), err, logPath, tail(logPath, 40))
	}
	return nil
}

// writeSecret writes each key of Secret ns/name as a file in dir.
func (u *upper) writeSecret(ctx context.Context, ns, name, dir string) error {
	c, err := client.New(u.c.Config, client.Options{})
	if err != nil {
		return err
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		return fmt.Errorf("cannot read Secret %s/%s: %w", ns, name, err)
	}
	if len(s.Data) == 0 {
		return fmt.Errorf("the Secret %s/%s that `crossplane core init` fills is empty", ns, name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for k, v := range s.Data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// writeWebhookCert writes a serving certificate for 127.0.0.1 signed by the
// plane's CA into dir as tls.crt and tls.key, where core's webhook server
// reads them (TLS_SERVER_CERTS_DIR).
func writeWebhookCert(dir string, ca *x509.Certificate, caKey crypto.Signer) error {
	der, key, err := issueServing("crossplane-webhook", ca, caKey)
	if err != nil {
		return err
	}
	return WriteTLSDir(dir, der, key, nil)
}

// installNoUsagesWebhook installs Crossplane's crossplane-no-usages
// ValidatingWebhookConfiguration from its module (moduleDir), pointed at
// core's webhook on the host port and trusting the plane's CA (caPEM).
func installNoUsagesWebhook(ctx context.Context, c client.Client, moduleDir string, port int, caPEM []byte) error {
	b, err := os.ReadFile(filepath.Join(moduleDir, filepath.FromSlash(noUsagesWebhook))) //nolint:gosec // a file of the module cache
	if err != nil {
		return fmt.Errorf("cannot read Crossplane's Usage webhook configuration: %w", err)
	}
	w := &admissionv1.ValidatingWebhookConfiguration{}
	if err := yaml.Unmarshal(b, w); err != nil {
		return fmt.Errorf("cannot decode %s: %w", noUsagesWebhook, err)
	}
	if len(w.Webhooks) == 0 {
		return errors.New(noUsagesWebhook + " has no webhook")
	}
	for i := range w.Webhooks {
		cc := &w.Webhooks[i].ClientConfig
		path := "/"
		if cc.Service != nil && cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		url := fmt.Sprintf("https://127.0.0.1:%d%s", port, path)
		cc.Service, cc.URL, cc.CABundle = nil, &url, caPEM
	}
	return c.Create(ctx, w)
}
