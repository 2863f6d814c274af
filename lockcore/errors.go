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
)
