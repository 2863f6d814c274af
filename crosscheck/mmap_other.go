//go:build !unix

package crosscheck

import (
	"errors"
	"os"
)

// errNoMmap: this platform's build has no shared mapping; lockbench --procs then runs without
// the cross-process checker and says so.
var errNoMmap = errors.New("shared memory mappings are not supported on this platform")

func mmap(*os.File, int) ([]byte, error) { return nil, errNoMmap }

func munmap([]byte) error { return nil }
