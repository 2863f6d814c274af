//go:build unix

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/acl"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn/conntest"
	"github.com/redis/rueidis"
)

// runCheck runs lockbench check with args and returns its exit code, stdout and both outputs.
func runCheck(t *testing.T, args ...string) (code int, stdout, all string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = dispatch(append([]string{"check"}, args...), &out, &errb)
	return code, out.String(), out.String() + errb.String()
}

// adminDo runs one command on the plaintext node at addr as the default user.
func adminDo(t *testing.T, addr string, cmd ...string) rueidis.RedisResult {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true, AlwaysRESP2: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Do(ctx, c.B().Arbitrary(cmd[0]).Args(cmd[1:]...).Build())
}

// Redis's default persistence (RDB snapshots, appendonly no) loses every grant since the last
// snapshot on a restart: check warns about it as it warns about appendfsync everysec.
func TestCheckWarnsAboutRDBOnly(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t, "--save", "3600 1 300 100 60 10000", "--appendonly", "no")
	code, out, all := runCheck(t, "--addr", srv.Addr())
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, all)
	}
	for _, want := range []string{"persistence RDB (save 3600 1 300 100 60 10000)", "warning: " + srv.Addr() + ": RDB snapshots only", "loses every grant since the last snapshot"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, all)
		}
	}
}

// A user that may not run CONFIG GET: the persistence is unknown, and check says so instead of
// "RDB (save unknown)" for a server with no persistence at all.
func TestCheckPersistenceUnknownWithoutConfigGet(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	aclSetUser(t, srv.Addr(), connTestUser, "on", ">"+connTestPassword, "~*", "&*", "+@all", "-config")
	pw := conntest.PasswordFile(t, connTestPassword)
	code, out, all := runCheck(t, "--addr", "redis://"+connTestUser+"@"+srv.Addr(), "--password-file", pw)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, all)
	}
	if strings.Contains(out, "RDB (save unknown)") {
		t.Errorf("check calls an unknown persistence RDB:\n%s", out)
	}
	for _, want := range []string{"persistence unknown (CONFIG GET refused; INFO says appendonly no)", "a restarted master loses every grant since its last RDB snapshot, or all of them"} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, all)
		}
	}
	assertNoPassword(t, "", map[string]string{"output": all})
}

// A cluster whose master has no replica: a fail-over cannot lose a grant (there is nothing to
// promote), but the master's slots and locks are lost with it; check says that, not
// "replication is asynchronous".
func TestCheckClusterWithoutReplicas(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	if err := adminDo(t, srv.Addr(), "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Error(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, _ := adminDo(t, srv.Addr(), "CLUSTER", "INFO").ToString()
		if strings.Contains(s, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the one-node cluster did not become ok:\n%s", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, out, all := runCheck(t, "--topology", "cluster", "--addr", srv.Addr())
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, all)
	}
	if !strings.Contains(out, "a cluster master with 0 replicas: if it fails, its slots (and the locks on them) are lost with it") {
		t.Errorf("check does not warn about a master without replicas:\n%s", out)
	}
	if strings.Contains(out, "replication is asynchronous") {
		t.Errorf("check warns about replication where there is none:\n%s", out)
	}
}

// A sentinel deployment whose sentinels decide with a quorum of 1 is flagged.
func TestCheckSentinelQuorumOne(t *testing.T) {
	t.Parallel()
	s := redistest.NewSentinel(t)
	for _, addr := range s.Addrs() {
		if err := adminDo(t, addr, "SENTINEL", "SET", s.MasterName(), "quorum", "1").Error(); err != nil {
			t.Fatal(err)
		}
	}
	code, out, all := runCheck(t, "--topology", "sentinel", "--addr", strings.Join(s.Addrs(), ","))
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, all)
	}
	if !strings.Contains(out, "sentinel quorum 1 for master "+s.MasterName()) {
		t.Errorf("check does not flag quorum 1:\n%s", out)
	}
}

// A user whose keys are limited to bench:* ('lockbench acl --key-prefix bench:'), given the
// default prefix: check, run and sweep refuse it before any load (exit 2), naming the
// --key-prefix to use, where the old run measured and then listed ~18 refused commands.
func TestPrefixACLCheckedUpFront(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	for _, user := range []string{"bench", "ops"} {
		args := acl.SetUser(acl.Options{User: user, KeyPrefix: "bench:", Password: connTestPassword})
		if err := adminDo(t, srv.Addr(), args...).Error(); err != nil {
			t.Fatal(err)
		}
	}
	pw := conntest.PasswordFile(t, connTestPassword)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"check, default prefix", []string{"check", "--addr", "redis://bench@" + srv.Addr(), "--password-file", pw}, exitUsage, "run with --key-prefix bench:"},
		{"run, default prefix", []string{"run", "--addr", "redis://bench@" + srv.Addr(), "--password-file", pw, "--duration", "1s", "--warmup", "0s", "--no-results"}, exitUsage, "run with --key-prefix bench:"},
		{"sweep, default prefix", []string{"sweep", "--addr", "redis://bench@" + srv.Addr(), "--password-file", pw, "--duration", "1s", "--warmup", "0s", "--no-results"}, exitUsage, "run with --key-prefix bench:"},
		// A user whose name says nothing about its prefix, and who may not read its own
		// rules: the message says what to give.
		{"check, another user", []string{"check", "--addr", "redis://ops@" + srv.Addr(), "--password-file", pw}, exitUsage, "give --key-prefix the prefix its key patterns (~…) allow"},
		{"check, its prefix", []string{"check", "--addr", "redis://bench@" + srv.Addr(), "--password-file", pw, "--key-prefix", "bench:"}, exitOK, "single deployment at"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := dispatch(tc.args, &out, &errb)
			all := out.String() + errb.String()
			if code != tc.code || !strings.Contains(all, tc.want) {
				t.Errorf("exit %d, output %q; want exit %d containing %q", code, all, tc.code, tc.want)
			}
			if strings.Contains(all, "acq/s") {
				t.Errorf("measured before refusing:\n%s", all)
			}
			assertNoPassword(t, "", map[string]string{"output": all})
		})
	}
}
