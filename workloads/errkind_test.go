package workloads

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
)

// timeoutErr is a net.Error that says it timed out without wrapping a deadline error, as some
// client libraries build their own.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestFailureKind(t *testing.T) {
	for _, c := range []struct {
		name string
		op   string
		err  error
		want string
	}{
		{"context deadline", kindAcquire, context.DeadlineExceeded, kindTimeout},
		{"wrapped context deadline", kindRelease, fmt.Errorf("unlock: %w", context.DeadlineExceeded), kindTimeout},
		{"socket deadline", kindRelease, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, kindTimeout},
		{"net.Error timeout", kindAcquire, fmt.Errorf("lock: %w", timeoutErr{}), kindTimeout},
		{"script error", kindAcquire, errors.New("ERR Error running script"), kindAcquire},
		{"connection refused", kindRelease, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, kindRelease},
		{"cancelled", kindRelease, context.Canceled, kindRelease},
	} {
		if got := failureKind(c.op, c.err); got != c.want {
			t.Errorf("%s: failureKind(%q, %v) = %q, want %q", c.name, c.op, c.err, got, c.want)
		}
	}
}
