//go:build unix

package compose

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTest starts a server for one test, skipping when redis-server is not installed (the
// redistest package holds the CI policy; this package cannot import it).
func startTest(t *testing.T, opt NativeOptions) *Single {
	t.Helper()
	s, err := StartSingle(context.Background(), opt)
	if errors.Is(err, ErrRedisServerNotFound) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// requireRedis skips tests that need a real binary to reach the code under test.
func requireRedis(t *testing.T) {
	t.Helper()
	if _, err := findBinary(DefaultBinary); err != nil && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
}

// assertGone fails unless no process has pid any more (reaped, not merely a zombie).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Close (kill -0: %v)", pid, err)
		_ = syscall.Kill(pid, syscall.SIGKILL) // ours: do not leave it behind
	}
}

// privateTempDir points os.TempDir at an empty directory and returns it, so a test can see
// whether a failed start left its temp dir behind.
func privateTempDir(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind in temp dir: %s", e.Name())
	}
}

func TestStartSingleLifecycle(t *testing.T) {
	s := startTest(t, NativeOptions{})

	if got := command(t, s.Addr(), "PING"); !slices.Equal(got, []string{"PONG"}) {
		t.Fatalf("PING = %q, want PONG", got)
	}
	host, _, err := net.SplitHostPort(s.Addr())
	if err != nil || host != "127.0.0.1" {
		t.Errorf("Addr() = %q, want 127.0.0.1:PORT", s.Addr())
	}
	if got := s.Addrs(); !slices.Equal(got, []string{s.Addr()}) {
		t.Errorf("Addrs() = %q, want [%q]", got, s.Addr())
	}
	if s.Kind() != "single" {
		t.Errorf("Kind() = %q, want single", s.Kind())
	}
	want := Description{Kind: "single", Nodes: []Node{{Addr: s.Addr(), Role: "master"}}}
	if got := s.Describe(); got.Kind != want.Kind || !slices.Equal(got.Nodes, want.Nodes) {
		t.Errorf("Describe() = %+v, want %+v", got, want)
	}

	// The settings that make the server private and disposable.
	for _, c := range []struct{ cmd, want string }{
		{"CONFIG GET save", ""},
		{"CONFIG GET appendonly", "no"},
		{"CONFIG GET protected-mode", "no"},
		{"CONFIG GET port", s.Addr()[strings.LastIndexByte(s.Addr(), ':')+1:]},
		{"CONFIG GET dir", s.proc.dir},
	} {
		got := command(t, s.Addr(), c.cmd)
		if len(got) != 2 || got[1] != c.want {
			// macOS temp dirs are reached through a symlink; compare resolved paths.
			if len(got) == 2 && c.cmd == "CONFIG GET dir" && sameDir(got[1], c.want) {
				continue
			}
			t.Errorf("%s = %q, want value %q", c.cmd, got, c.want)
		}
	}

	// Its own process group keeps a terminal's Ctrl-C away from it.
	pid := s.Pid()
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("Getpgid(%d) = %d, %v; want its own group", pid, pgid, err)
	}

	dir := s.proc.dir
	if _, err := os.Stat(filepath.Join(dir, logFileName)); err != nil {
		t.Errorf("log file: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	assertGone(t, pid)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp dir %s still there after Close (stat: %v)", dir, err)
	}
	if log := s.Log(); !strings.Contains(log, "Ready to accept connections") {
		t.Errorf("Log() after Close lacks the startup lines:\n%s", log)
	}
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func TestStartSingleTwoAtOnce(t *testing.T) {
	requireRedis(t)
	var (
		wg   sync.WaitGroup
		srvs [2]*Single
		errs [2]error
	)
	for i := range srvs {
		wg.Go(func() { srvs[i], errs[i] = StartSingle(context.Background(), NativeOptions{}) })
	}
	wg.Wait()
	for i, s := range srvs {
		if errs[i] != nil {
			t.Fatalf("server %d: %v", i, errs[i])
		}
		t.Cleanup(func() { s.Close() })
	}
	if srvs[0].Addr() == srvs[1].Addr() {
		t.Fatalf("both servers on %s", srvs[0].Addr())
	}
	for _, s := range srvs {
		if got := command(t, s.Addr(), "PING"); !slices.Equal(got, []string{"PONG"}) {
			t.Errorf("PING %s = %q", s.Addr(), got)
		}
	}
}

func TestCloseTwiceAndConcurrently(t *testing.T) {
	s := startTest(t, NativeOptions{})
	pid := s.Pid()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Close() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent Close %d: %v", i, err)
		}
	}
	// Every concurrent caller returned only after the process was gone.
	assertGone(t, pid)
	if err := s.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
}

// A server killed from outside (as a fault test does) still closes cleanly.
func TestCloseAfterServerKilled(t *testing.T) {
	s := startTest(t, NativeOptions{})
	pid, dir := s.Pid(), s.proc.dir
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.proc.done
	if err := s.Close(); err != nil {
		t.Errorf("Close after SIGKILL: %v", err)
	}
	assertGone(t, pid)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp dir %s still there (stat: %v)", dir, err)
	}
}

func TestStartSingleExtraArgs(t *testing.T) {
	s := startTest(t, NativeOptions{ExtraArgs: []string{"--maxmemory", "100mb"}})
	if got := command(t, s.Addr(), "CONFIG GET maxmemory"); len(got) != 2 || got[1] != "104857600" {
		t.Errorf("CONFIG GET maxmemory = %q, want 104857600", got)
	}
}

// A server that needs a password is up when it says so (-NOAUTH) rather than PONG.
func TestStartSingleRequirePass(t *testing.T) {
	s := startTest(t, NativeOptions{ExtraArgs: []string{"--requirepass", "secret"}})
	if got := command(t, s.Addr(), "PING"); len(got) != 1 || !strings.HasPrefix(got[0], "-NOAUTH") {
		t.Errorf("PING = %q, want -NOAUTH", got)
	}
}

func TestStartSingleBadExtraArgs(t *testing.T) {
	requireRedis(t)
	tmp := privateTempDir(t)
	// A long timeout: the start must fail because the process exited, not because time ran out.
	_, err := StartSingle(context.Background(), NativeOptions{
		StartTimeout: time.Minute,
		ExtraArgs:    []string{"--no-such-option", "1"},
	})
	if !errors.Is(err, ErrServerExited) {
		t.Fatalf("err = %v, want ErrServerExited", err)
	}
	for _, want := range []string{"no-such-option", "Bad directive", "redis-server log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	var se *startError
	if !errors.As(err, &se) {
		t.Fatalf("err is %T, want *startError", err)
	}
	assertGone(t, se.pid)
	assertEmptyDir(t, tmp)
}

func TestStartSingleTimeout(t *testing.T) {
	requireRedis(t)
	tmp := privateTempDir(t)
	_, err := StartSingle(context.Background(), NativeOptions{StartTimeout: time.Nanosecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "StartTimeout") {
		t.Errorf("error does not name StartTimeout: %v", err)
	}
	var se *startError
	if errors.As(err, &se) {
		assertGone(t, se.pid)
	}
	assertEmptyDir(t, tmp)
}

func TestStartSingleCanceled(t *testing.T) {
	requireRedis(t)
	tmp := privateTempDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := StartSingle(ctx, NativeOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var se *startError
	if errors.As(err, &se) {
		assertGone(t, se.pid)
	}
	assertEmptyDir(t, tmp)
}

// holdPort listens on a free loopback port for the whole test, so a server told to use it
// loses the race that freePort can lose in real life.
func holdPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

func TestStartSinglePortRace(t *testing.T) {
	requireRedis(t)
	taken := holdPort(t)

	t.Run("retries on a new port", func(t *testing.T) {
		calls := 0
		pick := func(host string) (int, error) {
			calls++
			if calls == 1 {
				return taken, nil
			}
			return freePort(host)
		}
		s, err := startSingle(context.Background(), NativeOptions{}, pick)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if calls != 2 {
			t.Errorf("picked a port %d times, want 2", calls)
		}
		if got := command(t, s.Addr(), "PING"); !slices.Equal(got, []string{"PONG"}) {
			t.Errorf("PING = %q", got)
		}
	})

	t.Run("gives up after maxPortAttempts", func(t *testing.T) {
		tmp := privateTempDir(t)
		calls := 0
		pick := func(string) (int, error) { calls++; return taken, nil }
		_, err := startSingle(context.Background(), NativeOptions{StartTimeout: time.Minute}, pick)
		if !errors.Is(err, ErrServerExited) || !strings.Contains(err.Error(), "Address already in use") {
			t.Fatalf("err = %v, want ErrServerExited with the bind failure in the log", err)
		}
		if calls != maxPortAttempts {
			t.Errorf("tried %d ports, want %d", calls, maxPortAttempts)
		}
		var se *startError
		if errors.As(err, &se) {
			assertGone(t, se.pid)
		}
		assertEmptyDir(t, tmp)
	})
}
