package localcp

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
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
