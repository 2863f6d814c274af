// Package certgen makes a throwaway certificate authority and the certificates it signs, as PEM
// files in a directory: what lockbench gives a TLS topology it starts, and what tests of TLS
// use (through conntest). Everything is generated in Go (ECDSA P-256); nothing is fetched or
// shelled out to openssl.
package certgen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// DefaultValidity is how long NewCA's and Issue's certificates are valid when nothing else is
// said, from an hour before they are made (for clocks a little behind).
const DefaultValidity = 30 * 24 * time.Hour

// CA is a certificate authority whose key lives only in memory. Its methods are safe for
// concurrent use.
type CA struct {
	// CertFile is the CA certificate, PEM: for --tls-ca-file and redis-server's
	// tls-ca-cert-file.
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	dir      string
}

// NewCA makes a CA named name, valid from an hour ago for DefaultValidity, and writes its
// certificate to dir/ca.crt (dir must exist).
func NewCA(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(DefaultValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("certgen: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{cert: cert, key: key, dir: dir}
	if ca.CertFile, err = writePEM(filepath.Join(dir, "ca.crt"), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return ca, nil
}

// Cert says what certificate Issue makes. The zero value is a certificate for 127.0.0.1 and
// localhost, valid from an hour ago for DefaultValidity, usable by servers and clients alike
// (redis-server uses its server certificate as a client one towards masters and other nodes).
type Cert struct {
	// Name is the file name stem and common name; default "redis".
	Name string
	// IPs and DNSNames are the names the certificate is for; default 127.0.0.1 and localhost.
	IPs      []net.IP
	DNSNames []string
	// NotBefore and NotAfter bound its validity; zero means an hour ago and DefaultValidity
	// from now.
	NotBefore, NotAfter time.Time
}

// Issue makes a certificate signed by ca and writes it and its key (mode 0600) to ca's dir,
// named after c.Name and the serial number.
func (ca *CA) Issue(c Cert) (certFile, keyFile string, err error) {
	if c.Name == "" {
		c.Name = "redis"
	}
	if c.IPs == nil && c.DNSNames == nil {
		c.IPs, c.DNSNames = []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"}
	}
	if c.NotBefore.IsZero() {
		c.NotBefore = time.Now().Add(-time.Hour)
	}
	if c.NotAfter.IsZero() {
		c.NotAfter = time.Now().Add(DefaultValidity)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: c.Name},
		NotBefore:    c.NotBefore,
		NotAfter:     c.NotAfter,
		IPAddresses:  c.IPs,
		DNSNames:     c.DNSNames,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return "", "", fmt.Errorf("certgen: certificate %s: %w", c.Name, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	stem := filepath.Join(ca.dir, c.Name+"-"+tmpl.SerialNumber.Text(16))
	if certFile, err = writePEM(stem+".crt", "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	if keyFile, err = writePEM(stem+".key", "PRIVATE KEY", keyDER); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}

// serial returns a random 64-bit serial number: certificates of different CAs made in one
// process, or in two, never share one by accident.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n.Add(n, big.NewInt(1))
}

func writePEM(path, typ string, der []byte) (string, error) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return "", fmt.Errorf("certgen: %w", err)
	}
	return path, nil
}
