//go:build unix

package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// inline sends one inline command over a raw connection and returns the first lines of the
// reply (a RESP array or bulk string spans several), so these tests check the server itself.
func inline(t *testing.T, addr, cmd string, lines int) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, cmd+"\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	var b strings.Builder
	for range lines {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reply to %q after %q: %v", cmd, b.String(), err)
		}
		b.WriteString(line)
	}
	return b.String()
}

func TestNewServer(t *testing.T) {
	var pid int
	t.Run("server", func(t *testing.T) {
		s := NewServer(t)
		pid = s.Pid()
		if got := inline(t, s.Addr(), "PING", 1); got != "+PONG\r\n" {
			t.Errorf("PING = %q", got)
		}
	})
	if pid == 0 {
		return // skipped: no redis-server
	}
	// The subtest's cleanup has run: the server must be gone.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("redis-server %d still exists after its test ended (kill -0: %v)", pid, err)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func TestNewServerExtraArgs(t *testing.T) {
	s := NewServer(t, "--maxmemory", "100mb")
	if got := inline(t, s.Addr(), "CONFIG GET maxmemory", 5); !strings.HasSuffix(got, "$9\r\n104857600\r\n") {
		t.Errorf("CONFIG GET maxmemory = %q, want 104857600", got)
	}
}

func TestNewServerParallel(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			s := NewServer(t)
			if got := inline(t, s.Addr(), "PING", 1); got != "+PONG\r\n" {
				t.Errorf("PING = %q", got)
			}
		})
	}
}

// fakeTB records what NewServer does to its test instead of doing it. Skip and Fatal end the
// calling goroutine as the real ones do, so run NewServer through fakeTB.run.
type fakeTB struct {
	testing.TB // the real test, for everything not overridden

	mu       sync.Mutex
	skipped  bool
	failed   bool
	msgs     []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) record(skip bool, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if skip {
		f.skipped = true
	} else {
		f.failed = true
	}
	f.msgs = append(f.msgs, msg)
}

func (f *fakeTB) Skip(args ...any) { f.record(true, fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeTB) Skipf(format string, args ...any) {
	f.record(true, fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (f *fakeTB) SkipNow()          { f.record(true, ""); runtime.Goexit() }
func (f *fakeTB) Fatal(args ...any) { f.record(false, fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.record(false, fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (f *fakeTB) FailNow()                          { f.record(false, ""); runtime.Goexit() }
func (f *fakeTB) Error(args ...any)                 { f.record(false, fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(format string, args ...any) { f.record(false, fmt.Sprintf(format, args...)) }
func (f *fakeTB) Cleanup(fn func())                 { f.mu.Lock(); f.cleanups = append(f.cleanups, fn); f.mu.Unlock() }

// run calls fn(f) on a goroutine of its own, waits for it to return or Goexit, then runs the
// registered cleanups.
func (f *fakeTB) run(fn func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestNewServerMissingBinary(t *testing.T) {
	tests := []struct {
		ci       string
		wantSkip bool
	}{
		{ci: "", wantSkip: true},
		{ci: "false", wantSkip: true},
		{ci: "true", wantSkip: false},
	}
	for _, tt := range tests {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			t.Setenv("CI", tt.ci)
			f := &fakeTB{TB: t}
			f.run(func(tb testing.TB) {
				NewServer(tb)
				t.Error("NewServer returned without a redis-server")
			})
			if f.skipped != tt.wantSkip || f.failed == tt.wantSkip {
				t.Errorf("skipped=%v failed=%v, want skipped=%v", f.skipped, f.failed, tt.wantSkip)
			}
			msg := strings.Join(f.msgs, "\n")
			for _, want := range []string{"redis-server not found in PATH", "apt-get install redis-server", "brew install redis"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q: %s", want, msg)
				}
			}
		})
	}
}

func TestNewServerBadArgs(t *testing.T) {
	NewServer(t).Close() // skips here when redis-server is missing outside CI
	f := &fakeTB{TB: t}
	f.run(func(tb testing.TB) {
		NewServer(tb, "--no-such-option", "1")
		t.Error("NewServer returned for a server that cannot start")
	})
	if !f.failed || f.skipped {
		t.Fatalf("failed=%v skipped=%v, want a failure", f.failed, f.skipped)
	}
	if msg := strings.Join(f.msgs, "\n"); !strings.Contains(msg, "Bad directive") {
		t.Errorf("failure lacks the server log: %s", msg)
	}
}
