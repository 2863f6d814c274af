package target

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/conn/certgen"
)

// SecureUser is the ACL user of a topology started with Spec.Auth.
const SecureUser = "lockbench"

// SecureServerName is a name the nodes' certificate carries besides 127.0.0.1 and localhost,
// and the name clients check on the docker provider: its sentinel nodes are dialled at
// container addresses known only once they run, too late to issue their certificate for
// them. A .invalid name never resolves to anything else.
const SecureServerName = "redis.lockbench.invalid"

// Secure is what a topology started with an ACL user (Auth) or TLS is given, and how its
// clients then connect: a random password in a file, a throwaway CA with one server
// certificate, all in Dir (mode 0700, files 0600). The password is never printed, never on a
// command line: redis-server reads it from a config file, clients and generator processes
// from the file or their environment. Its fields are read-only once made.
type Secure struct {
	// Dir holds the files below.
	Dir string
	// Auth and TLS say what the nodes require.
	Auth, TLS bool
	// ServerName is, with TLS, the name clients check (SecureServerName on the docker
	// provider); "": the host dialled.
	ServerName string
	// PasswordFile holds SecureUser's password, with Auth.
	PasswordFile string
	// CAFile is the CA that signed the nodes' certificate, with TLS.
	CAFile string
	// Native is how nodes start: its Auth and TLS are set.
	Native compose.NativeOptions
}

// NewSecure makes dir (it must not exist; its parent must) and fills it, for a topology of
// provider.
func NewSecure(dir, provider string, auth, tls bool) (*Secure, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	s := &Secure{Dir: dir, Auth: auth, TLS: tls}
	if auth {
		b := make([]byte, 24)
		rand.Read(b) // crypto/rand does not fail
		pw := hex.EncodeToString(b)
		s.PasswordFile = filepath.Join(dir, "password")
		if err := os.WriteFile(s.PasswordFile, []byte(pw+"\n"), 0o600); err != nil {
			return nil, err
		}
		s.Native.Auth = &compose.NativeAuth{User: SecureUser, Password: pw}
	}
	if tls {
		ca, err := certgen.NewCA(dir, "lockbench throwaway CA")
		if err != nil {
			return nil, err
		}
		cert, key, err := ca.Issue(certgen.Cert{Name: "server", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost", SecureServerName}})
		if err != nil {
			return nil, err
		}
		s.CAFile = ca.CertFile
		if provider == ProviderDocker {
			s.ServerName = SecureServerName
		}
		s.Native.TLS = &compose.NativeTLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile}
	}
	return s, nil
}

// Settings are how clients reach topo, started with s.
func (s *Secure) Settings(spec compose.Spec, topo compose.Topology) (*conn.Settings, error) {
	o := conn.Options{Addrs: topo.Addrs(), Topology: spec.Kind, TLS: s.TLS, CAFile: s.CAFile, ServerName: s.ServerName}
	if s.Auth {
		o.User, o.PasswordFile = SecureUser, s.PasswordFile
		if spec.Kind == compose.KindSentinel {
			o.SentinelUser, o.SentinelPasswordFile = SecureUser, s.PasswordFile
		}
	}
	st, err := conn.New(o)
	if err != nil {
		return nil, fmt.Errorf("connection settings of the started topology: %w", err)
	}
	return st, nil
}

// Remove deletes Dir and what is in it.
func (s *Secure) Remove() error { return os.RemoveAll(s.Dir) }
