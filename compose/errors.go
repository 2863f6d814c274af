package compose

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrRedisServerNotFound is returned, possibly wrapped, when the redis-server binary cannot be
// found. Callers check it with errors.Is to offer --addr or skip tests. It is a value, safe to
// share between goroutines.
var ErrRedisServerNotFound = errors.New("redis-server not found in PATH: install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or pass --addr to use an existing Redis")

// ErrServerExited is returned, wrapped with the exit status and the server log, when a
// redis-server process exits before it answers PING: a bad option, a port taken, a crash. It is
// a value, safe to share between goroutines.
var ErrServerExited = errors.New("redis-server exited during startup")

// installHint repeats ErrRedisServerNotFound's advice for errors that cannot use its text (an
// explicit path is not a PATH lookup).
const installHint = "install redis-server (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or pass --addr to use an existing Redis"

// binaryError reports a redis-server binary other than the default that does not exist. It wraps
// both ErrRedisServerNotFound, so every "no binary" case is one errors.Is check, and the lookup
// error, but its text names what the user actually asked for.
type binaryError struct {
	name     string // as given in NativeOptions.Binary
	explicit bool   // name is a path, not a PATH lookup
	err      error
}

func (e *binaryError) Error() string {
	if e.explicit {
		return fmt.Sprintf("redis-server binary %q does not exist: fix the path, or %s", e.name, installHint)
	}
	return fmt.Sprintf("%q not found in PATH: %s", e.name, installHint)
}

func (e *binaryError) Unwrap() []error { return []error{ErrRedisServerNotFound, e.err} }

// startError is a failed start of one redis-server process. It carries the end of the server's
// log, since the cause ("exit status 1") is rarely the reason ("Bad directive").
type startError struct {
	addr    string
	pid     int
	cause   error
	logTail string
}

func (e *startError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "compose: start redis-server on %s (pid %d): %v", e.addr, e.pid, e.cause)
	if tail := strings.TrimRight(e.logTail, "\n"); tail != "" {
		fmt.Fprintf(&b, "\n--- end of redis-server log ---\n%s", tail)
	} else {
		b.WriteString(" (redis-server log is empty)")
	}
	return b.String()
}

func (e *startError) Unwrap() error { return e.cause }

// startTimeoutError is the cause of a start that ran out of NativeOptions.StartTimeout. It
// wraps context.DeadlineExceeded, as a plain context timeout would.
type startTimeoutError struct{ timeout time.Duration }

func (e *startTimeoutError) Error() string {
	return fmt.Sprintf("not ready within NativeOptions.StartTimeout (%v)", e.timeout)
}

func (e *startTimeoutError) Unwrap() error { return context.DeadlineExceeded }
