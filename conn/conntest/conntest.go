// Package conntest makes what tests of TLS and credentials need: a certificate authority,
// certificates it signs (valid, expired, for other names), written as PEM files in the test's
// temp dir, and password files. Everything is generated in Go; nothing is fetched or shelled
// out to openssl.
package conntest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a test certificate authority. Its methods are safe for concurrent use.
type CA struct {
	// CertFile is the CA certificate, PEM, for --tls-ca-file and redis-server's --tls-ca-cert-file.
	CertFile string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	dir      string
}

var serial atomic.Int64

// NewCA makes a CA valid from an hour ago for a day, named name, in a new temp dir of t.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{cert: cert, key: key, dir: t.TempDir()}
	ca.CertFile = writePEM(t, filepath.Join(ca.dir, "ca.crt"), "CERTIFICATE", der)
	return ca
}

// Cert says what certificate Issue makes. The zero value is a certificate for 127.0.0.1 and
// localhost, valid from an hour ago for a day, usable by servers and clients alike (redis-server
// uses its server certificate as a client one towards replicas and other nodes).
type Cert struct {
	// Name is the file name stem and common name; default "redis".
	Name string
	// IPs and DNSNames are the names the certificate is for; default 127.0.0.1 and localhost.
	IPs      []net.IP
	DNSNames []string
	// NotBefore and NotAfter bound its validity; zero means an hour ago and a day from now.
	NotBefore, NotAfter time.Time
}

// Issue makes a certificate signed by ca and returns its certificate and key files.
func (ca *CA) Issue(t testing.TB, c Cert) (certFile, keyFile string) {
	t.Helper()
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
		c.NotAfter = time.Now().Add(24 * time.Hour)
	}
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
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
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	stem := filepath.Join(ca.dir, c.Name+"-"+tmpl.SerialNumber.String())
	certFile = writePEM(t, stem+".crt", "CERTIFICATE", der)
	keyFile = writePEM(t, stem+".key", "PRIVATE KEY", keyDER)
	return certFile, keyFile
}

// PasswordFile writes password and a line end to a new file in a temp dir of t, mode 0600,
// and returns its path.
func PasswordFile(t testing.TB, password string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(path, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writePEM(t testing.TB, path, typ string, der []byte) string {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
