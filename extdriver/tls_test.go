package extdriver_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/conn/conntest"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
)

const (
	tlsTestUser     = "bench"
	tlsTestPassword = "pw-5e1d7b-never-printed"
)

// mutualTLS starts a server that speaks TLS only, demands a client certificate signed by a new
// CA and knows only tlsTestUser, and returns the Config that reaches it: the CA, the client
// certificate and the password all given as files, as on lockbench's command line.
func mutualTLS(t *testing.T) drivers.Config {
	t.Helper()
	ca := conntest.NewCA(t, "extdriver test CA")
	srvCert, srvKey := ca.Issue(t, conntest.Cert{})
	cert, key := ca.Issue(t, conntest.Cert{Name: "client"})
	srv := redistest.NewTLSServer(t, compose.NativeTLS{CertFile: srvCert, KeyFile: srvKey, CAFile: ca.CertFile, AuthClients: "yes"},
		"--user", "default", "off", "--user", tlsTestUser, "on", ">"+tlsTestPassword, "~*", "&*", "+@all")
	s, err := conn.New(conn.Options{Addrs: []string{"rediss://" + srv.Addr()}, User: tlsTestUser,
		PasswordFile: conntest.PasswordFile(t, tlsTestPassword), CAFile: ca.CertFile, CertFile: cert, KeyFile: key,
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return drivers.Config{Topology: compose.KindSingle, Addrs: s.Addrs(), Conn: s, Concurrency: 4}
}

// TestEnvCarriesTLSFiles: an adapter is told the CA, the client certificate and key (absolute
// paths, so it may run in another directory) and the server name, besides the password.
func TestEnvCarriesTLSFiles(t *testing.T) {
	dir := t.TempDir()
	ca := conntest.NewCA(t, "env test CA")
	cert, key := ca.Issue(t, conntest.Cert{Name: "client"})
	t.Chdir(dir)
	for src, dst := range map[string]string{ca.CertFile: "ca.crt", cert: "client.crt", key: "client.key"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := conn.New(conn.Options{Addrs: []string{"rediss://127.0.0.1:6380"}, CAFile: "ca.crt", CertFile: "client.crt",
		KeyFile: "client.key", ServerName: "redis.internal", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	env := extdriver.Env(drivers.Config{Addrs: s.Addrs(), Conn: s})
	// The directory as the process sees it (a temporary directory may be behind a symlink).
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		extdriver.EnvTLS + "=1",
		extdriver.EnvTLSCAFile + "=" + filepath.Join(wd, "ca.crt"),
		extdriver.EnvTLSCertFile + "=" + filepath.Join(wd, "client.crt"),
		extdriver.EnvTLSKeyFile + "=" + filepath.Join(wd, "client.key"),
		extdriver.EnvTLSServerName + "=redis.internal",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("no %s in %q", want, env)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, extdriver.EnvTLSInsecure+"=") {
			t.Errorf("%s set without --tls-insecure-skip-verify", kv)
		}
	}
}

// TestAdaptersOverMutualTLS: the redsync adapter (Go, lockbench's conn) and the redis-py one
// (Python's ssl) pass driver-check on a server that demands a client certificate from a private
// CA and a password: both reach them only through the environment lockbench gives them. The
// password is in none of driver-check's output.
func TestAdaptersOverMutualTLS(t *testing.T) {
	cfg := mutualTLS(t)
	fails, out := checkSelf(t, "redsync", "", cfg, nil)
	if len(fails) != 0 {
		t.Errorf("the redsync adapter over mutual TLS fails driver-check:\n%s", out)
	}
	if strings.Contains(out, tlsTestPassword) {
		t.Errorf("the password is in driver-check's output:\n%s", out)
	}

	py := python(t)
	script, err := filepath.Abs("../adapters/redispy_lock.py")
	if err != nil {
		t.Fatal(err)
	}
	var pyOut strings.Builder
	pyFails, err := extdriver.Check(t.Context(), extdriver.CheckOptions{
		Spec: "exec:redis-py=" + py + " " + script, Config: cfg, Out: &pyOut,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pyFails) != 0 {
		t.Errorf("the redis-py adapter over mutual TLS fails driver-check:\n%s", pyOut.String())
	}
	if strings.Contains(pyOut.String(), tlsTestPassword) {
		t.Errorf("the password is in driver-check's output:\n%s", pyOut.String())
	}
}

// TestEnvCarriesSentinelAuth: the sentinels' own user and password reach an adapter, the
// password from its file (--sentinel-password-file), in the environment only.
func TestEnvCarriesSentinelAuth(t *testing.T) {
	s, err := conn.New(conn.Options{Addrs: []string{"127.0.0.1:26379"}, Topology: compose.KindSentinel,
		SentinelUser: "watcher", SentinelPasswordFile: conntest.PasswordFile(t, "sentinel-pw-31"),
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	env := extdriver.Env(drivers.Config{Topology: compose.KindSentinel, Addrs: s.Addrs(), MasterName: "m", Conn: s})
	for _, want := range []string{extdriver.EnvSentinelUser + "=watcher", extdriver.EnvSentinelPassword + "=sentinel-pw-31"} {
		if !slices.Contains(env, want) {
			t.Errorf("no %s in the adapter's environment", strings.SplitN(want, "=", 2)[0])
		}
	}
}
