//go:build unix

package main

import (
	"errors"
	"github.com/lockbench/lockbench/kept"
	"github.com/lockbench/lockbench/target"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
)

// Item 5 of issue 22: every driver on single, sentinel and cluster topologies lockbench starts
// with an ACL user and TLS only on every node.
func TestRunSecureTopologies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a sentinel deployment and a cluster")
	}
	all := "lockcore,redisson,redsync,redislock,rueidislock,naive"
	for _, topology := range []string{"single", "sentinel", "cluster"} {
		t.Run(topology, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			errb := &syncBuffer{}
			cmd := lockbench(t, errb, "run", "--topology", topology, "--auth", "--tls", "--driver", all,
				"--concurrency", "2", "--keys", "10", "--duration", "500ms", "--warmup", "100ms", "--out", dir)
			code, out := finish(t, cmd, errb)
			if code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
			}
			f := readResult(t, dir)
			everyDriverClean(t, f, all)
			c := f.Topology.Connection
			if c["auth"] != "user lockbench, password" || !strings.HasPrefix(c["tls"], "on") {
				t.Errorf("result's connection = %v", c)
			}
			if topology == "sentinel" && c["sentinel_auth"] != "user lockbench, password" {
				t.Errorf("result's connection = %v", c)
			}
			if !strings.Contains(errb.String(), "an ACL user with a random password, TLS only") {
				t.Errorf("stderr does not say the topology is secure:\n%s", errb)
			}
		})
	}
}

// up --auth --tls keeps a secure topology running; the run line it prints names the CA and the
// password file (0600), never the password, and works as printed; down removes them.
func TestUpSecure(t *testing.T) {
	dir := t.TempDir()
	up := spawnUp(t, nil, "--topology", "single", "--auth", "--tls", "--state-dir", dir, "--name", "sec")
	sum := up.summary(t)
	run := sum["run"][0]
	secrets := kept.SecretsPath(dir, "sec")
	for _, want := range []string{"--tls --tls-ca-file " + filepath.Join(secrets, "ca.crt"), "--user lockbench --password-file " + filepath.Join(secrets, "password")} {
		if !strings.Contains(run, want) {
			t.Errorf("run line lacks %q: %s", want, run)
		}
	}
	pw, err := os.ReadFile(filepath.Join(secrets, "password"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"password", "ca.crt"} {
		if fi, err := os.Stat(filepath.Join(secrets, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v", name, err, fi.Mode())
		}
	}
	if code, out, errs := lockbenchIn("status", "--state-dir", dir); code != exitOK || strings.Count(out, " ok\n") != 1 {
		t.Errorf("status: exit %d\n%s%s", code, out, errs)
	}
	args := strings.Fields(run)[1:]
	args = append(args, "--driver", "lockcore,naive", "--duration", "300ms", "--warmup", "0s", "--concurrency", "2", "--keys", "10", "--no-results")
	code, out, errs := lockbenchIn(args...)
	if code != exitOK || !strings.Contains(out, "acq/s") {
		t.Errorf("lockbench %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	// Without the credentials, the same topology refuses lockbench: it is bad input, exit 2.
	if code, _, errs := lockbenchIn("run", "--addr", sum["addr"][0], "--tls", "--tls-ca-file", filepath.Join(secrets, "ca.crt"), "--no-results", "--duration", "100ms"); code != exitUsage || !strings.Contains(errs, "NOAUTH") && !strings.Contains(errs, "requires a password") {
		t.Errorf("run without the password: exit %d\n%s", code, errs)
	}
	if code, out, errs := lockbenchIn("down", "--name", "sec", "--state-dir", dir); code != exitOK {
		t.Fatalf("down: exit %d\n%s%s", code, out, errs)
	}
	if code := up.exit(t); code != exitOK {
		t.Fatalf("up exited %d\n%s", code, up.stderr)
	}
	if _, err := os.Stat(secrets); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the secrets are still there after down: %v", err)
	}
	if p := strings.TrimSpace(string(pw)); strings.Contains(up.stdout.String()+up.stderr.String()+out+errs, p) {
		t.Error("the password was printed")
	}
}

// lockbench sweep --auth --tls: every step of every driver runs clean on the secure topology
// it starts, and the password it drew is in nothing it printed or wrote (report and plots
// included).
func TestSweepSecure(t *testing.T) {
	t.Parallel()
	tmp, dir := t.TempDir(), t.TempDir()
	secret := watchSecret(t, tmp)
	errb := &syncBuffer{}
	cmd := lockbenchEnv(t, errb, []string{"TMPDIR=" + tmp}, "sweep", "--auth", "--tls", "--driver", "lockcore,naive",
		"--concurrency-steps", "1,2", "--keys", "10", "--duration", "300ms", "--warmup", "0s", "--slo", "p99=1s",
		"--rounds", "1", "--precision", "0", "--out", dir) // one run per step, as the count below says
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	f := sweepFile(t, dir)
	if len(f.Runs) != 4 {
		t.Errorf("%d runs; want 2 steps of 2 drivers", len(f.Runs))
	}
	everyDriverClean(t, f, "lockcore,naive")
	if c := f.Topology.Connection; c["auth"] != "user lockbench, password" || !strings.HasPrefix(c["tls"], "on") {
		t.Errorf("result's connection = %v", c)
	}
	assertSecretNowhere(t, secret.Password(t), map[string]string{"stdout": out, "stderr": errb.String()}, dir)
	assertServerGone(t, errb.String())
}

// lockbench run --procs 2 --auth --tls: the generator processes connect to the secure topology
// with the CA and user from their flags and the password from their environment, both
// processes' shares merge clean, and the password is in nothing printed or written.
func TestRunProcsSecure(t *testing.T) {
	t.Parallel()
	tmp, dir := t.TempDir(), t.TempDir()
	secret := watchSecret(t, tmp)
	errb := &syncBuffer{}
	const drivers = "lockcore,naive"
	cmd := lockbenchEnv(t, errb, []string{"TMPDIR=" + tmp}, "run", "--procs", "2", "--auth", "--tls", "--driver", drivers,
		"--concurrency", "4", "--keys", "10", "--duration", "500ms", "--warmup", "0s", "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	f := readResult(t, dir)
	everyDriverClean(t, f, drivers)
	for _, r := range f.Runs {
		if r.Fleet == nil || r.Fleet.Procs != 2 || len(r.Fleet.Processes) != 2 || len(r.Fleet.Lost) != 0 {
			t.Errorf("%s: fleet %+v; want both processes' shares", r.Driver, r.Fleet)
		}
	}
	if c := f.Topology.Connection; c["auth"] != "user lockbench, password" || !strings.HasPrefix(c["tls"], "on") {
		t.Errorf("result's connection = %v", c)
	}
	assertSecretNowhere(t, secret.Password(t), map[string]string{"stdout": out, "stderr": errb.String()}, dir)
	assertServerGone(t, errb.String())
}

// Up's run line for a docker secure start names the server name its certificate carries:
// sentinel's container addresses are not in the certificate. The generator processes' flags
// are checked in package bench (TestSecureConnOfProcesses), the certificate in package target.
func TestSecureStartDockerServerName(t *testing.T) {
	for _, provider := range []string{target.ProviderNative, target.ProviderDocker} {
		s, err := target.NewSecure(filepath.Join(t.TempDir(), "secrets"), provider, true, true)
		if err != nil {
			t.Fatal(err)
		}
		st := kept.State{Topology: "sentinel", Addrs: []string{"172.18.0.5:26379"}, Description: &compose.Description{Kind: compose.KindSentinel, MasterName: "mymaster"},
			Secure: &kept.Secure{TLS: true, CAFile: s.CAFile, ServerName: s.ServerName, User: target.SecureUser, PasswordFile: s.PasswordFile}}
		line := st.RunLine()
		named := strings.Contains(line, "--tls-server-name "+target.SecureServerName)
		if named != (provider == target.ProviderDocker) {
			t.Errorf("%s: run line %q: --tls-server-name for docker only", provider, line)
		}
		s.Remove()
	}
}

func TestSecureFlagsUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--auth", "--addr", "127.0.0.1:1"}, "--auth is for the topology lockbench starts"},
		{[]string{"run", "--tls-ca-file", "x"}, "--tls-ca-file is for a deployment given with --addr"},
	} {
		code, _, errs := lockbenchIn(c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errs, c.want)
		}
	}
}
