package devplane

import (
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// IssueServerCert signs a serving certificate for a function or provider that
// runs outside the cluster, with the CA Crossplane core created (the
// crossplane-root-ca Secret's tls.crt and tls.key). It writes tls.crt,
// tls.key and ca.crt into dir, the layout function-sdk-go reads from its
// TLS certificates folder. The certificate is valid for 127.0.0.1, localhost
// and the given DNS names.
func IssueServerCert(caCertPEM, caKeyPEM []byte, dir string, dnsNames ...string) error {
	caCert, err := parseCert(caCertPEM)
	if err != nil {
		return fmt.Errorf("cannot read the Crossplane root CA certificate: %w", err)
	}
	caKey, err := parseKey(caKeyPEM)
	if err != nil {
		return fmt.Errorf("cannot read the Crossplane root CA key: %w", err)
	}
	der, key, err := localcp.Sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: firstOr(dnsNames, "localhost")},
		DNSNames:    append([]string{"localhost"}, dnsNames...),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}, caCert, caKey)
	if err != nil {
		return fmt.Errorf("cannot sign the serving certificate: %w", err)
	}
	return localcp.WriteTLSDir(dir, der, key, caCertPEM)
}

func firstOr(ss []string, d string) string {
	if len(ss) > 0 {
		return ss[0]
	}
	return d
}

func parseCert(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("no PEM block")
	}
	return x509.ParseCertificate(blk.Bytes)
}

func parseKey(b []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("no PEM block")
	}
	if k, err := x509.ParsePKCS1PrivateKey(blk.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(blk.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("unsupported private key: %w", err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key of type %T cannot sign", k)
	}
	return s, nil
}
