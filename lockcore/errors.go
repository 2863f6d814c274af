package lockcore

import "errors"

var (
	// ErrNotOwner is returned by Unlock when the caller does not hold the lock: it was never
	// taken by this owner, or its lease ran out and the lock is gone or someone else's.
	ErrNotOwner = errors.New("lockcore: lock not held by this owner")
	// ErrNoOwner is returned when a zero Owner is passed; make owners with Client.NewOwner.
	ErrNoOwner = errors.New("lockcore: zero Owner; use Client.NewOwner")
	// ErrClosed is returned by operations on a closed Client.
	ErrClosed = errors.New("lockcore: client closed")
	// ErrInDoubt is returned by an attempt that was not sent because an earlier call of this
	// Client with the same owner on the same lock got no reply, so that it is not known whether
	// Redis holds the lock for it (see Client.Stats Doubts). The Client resolves it in the
	// background as soon as Redis answers; a waiting acquisition (Lock, TryLock with a wait)
	// keeps waiting through it, and only an attempt that may not wait reports it.
	ErrInDoubt = errors.New("lockcore: an earlier call's outcome on this lock is unknown; retry once Redis answers")
)
