package main

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn/conntest"
)

// refusedRun runs lockbench run as connTestUser, set up on a fresh server by the ACL SETUSER
// rule (its password and "on" added here), and returns the exit code, stderr and the result.
func refusedRun(t *testing.T, rule []string, args ...string) (int, string, string) {
	t.Helper()
	srv := redistest.NewServer(t)
	pwFile := conntest.PasswordFile(t, connTestPassword)
	setUser(t, srv, append([]string{"ACL", "SETUSER", connTestUser, "on", ">" + connTestPassword}, rule...))
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, append([]string{"run", "--addr", "redis://" + connTestUser + "@" + srv.Addr(), "--password-file", pwFile,
		"--warmup", "0s", "--no-results"}, args...)...)
	code, out := finish(t, cmd, errb)
	return code, errb.String(), out
}

// Issue 36, defect 2: rueidislock retries every failure inside WithContext, so a server that
// refused its scripts gave 0 acquisitions, 0 errors and exit 0. Its refusals are errors now.
func TestRueidislockRefusedScriptsFailTheRun(t *testing.T) {
	t.Parallel()
	code, errs, out := refusedRun(t, []string{"~*", "&*", "+@all", "-evalsha", "-eval"},
		"--driver", "rueidislock", "--concurrency", "2", "--keys", "2", "--duration", "1s")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errs)
	}
	if !strings.Contains(errs, "operations refused by the server's ACL") || !strings.Contains(errs, "NOPERM") {
		t.Errorf("stderr does not name the refusal:\n%s", errs)
	}
}

// The same with the keys refused: a --key-prefix outside the user's key pattern.
func TestRueidislockRefusedKeysFailTheRun(t *testing.T) {
	t.Parallel()
	code, errs, out := refusedRun(t, []string{"~bench:*", "&*", "+@all"},
		"--driver", "rueidislock", "--concurrency", "2", "--keys", "2", "--duration", "1s")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errs)
	}
	if !strings.Contains(errs, "NOPERM") {
		t.Errorf("stderr does not give the server's answer:\n%s", errs)
	}
}

// Issue 36, defect 3: a user without SUBSCRIBE ran lockcore with waiters in two processes (one
// process's waiters queue locally and never subscribe), made grants and exited 0 with no error.
// The refused subscriptions are errors of kind subscribe, with the server's message.
func TestRefusedSubscribeFailsTheRun(t *testing.T) {
	t.Parallel()
	code, errs, out := refusedRun(t, []string{"~*", "&*", "+@all", "-subscribe"},
		"--driver", "lockcore", "--procs", "2", "--concurrency", "4", "--keys", "2", "--duration", "1s")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errs)
	}
	for _, want := range []string{"errors map[subscribe:", "subscribe: NOPERM", "error replies NOPERM"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

// Issue 36, defect 5: with the server's maxclients exhausted the run said "N errors
// map[acquire:N]" and nothing of why. The error kinds keep the server's message, and the server's
// rejected connections fail the run by name.
func TestMaxClientsNamesItsCause(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t, "--maxclients", "6")
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--addr", srv.Addr(), "--driver", "redislock", "--concurrency", "16", "--keys", "4",
		"--duration", "1s", "--warmup", "0s", "--no-results")
	code, out := finish(t, cmd, errb)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errb)
	}
	for _, want := range []string{"max number of clients reached", "rejected_connections"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb)
		}
	}
}
