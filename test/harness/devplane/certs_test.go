package devplane

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// newCA makes a CA shaped like Crossplane's root CA (an RSA key in PKCS#1).
func newCA(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "crossplane-root-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// TestIssueServerCertHandshake proves that a client trusting only the CA (as
// Crossplane core does) completes a TLS handshake with the issued certificate
// when it dials 127.0.0.1.
func TestIssueServerCertHandshake(t *testing.T) {
	caCert, caKey := newCA(t)
	dir := t.TempDir()
	if err := IssueServerCert(caCert, caKey, dir, FunctionName); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_ = c.(*tls.Conn).Handshake()
		_ = c.Close()
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caCert)
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("handshake with the issued certificate failed: %v", err)
	}
	_ = c.Close()
}

func TestIssueServerCertRejectsGarbage(t *testing.T) {
	if err := IssueServerCert([]byte("nope"), []byte("nope"), t.TempDir()); err == nil {
		t.Error("IssueServerCert() accepted a CA that is not PEM")
	}
}
