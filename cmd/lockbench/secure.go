package main

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

// secureUser is the ACL user of a topology lockbench starts with --auth.
const secureUser = "lockbench"

// secureServerName is a name the nodes' certificate carries besides 127.0.0.1 and localhost,
// and the name clients check on the docker provider: its sentinel nodes are dialled at
// container addresses known only once they run, too late to issue their certificate for
// them. A .invalid name never resolves to anything else.
const secureServerName = "redis.lockbench.invalid"

// secureStart is what a topology lockbench starts with --auth or --tls is given, and how its
// clients then connect: a random password in a file, a throwaway CA with one server
// certificate, all in dir (mode 0700, files 0600). The password is never printed, never on a
// command line: redis-server reads it from a config file, clients and generator processes
// from the file or their environment.
type secureStart struct {
	dir          string
	auth, tls    bool
	serverName   string // with tls: the name clients check (--tls-server-name); "": the host dialled
	passwordFile string // with auth
	caFile       string // with tls
	native       compose.NativeOptions
}

// newSecureStart makes dir (it must not exist; its parent must) and fills it, for a topology
// of provider.
func newSecureStart(dir, provider string, auth, tls bool) (*secureStart, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	s := &secureStart{dir: dir, auth: auth, tls: tls}
	if auth {
		b := make([]byte, 24)
		rand.Read(b) // crypto/rand does not fail
		pw := hex.EncodeToString(b)
		s.passwordFile = filepath.Join(dir, "password")
		if err := os.WriteFile(s.passwordFile, []byte(pw+"\n"), 0o600); err != nil {
			return nil, err
		}
		s.native.Auth = &compose.NativeAuth{User: secureUser, Password: pw}
	}
	if tls {
		ca, err := certgen.NewCA(dir, "lockbench throwaway CA")
		if err != nil {
			return nil, err
		}
		cert, key, err := ca.Issue(certgen.Cert{Name: "server", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost", secureServerName}})
		if err != nil {
			return nil, err
		}
		s.caFile = ca.CertFile
		if provider == providerDocker {
			s.serverName = secureServerName
		}
		s.native.TLS = &compose.NativeTLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile}
	}
	return s, nil
}

// settings are how clients reach topo, started with s.
func (s *secureStart) settings(spec compose.Spec, topo compose.Topology) (*conn.Settings, error) {
	o := conn.Options{Addrs: topo.Addrs(), Topology: spec.Kind, TLS: s.tls, CAFile: s.caFile, ServerName: s.serverName}
	if s.auth {
		o.User, o.PasswordFile = secureUser, s.passwordFile
		if spec.Kind == compose.KindSentinel {
			o.SentinelUser, o.SentinelPasswordFile = secureUser, s.passwordFile
		}
	}
	st, err := conn.New(o)
	if err != nil {
		return nil, fmt.Errorf("connection settings of the started topology: %w", err)
	}
	return st, nil
}

// flags are the connection flags of a lockbench run (or of a generator process, without the
// password files when withPasswordFiles is false: it gets the password in its environment)
// against a topology started with s.
func (s *secureStart) flags(kind string, withPasswordFiles bool) []string {
	var args []string
	if s.tls {
		args = append(args, "--tls", "--tls-ca-file", s.caFile)
		if s.serverName != "" {
			args = append(args, "--tls-server-name", s.serverName)
		}
	}
	if s.auth {
		args = append(args, "--user", secureUser)
		if withPasswordFiles {
			args = append(args, "--password-file", s.passwordFile)
		}
		if kind == compose.KindSentinel {
			args = append(args, "--sentinel-user", secureUser)
			if withPasswordFiles {
				args = append(args, "--sentinel-password-file", s.passwordFile)
			}
		}
	}
	return args
}

// remove deletes dir and what is in it.
func (s *secureStart) remove() error { return os.RemoveAll(s.dir) }
