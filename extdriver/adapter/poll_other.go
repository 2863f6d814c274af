//go:build !unix

package adapter

import "io"

// pollable returns r as it is: the poller question (poll_unix.go) is one of Unix pipes.
func pollable(r io.Reader) (io.Reader, func()) { return r, func() {} }

// rawOut returns w as it is off Unix.
func rawOut(w io.Writer) (io.Writer, func()) { return w, func() {} }
