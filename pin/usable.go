package pin

import (
	"errors"
	"fmt"
	"runtime"
)

// ErrNotAvailable is wrapped by ParseUsable's error for a list that names a CPU this process
// may not use.
var ErrNotAvailable = errors.New("CPU not available")

// ParseUsable reads a CPU list (Parse) that this process is to place something on: every CPU
// of it must be in avail (Available), and the system must support placement. Errors wrap
// ErrBadList; ErrNotAvailable, with a message that starts with the list ("1,7: CPU 7 does not
// exist here or is not available to lockbench (available: 0-3)"); or ErrUnsupported.
func ParseUsable(list string, avail CPUs) (CPUs, error) {
	cpus, err := Parse(list)
	if err != nil {
		return nil, err
	}
	if miss := cpus.Missing(avail); len(miss) > 0 {
		return nil, &notAvailableError{list: list, miss: miss, avail: avail}
	}
	if runtime.GOOS != "linux" {
		return nil, ErrUnsupported
	}
	return cpus, nil
}

// notAvailableError is ErrNotAvailable with the message lockbench has always printed.
type notAvailableError struct {
	list        string
	miss, avail CPUs
}

func (e *notAvailableError) Error() string {
	return fmt.Sprintf("%s: CPU %s does not exist here or is not available to lockbench (available: %s)", e.list, e.miss, e.avail)
}

func (e *notAvailableError) Unwrap() error { return ErrNotAvailable }
