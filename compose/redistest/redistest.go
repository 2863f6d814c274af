// Package redistest starts private redis-server processes for tests, in the spirit of
// net/http/httptest: one call gives a test its own server on a free loopback port, stopped when
// the test ends.
package redistest

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose"
)

// logLinesOnFailure is how much of the server log a failed test prints.
const logLinesOnFailure = 30

// NewServer starts a private redis-server for the test, with extraArgs appended to its command
// line (e.g. "--maxmemory", "100mb"), and registers t.Cleanup to stop it. If redis-server is
// missing, the test fails when the environment variable CI is true (CI must have it; run
// scripts/install-deps.sh) and is skipped with the install message otherwise. Any other start
// failure fails the test with the server log. If the test fails, the end of the server log is
// logged. NewServer is safe for concurrent use by parallel tests; each call starts its own
// server.
func NewServer(t testing.TB, extraArgs ...string) *compose.Single {
	t.Helper()
	return newServer(t, compose.NativeOptions{ExtraArgs: extraArgs})
}

// NewTLSServer is NewServer for a server that speaks TLS only, with the certificates of tlsOpt
// (see compose.NativeTLS); its Addr is the TLS port.
func NewTLSServer(t testing.TB, tlsOpt compose.NativeTLS, extraArgs ...string) *compose.Single {
	t.Helper()
	return newServer(t, compose.NativeOptions{ExtraArgs: extraArgs, TLS: &tlsOpt})
}

func newServer(t testing.TB, opt compose.NativeOptions) *compose.Single {
	t.Helper()
	s, err := compose.StartSingle(t.Context(), opt)
	if errors.Is(err, compose.ErrRedisServerNotFound) {
		if inCI() {
			t.Fatalf("redistest: %v\n(CI is set: the CI machine must have redis-server; scripts/install-deps.sh installs it)", err)
		}
		t.Skipf("redistest: %v", err)
	}
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(func() {
		closeErr := s.Close()
		if t.Failed() {
			t.Logf("redistest: redis-server %s log (end):\n%s", s.Addr(), tail(s.Log(), logLinesOnFailure))
		}
		if closeErr != nil {
			t.Errorf("redistest: stop redis-server %s: %v", s.Addr(), closeErr)
		}
	})
	return s
}

// inCI reports whether CI is set to a true value ("true", as CI services set it, or "1").
func inCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
