package target

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A secure start's certificate serves 127.0.0.1 and SecureServerName, the name clients check on
// the docker provider (its sentinels are dialled at container addresses the certificate cannot
// carry); natively clients check the host dialled. Moved from cmd/lockbench.
func TestNewSecureServerName(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{ProviderNative, ProviderDocker} {
		s, err := NewSecure(filepath.Join(t.TempDir(), "secrets"), provider, true, true)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := tls.LoadX509KeyPair(s.Native.TLS.CertFile, s.Native.TLS.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := leaf.VerifyHostname(SecureServerName); err != nil {
			t.Errorf("%s: %v", provider, err)
		}
		if err := leaf.VerifyHostname("127.0.0.1"); err != nil {
			t.Errorf("%s: %v", provider, err)
		}
		if named := s.ServerName == SecureServerName; named != (provider == ProviderDocker) {
			t.Errorf("%s: ServerName %q: want %s for docker only", provider, s.ServerName, SecureServerName)
		}
		if err := s.Remove(); err != nil {
			t.Error(err)
		}
	}
}

// A topology started with Auth and TLS is reached with the secure start's user, password and CA:
// Open connects, the result records the connection without the password, and Close stops the
// server and removes its password and certificates.
func TestOpenSecure(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "secrets")
	tg := openNative(t, Spec{Auth: true, TLS: true, SecureDir: dir})
	sec := tg.Secure()
	if sec == nil || sec.Dir != dir || !sec.Auth || !sec.TLS {
		t.Fatalf("Secure %+v; want auth and TLS in %s", sec, dir)
	}
	pw, err := os.ReadFile(sec.PasswordFile)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Conn().User() != SecureUser || !tg.Conn().HasPassword() || !tg.Conn().TLS() {
		t.Errorf("Conn: user %q, password %v, TLS %v; want %s, a password, TLS", tg.Conn().User(), tg.Conn().HasPassword(), tg.Conn().TLS(), SecureUser)
	}
	if _, err := tg.ServerStats(t.Context()); err != nil {
		t.Errorf("ServerStats over TLS as %s: %v", SecureUser, err)
	}
	c := tg.Info().Connection
	if c == nil || !strings.Contains(c["auth"], SecureUser) || !strings.HasPrefix(c["tls"], "on") {
		t.Errorf("Info().Connection %v; want the user and TLS", c)
	}
	for k, v := range c {
		if strings.Contains(v, strings.TrimSpace(string(pw))) {
			t.Errorf("Info().Connection[%q] holds the password", k)
		}
	}
	addr := tg.Nodes()[0].Addr
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("secure dir after Close: %v; want it removed", err)
	}
	if answers(addr) {
		t.Errorf("%s still answers after Close", addr)
	}
}
