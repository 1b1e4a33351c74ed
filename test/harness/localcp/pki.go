package localcp

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// pki holds the files the API server and the controller manager read.
type pki struct {
	CACert, ServingCert, ServingKey string
	SAKey, SAPub                    string
	TokenFile                       string
	Token                           string
	// WebhookCertDir holds tls.crt and tls.key of Crossplane core's
	// webhook server.
	WebhookCertDir string
}

// adminUser is the static-token user of the admin kubeconfig.
const adminUser = "localcp-admin"

// writePKI makes a CA, a serving certificate for 127.0.0.1 signed by it, a
// service-account key pair and a static token for an admin in
// system:masters, under dir.
func writePKI(dir string) (pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return pki{}, err
	}
	p := pki{
		CACert:      filepath.Join(dir, "ca.crt"),
		ServingCert: filepath.Join(dir, "apiserver.crt"),
		ServingKey:  filepath.Join(dir, "apiserver.key"),
		SAKey:       filepath.Join(dir, "sa.key"),
		SAPub:       filepath.Join(dir, "sa.pub"),
		TokenFile:   filepath.Join(dir, "tokens.csv"),
	}
	caDER, caKey, err := Sign(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "localcp-ca"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
	if err != nil {
		return pki{}, fmt.Errorf("cannot make the CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return pki{}, err
	}
	srvDER, srvKey, err := issueServing("kube-apiserver", ca, caKey)
	if err != nil {
		return pki{}, err
	}
	// Crossplane core's webhook server, reached on 127.0.0.1 through its
	// relay.
	p.WebhookCertDir = filepath.Join(dir, "crossplane-webhook")
	if err := writeWebhookCert(p.WebhookCertDir, ca, caKey); err != nil {
		return pki{}, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pki{}, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return pki{}, err
	}
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return pki{}, err
	}
	p.Token = hex.EncodeToString(tok)

	files := []struct {
		path string
		data []byte
	}{
		{p.CACert, pemBlock("CERTIFICATE", caDER)},
		{p.ServingCert, pemBlock("CERTIFICATE", srvDER)},
		{p.ServingKey, keyPEM(srvKey)},
		{p.SAKey, keyPEM(saKey)},
		{p.SAPub, pemBlock("PUBLIC KEY", saPub)},
		{p.TokenFile, fmt.Appendf(nil, "%s,%s,%s,\"system:masters\"\n", p.Token, adminUser, adminUser)},
	}
	for _, f := range files {
		if f.data == nil {
			return pki{}, fmt.Errorf("cannot encode %s", f.path)
		}
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return pki{}, err
		}
	}
	return p, nil
}

// issueServing makes a serving certificate for 127.0.0.1 (and the API
// server's names) signed by the CA, and its key.
func issueServing(cn string, ca *x509.Certificate, caKey crypto.Signer) ([]byte, *ecdsa.PrivateKey, error) {
	der, key, err := Sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
	}, ca, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot make the %s serving certificate: %w", cn, err)
	}
	return der, key, nil
}

// Sign makes a P-256 key and a certificate of it from tmpl, with a random
// serial number and valid from an hour ago for a year, signed by the CA
// (ca, caKey), or by itself when ca is nil. It returns the certificate's DER
// and the key.
func Sign(tmpl, ca *x509.Certificate, caKey crypto.Signer) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	t := *tmpl
	now := time.Now()
	t.SerialNumber, t.NotBefore, t.NotAfter = serial(), now.Add(-time.Hour), now.AddDate(1, 0, 0)
	if ca == nil {
		ca, caKey = &t, key
	}
	der, err := x509.CreateCertificate(rand.Reader, &t, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	return der, key, nil
}

// WriteTLSDir writes a certificate (der) and its key into dir as tls.crt
// and tls.key, the layout of a server's TLS_SERVER_CERTS_DIR, and the CA
// that signed it as ca.crt when caPEM is not nil.
func WriteTLSDir(dir string, der []byte, key *ecdsa.PrivateKey, caPEM []byte) error {
	keyPEM := keyPEM(key)
	if keyPEM == nil {
		return errors.New("cannot encode the private key")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files := map[string][]byte{"tls.crt": pemBlock("CERTIFICATE", der), "tls.key": keyPEM}
	if caPEM != nil {
		files["ca.crt"] = caPEM
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func keyPEM(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil
	}
	return pemBlock("PRIVATE KEY", der)
}

// writeKubeconfig writes an admin kubeconfig for the API server at port.
func writeKubeconfig(path string, port int, p pki) error {
	ca, err := os.ReadFile(p.CACert)
	if err != nil {
		return err
	}
	const name = "localcp"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://127.0.0.1:%d", port),
		CertificateAuthorityData: ca,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: p.Token}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	kc.CurrentContext = name
	return clientcmd.WriteToFile(*kc, path)
}
