package docker

import (
	"errors"
	"fmt"

	"github.com/distribution/reference"
)

// ErrBadImageRef is wrapped by CheckImageRef's error.
var ErrBadImageRef = errors.New("not an image reference")

// CheckImageRef says what is wrong with an image reference given by a user, before anything
// asks Docker for it: nil for e.g. redis:7 or lockbench/redis:local.
func CheckImageRef(ref string) error {
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return &badRefError{ref: ref, err: err}
	}
	return nil
}

// badRefError keeps the message lockbench has always printed while being ErrBadImageRef.
type badRefError struct {
	ref string
	err error
}

func (e *badRefError) Error() string {
	return fmt.Sprintf("%q is %v (want e.g. redis:7 or lockbench/redis:local): %v", e.ref, ErrBadImageRef, e.err)
}

func (e *badRefError) Unwrap() []error { return []error{ErrBadImageRef, e.err} }
