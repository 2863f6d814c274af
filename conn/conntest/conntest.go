// Package conntest makes what tests of TLS and credentials need: a certificate authority,
// certificates it signs (valid, expired, for other names), written as PEM files in the test's
// temp dir, and password files. It wraps package certgen for tests.
package conntest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockbench/lockbench/conn/certgen"
)

// CA is a test certificate authority. Its methods are safe for concurrent use.
type CA struct {
	// CertFile is the CA certificate, PEM, for --tls-ca-file and redis-server's --tls-ca-cert-file.
	CertFile string
	ca       *certgen.CA
}

// NewCA makes a CA named name in a new temp dir of t.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	ca, err := certgen.NewCA(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{CertFile: ca.CertFile, ca: ca}
}

// Cert says what certificate Issue makes; see certgen.Cert. The zero value is a certificate for
// 127.0.0.1 and localhost, valid from an hour ago, usable by servers and clients alike.
type Cert = certgen.Cert

// Issue makes a certificate signed by ca and returns its certificate and key files. A
// certificate whose NotAfter is zero is valid for a day.
func (ca *CA) Issue(t testing.TB, c Cert) (certFile, keyFile string) {
	t.Helper()
	if c.NotAfter.IsZero() {
		c.NotAfter = time.Now().Add(24 * time.Hour)
	}
	certFile, keyFile, err := ca.ca.Issue(c)
	if err != nil {
		t.Fatal(err)
	}
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
