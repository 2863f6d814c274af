//go:build unix

package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn/conntest"
	"github.com/redis/rueidis"
)

const aclTestPrefix = "aclbench:"

// aclLine runs lockbench acl for user and returns the line it printed, as arguments.
func aclLine(t *testing.T, user, pwFile string) []string {
	t.Helper()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "acl", "--key-prefix", aclTestPrefix, "--user", user, "--password-file", pwFile)
	code, out := finish(t, cmd, errb)
	if code != exitOK || strings.Count(out, "\n") != 1 {
		t.Fatalf("lockbench acl: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	if strings.Contains(out, connTestPassword) {
		t.Fatalf("the password is in the line: %s", out)
	}
	return strings.Fields(out) // the prefix has no character that needs quoting
}

// setUser runs args (an ACL SETUSER command) on srv as the default user.
func setUser(t *testing.T, srv *compose.Single, args []string) {
	t.Helper()
	admin := clientAs(t, srv, "", "")
	if err := admin.Do(t.Context(), admin.B().Arbitrary(args...).Build()).Error(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

func clientAs(t *testing.T, srv *compose.Single, user, password string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), ForceSingleClient: true, DisableCache: true,
		Username: user, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Item 6 of issue 22: the user 'lockbench acl' prints runs every driver, and may do nothing else.
func TestACLUserRunsEveryDriver(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	pwFile := conntest.PasswordFile(t, connTestPassword)
	setUser(t, srv, aclLine(t, connTestUser, pwFile))

	dir := t.TempDir()
	errb := &syncBuffer{}
	all := "lockcore,lockcore-fair,lockcore-fenced,redisson,redisson-fair,redsync,redislock,rueidislock,naive"
	cmd := lockbench(t, errb, "run", "--addr", "redis://"+connTestUser+"@"+srv.Addr(), "--password-file", pwFile,
		"--driver", all, "--concurrency", "2", "--keys", "10", "--hold", "100us",
		"--duration", "500ms", "--warmup", "100ms", "--key-prefix", aclTestPrefix, "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	f := readResult(t, dir)
	everyDriverClean(t, f, all)
	if !strings.Contains(errb.String(), "CONFIG GET is not allowed") {
		t.Errorf("the preflight does not say it could not read the persistence settings:\n%s", errb)
	}

	// Read-write locks use other commands (HDEL, HKEYS, HLEN) and a channel of their own.
	errb = &syncBuffer{}
	cmd = lockbench(t, errb, "run", "--addr", "redis://"+connTestUser+"@"+srv.Addr(), "--password-file", pwFile,
		"--driver", "lockcore,redisson", "--workload", "rw", "--concurrency", "2", "--keys", "4", "--hold", "100us",
		"--duration", "500ms", "--warmup", "0s", "--key-prefix", aclTestPrefix, "--no-results")
	if code, out := finish(t, cmd, errb); code != exitOK {
		t.Fatalf("rw: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}

	user := clientAs(t, srv, connTestUser, connTestPassword)
	for _, c := range []struct {
		name string
		cmd  rueidis.Completed
	}{
		{"FLUSHALL", user.B().Flushall().Build()},
		{"CONFIG SET", user.B().ConfigSet().ParameterValue().ParameterValue("maxmemory", "1").Build()},
		{"a key outside the prefix", user.B().Set().Key("orders:1").Value("x").Build()},
		{"a channel outside the prefix", user.B().Publish().Channel("orders").Message("x").Build()},
		{"KEYS", user.B().Keys().Pattern("*").Build()},
	} {
		if err := user.Do(t.Context(), c.cmd).Error(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("%s: %v, want NOPERM", c.name, err)
		}
	}
}

// A run as a user that lacks one command the driver needs fails, and says which command and key.
func TestRunNamesACLRefusal(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	pwFile := conntest.PasswordFile(t, connTestPassword)
	line := slices.DeleteFunc(aclLine(t, connTestUser, pwFile), func(a string) bool { return a == "+hincrby" })
	setUser(t, srv, line)

	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--addr", "redis://"+connTestUser+"@"+srv.Addr(), "--password-file", pwFile,
		"--driver", "lockcore", "--concurrency", "2", "--keys", "4", "--duration", "300ms", "--warmup", "0s",
		"--key-prefix", aclTestPrefix, "--no-results")
	code, out := finish(t, cmd, errb)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errb)
	}
	for _, want := range []string{
		"operations refused by the server's ACL",
		`user "bench" may not use HINCRBY (hincrby aclbench:0 f 1)`,
		"'lockbench acl --key-prefix aclbench: --user bench'",
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb)
		}
	}
	if !bytes.Contains([]byte(out), []byte("acl_refused")) && !strings.Contains(errb.String(), "acl_refused") {
		t.Errorf("the errors are not counted as acl_refused:\nstdout:\n%s\nstderr:\n%s", out, errb)
	}
}

// A --password-file that cannot be read is named by its flag, not its argument, which may be
// the password itself typed where the path goes; an empty one is refused.
func TestACLPasswordFileNotEchoed(t *testing.T) {
	t.Parallel()
	const typed = "Typed-the-Password-7c1"
	code, out, errs := lockbenchIn("acl", "--password-file", typed)
	if code != exitUsage || out != "" || strings.Contains(errs, typed) || !strings.Contains(errs, "the file given to --password-file cannot be read: no such file") {
		t.Errorf("acl with an unreadable --password-file: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	empty := conntest.PasswordFile(t, "")
	if code, _, errs := lockbenchIn("acl", "--password-file", empty); code != exitUsage || !strings.Contains(errs, "is empty: its first line must be the password") {
		t.Errorf("acl with an empty --password-file: exit %d, stderr %q", code, errs)
	}
}

// --adapter-keys grants an adapter's declared keys for the prefix's lock names, and refuses a
// pattern that could name other keys.
func TestACLAdapterKeys(t *testing.T) {
	t.Parallel()
	code, out, errs := lockbenchIn("acl", "--key-prefix", "bench:", "--adapter-keys", "queue:{{name}}", "--adapter-keys", "{name}:tokens")
	if code != exitOK || !strings.Contains(out, " ~queue:{bench:*} ") || !strings.Contains(out, " ~bench:*:tokens ") {
		t.Errorf("acl --adapter-keys: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs := lockbenchIn("acl", "--adapter-keys", "*"); code != exitUsage || !strings.Contains(errs, `--adapter-keys: keyspace: bad declared key pattern "*": no {name}`) {
		t.Errorf("acl --adapter-keys '*': exit %d, stderr %q", code, errs)
	}
}
