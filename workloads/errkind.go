package workloads

import (
	"context"
	"errors"
	"net"
	"os"

	"github.com/lockbench/lockbench/acl"
)

// Error kinds the cycles count (see results.Recorder.Error) for a failed acquisition or
// release.
const (
	// kindAcquire is an acquisition that failed for any reason but a timeout.
	kindAcquire = "acquire"
	// kindRelease is a release that failed for any reason but a timeout.
	kindRelease = "release"
	// kindTimeout is an acquisition or release cut short by a deadline, mostly the client's
	// reply timeout (drivers.ReplyTimeout) on a server that took the command and did not
	// answer. A stalled server (paused, wedged, partitioned) shows as these rather than as
	// failures of the lock, so a user can tell "Redis stopped answering" from "the lock script
	// failed". A release still hanging when the run's release grace ends is cancelled, not timed
	// out, and stays kindRelease.
	kindTimeout = "timeout"
	// KindACLRefused is an acquisition or release the server refused the ACL user: a command,
	// key or channel it may not use (NOPERM). It is the deployment's setup, not the lock, and
	// lockbench run names what the user lacks (see package acl).
	KindACLRefused = "acl_refused"
	// KindSubscribe is a waiter's (S)SUBSCRIBE the server refused (drivers.WaitStats): the
	// waiters then poll instead of being woken, slower but with no failed Lock to show for it.
	KindSubscribe = "subscribe"
)

// failureKind returns the error kind of an operation op (kindAcquire or kindRelease) that failed
// with err: kindTimeout when err is a deadline, KindACLRefused when the ACL user may not do
// it, op otherwise. The run's own end is not a failure
// and is handled before this (see cycleBase.acquireFailed).
func failureKind(op string, err error) string {
	if isTimeout(err) {
		return kindTimeout
	}
	if acl.IsRefusal(err) {
		return KindACLRefused
	}
	return op
}

// isTimeout reports whether err is a deadline: a context's, a socket's (go-redis and rueidis
// wrap os.ErrDeadlineExceeded in a *net.OpError), or any net.Error that says so.
func isTimeout(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
