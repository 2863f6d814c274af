package workloads

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
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

// stuckCtx is a context whose deadline has passed but whose timer has not marked it done yet:
// the moment in which a socket deadline taken from it has already fired.
type stuckCtx struct {
	context.Context
	deadline time.Time
}

func (c stuckCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// An attempt that fails once the phase's deadline has passed ended with the phase, even before
// the context says so; before the deadline, and without one, it is a failure to count.
func TestPhaseOver(t *testing.T) {
	now := time.Now()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"no deadline", context.Background(), false},
		{"deadline ahead", stuckCtx{context.Background(), now.Add(time.Hour)}, false},
		{"deadline passed, not yet done", stuckCtx{context.Background(), now.Add(-time.Millisecond)}, true},
		{"canceled", canceled, true},
	} {
		if got := phaseOver(tc.ctx); got != tc.want {
			t.Errorf("%s: phaseOver = %v, want %v", tc.name, got, tc.want)
		}
	}
	var p cycleBase
	if err := p.acquireFailed(stuckCtx{context.Background(), now.Add(-time.Millisecond)}, nil, errors.New("i/o timeout")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("acquireFailed after the deadline = %v, want the phase's end (DeadlineExceeded)", err)
	}
}
