package main

import (
	"context"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn/conntest"
	"github.com/lockbench/lockbench/drivers"
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

// neverDriver is a lock that is never granted and never fails: Lock waits until its context
// ends, as a library that retries every failure inside its wait does. A negative control, so
// that no "every driver" loop runs it; the test binary, re-run as lockbench, has it too.
type neverDriver struct{}

func init() { drivers.RegisterControl(neverDriver{}) }

func (neverDriver) Name() string        { return "never-test" }
func (neverDriver) Kinds() drivers.Kind { return drivers.KindMutex }
func (neverDriver) Open(context.Context, drivers.Config) (drivers.Locker, error) {
	return neverDriver{}, nil
}
func (d neverDriver) NewWorker() drivers.Worker          { return d }
func (neverDriver) Settings() map[string]string          { return nil }
func (neverDriver) Close() error                         { return nil }
func (neverDriver) Unlock(context.Context, string) error { return drivers.ErrNotHeld }
func (neverDriver) Lock(ctx context.Context, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}

// Issue 36, Deliver 2: a run with 0 acquisitions and 0 errors exited 0. It fails, and says so in
// the summary and the result.
func TestZeroAcquisitionsFailTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "never-test", "--concurrency", "2", "--keys", "2",
		"--duration", "300ms", "--warmup", "0s", "--out", dir)
	code, out := finish(t, cmd, errb)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailure, out, errb)
	}
	if !strings.Contains(errb.String(), "FAILED: 0 acquisitions") {
		t.Errorf("stderr does not say why:\n%s", errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 1 || len(f.Runs[0].Failed) == 0 || !strings.Contains(f.Runs[0].Failed[0], "0 acquisitions") {
		t.Errorf("the result does not say why the run failed: %+v", f.Runs)
	}
}
