//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn/conntest"
	"github.com/lockbench/lockbench/faults"
	"github.com/redis/rueidis"
)

const (
	connTestUser     = "bench"
	connTestPassword = "Pw-3b81c7e2-must-never-appear"
)

// secureServer starts a redis-server that speaks TLS only, with its certificate from a CA the
// test makes, whose default user is off and whose one user is connTestUser.
func secureServer(t *testing.T) (*compose.Single, *conntest.CA) {
	t.Helper()
	ca := conntest.NewCA(t, "lockbench test CA")
	cert, key := ca.Issue(t, conntest.Cert{})
	srv := redistest.NewTLSServer(t, compose.NativeTLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile}, aclUserArgs()...)
	return srv, ca
}

func aclUserArgs() []string {
	return []string{"--user", "default", "off", "--user", connTestUser, "on", ">" + connTestPassword, "~*", "&*", "+@all"}
}

// assertNoPassword fails the test if the password is in any of texts or in any file under dir.
func assertNoPassword(t *testing.T, dir string, texts map[string]string) {
	t.Helper()
	for name, text := range texts {
		if strings.Contains(text, connTestPassword) {
			t.Errorf("the password is in %s:\n%s", name, text)
		}
	}
	if dir == "" {
		return
	}
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(connTestPassword)) {
			t.Errorf("the password is in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Errorf("no file written in %s", dir)
	}
}

// The acceptance run of issue 22: every driver against a TLS-only Redis with an ACL user.
func TestRunAgainstTLSWithACLUser(t *testing.T) {
	t.Parallel() // a lockbench subprocess on servers, files and ports of its own
	srv, ca := secureServer(t)
	pwFile := conntest.PasswordFile(t, connTestPassword)
	dir := t.TempDir()
	errb := &syncBuffer{}
	all := "lockcore,redisson,redsync,redislock,rueidislock,naive"
	cmd := lockbench(t, errb, "run", "--addr", "rediss://"+connTestUser+"@"+srv.Addr(), "--tls-ca-file", ca.CertFile,
		"--password-file", pwFile, "--driver", all, "--concurrency", "2", "--keys", "20",
		"--duration", "1s", "--warmup", "100ms", "--key-prefix", "tlsbench:", "--benchfmt", "--out", dir)
	code, _ := finish(t, cmd, errb)
	stdout := cmd.Stdout.(*bytes.Buffer).String()
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errb)
	}
	f := readResult(t, dir)
	ran := map[string]bool{}
	for _, r := range f.Runs {
		ran[r.Driver] = true
		if r.ThroughputPerS <= 0 || r.Violations != 0 || r.Errors != 0 || !r.Complete {
			t.Errorf("%s: throughput %v, violations %d, errors %d, complete %v", r.Driver, r.ThroughputPerS, r.Violations, r.Errors, r.Complete)
		}
	}
	for _, d := range strings.Split(all, ",") {
		if !ran[d] {
			t.Errorf("driver %s did not run (skipped: %+v)", d, f.Skipped)
		}
	}
	if c := f.Topology.Connection; c["auth"] != "user bench, password" || !strings.Contains(c["tls"], "CA "+ca.CertFile) {
		t.Errorf("result's connection = %v", c)
	}
	if d := f.Deployment; d == nil || len(d.Nodes) != 1 || d.Nodes[0].Version == "" || d.Nodes[0].PingRTTMinUS <= 0 || d.Nodes[0].MaxClients <= 0 {
		t.Errorf("result's deployment = %+v", d)
	}
	if !strings.Contains(errb.String(), "rediss://bench@"+srv.Addr()) {
		t.Errorf("stderr does not name the deployment as given:\n%s", errb)
	}
	assertNoPassword(t, dir, map[string]string{"stdout": stdout, "stderr": errb.String()})

	// The run's keys are gone (lockbench cleans an attached deployment with the same settings).
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), ForceSingleClient: true, DisableCache: true,
		Username: connTestUser, Password: connTestPassword, TLSConfig: tlsTrusting(t, ca)})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	keys, err := rdb.Do(context.Background(), rdb.B().Keys().Pattern("*tlsbench:*").Build()).AsStrSlice()
	if err != nil || len(keys) != 0 {
		t.Errorf("keys left: %v (%v)", keys, err)
	}
}

// --procs: the generator processes connect with the parent's settings; the password reaches
// them by environment, and a password given in the URL is redacted everywhere.
func TestRunProcsWithPasswordInURL(t *testing.T) {
	t.Parallel() // a lockbench subprocess on servers, files and ports of its own
	srv, ca := secureServer(t)
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--addr", "rediss://"+connTestUser+":"+connTestPassword+"@"+srv.Addr(), "--tls-ca-file", ca.CertFile,
		"--driver", "lockcore", "--procs", "2", "--concurrency", "2", "--keys", "10",
		"--duration", "500ms", "--warmup", "0s", "--out", dir)
	code, _ := finish(t, cmd, errb)
	stdout := cmd.Stdout.(*bytes.Buffer).String()
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errb)
	}
	if !strings.Contains(errb.String(), "process list") {
		t.Errorf("no warning about the password in the URL:\n%s", errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 1 || f.Runs[0].ThroughputPerS <= 0 || f.Runs[0].Fleet == nil || len(f.Runs[0].Fleet.Processes) != 2 {
		t.Fatalf("runs %+v", f.Runs)
	}
	if args := strings.Join(f.Command, " "); !strings.Contains(args, "rediss://bench:***@") {
		t.Errorf("result's args %q: want the URL with its password redacted", args)
	}
	assertNoPassword(t, dir, map[string]string{"stdout": stdout, "stderr": errb.String()})
}

// Each way of getting the connection wrong is bad input: exit 2, a message that says what to
// do, before anything is measured, soon, and without the password.
func TestRunConnBadInput(t *testing.T) {
	srv, ca := secureServer(t)
	plain := redistest.NewServer(t, aclUserArgs()...)
	other := conntest.NewCA(t, "another CA")
	oldCert, oldKey := ca.Issue(t, conntest.Cert{Name: "expired", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	expired := redistest.NewTLSServer(t, compose.NativeTLS{CertFile: oldCert, KeyFile: oldKey, CAFile: ca.CertFile}, aclUserArgs()...)
	pw := conntest.PasswordFile(t, connTestPassword)
	wrong := conntest.PasswordFile(t, "not-"+connTestPassword)
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	secure := "rediss://" + connTestUser + "@" + srv.Addr()
	cases := []struct {
		name string
		args []string
		out  string
	}{
		{"wrong password", []string{"--addr", secure, "--tls-ca-file", ca.CertFile, "--password-file", wrong}, "WRONGPASS"},
		{"unknown user", []string{"--addr", "rediss://nobody@" + srv.Addr(), "--tls-ca-file", ca.CertFile, "--password-file", pw}, `refused user "nobody"`},
		{"no password", []string{"--addr", plain.Addr()}, "requires a password"},
		{"plaintext to a TLS port", []string{"--addr", "redis://" + connTestUser + "@" + srv.Addr(), "--password-file", pw}, "use rediss://"},
		{"TLS to a plaintext port", []string{"--addr", "rediss://" + connTestUser + "@" + plain.Addr(), "--tls-ca-file", ca.CertFile, "--password-file", pw}, "plaintext port"},
		{"CA that did not sign", []string{"--addr", secure, "--tls-ca-file", other.CertFile, "--password-file", pw}, "not signed by a CA"},
		{"expired server certificate", []string{"--addr", "rediss://" + connTestUser + "@" + expired.Addr(), "--tls-ca-file", ca.CertFile, "--password-file", pw}, "expired"},
		{"missing key file", []string{"--addr", secure, "--tls-ca-file", ca.CertFile, "--password-file", pw, "--tls-cert-file", oldCert, "--tls-key-file", "/nonexistent/key.pem"}, "--tls-key-file"},
		{"empty password file", []string{"--addr", secure, "--tls-ca-file", ca.CertFile, "--password-file", empty}, "is empty"},
		{"bad scheme", []string{"--addr", "http://" + srv.Addr()}, `scheme "http"`},
		{"bad port", []string{"--addr", "redis://127.0.0.1:99999"}, "port"},
		{"skip-verify with a CA", []string{"--addr", secure, "--tls-ca-file", ca.CertFile, "--tls-insecure-skip-verify", "--password-file", pw}, "skip-verify would win"},
		{"TLS flags without --addr", []string{"--tls-ca-file", ca.CertFile}, "is for a deployment given with --addr"},
		{"sentinel user on single", []string{"--addr", secure, "--password-file", pw, "--sentinel-user", "s"}, "for --topology sentinel"},
		{"unix socket behind --net", []string{"--addr", "unix:///tmp/redis.sock", "--net", "latency=1ms"}, "unix:// socket"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			start := time.Now()
			code := dispatch(append([]string{"run", "--duration", "1s", "--no-results"}, tc.args...), &out, &errb)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %v to refuse", took) // a hang, not a measurement
			}
			all := out.String() + errb.String()
			if code != exitUsage || !strings.Contains(all, tc.out) {
				t.Errorf("exit %d, output %q; want exit %d containing %q", code, all, exitUsage, tc.out)
			}
			if strings.Contains(all, "acq/s") {
				t.Errorf("measured before refusing:\n%s", all)
			}
			assertNoPassword(t, "", map[string]string{"output": all})
		})
	}
}

// tlsTrusting is a client TLS config that trusts ca.
func tlsTrusting(t *testing.T, ca *conntest.CA) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{RootCAs: pool}
}

// aclSetUser runs ACL SETUSER on the node at addr (plaintext, default user).
func aclSetUser(t *testing.T, addr string, rule ...string) {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true, AlwaysRESP2: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Do(context.Background(), c.B().Arbitrary("ACL", "SETUSER").Args(rule...).Build()).Error(); err != nil {
		t.Fatalf("ACL SETUSER on %s: %v", addr, err)
	}
}

// Sentinel's own credentials are separate from the master's: each reaches the servers it is for.
func TestRunSentinelWithSeparateCredentials(t *testing.T) {
	s := redistest.NewSentinel(t)
	const sentinelPassword = "Sp-6c0e-sentinel-secret"
	for _, addr := range s.Addrs() {
		aclSetUser(t, addr, "watcher", "on", ">"+sentinelPassword, "+@all")
	}
	for _, n := range s.Describe().Nodes {
		if n.Role != compose.RoleSentinel {
			aclSetUser(t, n.Addr, connTestUser, "on", ">"+connTestPassword, "~*", "&*", "+@all")
		}
	}
	pw := conntest.PasswordFile(t, connTestPassword)
	spw := conntest.PasswordFile(t, sentinelPassword)
	base := []string{"run", "--topology", "sentinel", "--addr", strings.Join(s.Addrs(), ","), "--user", connTestUser, "--password-file", pw, "--sentinel-user", "watcher"}

	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, append(base, "--sentinel-password-file", spw, "--driver", "lockcore,redsync,naive",
		"--concurrency", "2", "--keys", "10", "--duration", "500ms", "--warmup", "0s", "--out", dir)...)
	code, _ := finish(t, cmd, errb)
	stdout := cmd.Stdout.(*bytes.Buffer).String()
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errb)
	}
	f := readResult(t, dir)
	for _, r := range f.Runs {
		if r.ThroughputPerS <= 0 || r.Violations != 0 || r.Errors != 0 {
			t.Errorf("%s: throughput %v, violations %d, errors %d", r.Driver, r.ThroughputPerS, r.Violations, r.Errors)
		}
	}
	if len(f.Runs) != 3 || f.Topology.Connection["sentinel_auth"] != "user watcher, password" {
		t.Errorf("%d runs, connection %v", len(f.Runs), f.Topology.Connection)
	}
	assertNoPassword(t, dir, map[string]string{"stdout": stdout, "stderr": errb.String()})
	if strings.Contains(stdout+errb.String(), sentinelPassword) {
		t.Error("the sentinel password is in the output")
	}

	// The master's password given as the sentinels' is refused by the sentinels, and the reverse
	// by the master: each goes only where it belongs.
	for name, files := range map[string][2]string{"sentinel": {pw, pw}, "master": {spw, spw}} {
		var out, eb bytes.Buffer
		code := dispatch([]string{"run", "--topology", "sentinel", "--addr", strings.Join(s.Addrs(), ","),
			"--user", connTestUser, "--password-file", files[0], "--sentinel-user", "watcher", "--sentinel-password-file", files[1],
			"--duration", "1s", "--no-results"}, &out, &eb)
		if code != exitUsage || !strings.Contains(eb.String(), "WRONGPASS") {
			t.Errorf("wrong %s password: exit %d, stderr %q; want %d and WRONGPASS", name, code, eb.String(), exitUsage)
		}
	}
}

// A unix:// socket reaches every driver and lockbench's own connections.
func TestRunOverUnixSocket(t *testing.T) {
	t.Parallel() // a lockbench subprocess on servers, files and ports of its own
	sock := filepath.Join(t.TempDir(), "r.sock")
	redistest.NewServer(t, "--unixsocket", sock, "--unixsocketperm", "700")
	dir := t.TempDir()
	errb := &syncBuffer{}
	all := "lockcore,redisson,redsync,redislock,rueidislock,naive"
	cmd := lockbench(t, errb, "run", "--addr", "unix://"+sock, "--driver", all, "--concurrency", "2", "--keys", "10",
		"--duration", "300ms", "--warmup", "0s", "--out", dir)
	code, _ := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, cmd.Stdout, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 6 {
		t.Fatalf("%d runs, skipped %+v", len(f.Runs), f.Skipped)
	}
	for _, r := range f.Runs {
		if r.ThroughputPerS <= 0 || r.Violations != 0 || r.Errors != 0 {
			t.Errorf("%s: throughput %v, violations %d, errors %d", r.Driver, r.ThroughputPerS, r.Violations, r.Errors)
		}
	}
	if f.Topology.Nodes[0].Addr != sock || f.Topology.Connection["transport"] != "unix socket" {
		t.Errorf("topology %+v", f.Topology)
	}
}

// TLS goes over --net's proxies: lockbench dials the proxy and does the handshake itself.
func TestRunTLSThroughNet(t *testing.T) {
	t.Parallel() // a lockbench subprocess on servers, files and ports of its own
	srv, ca := secureServer(t)
	pw := conntest.PasswordFile(t, connTestPassword)
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--addr", "rediss://"+connTestUser+"@"+srv.Addr(), "--tls-ca-file", ca.CertFile, "--password-file", pw,
		"--net", "latency=100us", "--driver", "lockcore,redislock", "--concurrency", "2", "--keys", "10",
		"--duration", "300ms", "--warmup", "0s", "--no-results")
	code, _ := finish(t, cmd, errb)
	if code != exitOK || !strings.Contains(errb.String(), "client connections went through") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, cmd.Stdout, errb)
	}
	if out := cmd.Stdout.(*bytes.Buffer).String(); !strings.Contains(out, "lockcore") || !strings.Contains(out, "redislock") {
		t.Errorf("summary lacks a driver:\n%s", out)
	}
}

// lockbench check: the preflight, over TLS with an ACL user, with the warnings a lock
// deployment deserves.
func TestCheckWarnsAboutEvictionAndPersistence(t *testing.T) {
	ca := conntest.NewCA(t, "lockbench test CA")
	cert, key := ca.Issue(t, conntest.Cert{})
	srv := redistest.NewTLSServer(t, compose.NativeTLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile},
		append(aclUserArgs(), "--maxmemory", "10mb", "--maxmemory-policy", "allkeys-lru", "--appendonly", "yes", "--appendfsync", "everysec")...)
	pw := conntest.PasswordFile(t, connTestPassword)
	var out, errb bytes.Buffer
	code := dispatch([]string{"check", "--addr", "rediss://" + connTestUser + "@" + srv.Addr(), "--tls-ca-file", ca.CertFile, "--password-file", pw}, &out, &errb)
	all := out.String() + errb.String()
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, all)
	}
	for _, want := range []string{"single deployment at rediss://bench@", "Redis 7", "policy allkeys-lru", "AOF (appendfsync everysec)", "PING RTT",
		"warning: " + srv.Addr() + ": maxmemory-policy allkeys-lru", "appendfsync everysec: a crash can lose"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check output lacks %q:\n%s", want, all)
		}
	}
	assertNoPassword(t, "", map[string]string{"output": all})

	code = dispatch([]string{"check", "--addr", "rediss://" + connTestUser + "@" + srv.Addr(), "--tls-ca-file", ca.CertFile,
		"--password-file", conntest.PasswordFile(t, "wrong")}, &out, &errb)
	if code != exitUsage {
		t.Errorf("check with a wrong password: exit %d, want %d", code, exitUsage)
	}
}

// --fault on an attached deployment with an ACL user and TLS only: the fail-over command goes
// with the run's credentials and TLS (rediss://user@…, --password-file), fires without error,
// the replica takes over, and the password is in nothing lockbench printed or wrote.
func TestRunFaultOnAttachedSecureCluster(t *testing.T) {
	t.Parallel() // a lockbench subprocess on servers, files and ports of its own
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ca := conntest.NewCA(t, "lockbench test CA")
	cert, key := ca.Issue(t, conntest.Cert{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := compose.StartCluster(ctx, compose.NativeOptions{
		TLS:  &compose.NativeTLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile},
		Auth: &compose.NativeAuth{User: connTestUser, Password: connTestPassword},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	replica, err := faults.Resolve(c.Describe(), faults.Node{Role: faults.RoleReplica, N: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--topology", "cluster", "--addr", "rediss://"+connTestUser+"@"+c.Addrs()[0],
		"--tls-ca-file", ca.CertFile, "--password-file", conntest.PasswordFile(t, connTestPassword),
		"--fault", "failover:replica1@300ms", "--allow-faults-on-attached", "--driver", "lockcore",
		"--concurrency", "4", "--keys", "50", "--duration", "2s", "--warmup", "0s", "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 1 || len(f.Runs[0].Faults) != 1 {
		t.Fatalf("%d runs; want 1 with its fault", len(f.Runs))
	}
	r := f.Runs[0]
	if flt := r.Faults[0]; !flt.Fired || flt.Error != "" || flt.Addr != replica {
		t.Errorf("fault %+v; want fired on %s without error", flt, replica)
	}
	if r.Violations != 0 || r.Acquisitions == 0 {
		t.Errorf("%d violations, %d acquisitions", r.Violations, r.Acquisitions)
	}
	if !slices.Contains(c.Masters(), replica) {
		t.Errorf("%s is not a master after the run's CLUSTER FAILOVER; masters %v", replica, c.Masters())
	}
	assertNoPassword(t, dir, map[string]string{"stdout": out, "stderr": errb.String()})
}
