//go:build !linux

package rawio

import "os"

// File is not used off Linux: Wrap returns nil there.
type File struct{ *os.File }

// Wrap returns nil off Linux: use f as it is.
func Wrap(f *os.File) *File { return nil }
