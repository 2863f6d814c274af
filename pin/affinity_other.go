//go:build !linux

package pin

import "runtime"

// Available returns every CPU the Go runtime counts; the OS offers no mask lockbench reads.
func Available() (CPUs, error) {
	out := make(CPUs, runtime.NumCPU())
	for i := range out {
		out[i] = i
	}
	return out, nil
}

// Self is unsupported off Linux unless c is empty.
func Self(c CPUs) (func(), error) {
	if len(c) == 0 {
		return func() {}, nil
	}
	return nil, ErrUnsupported
}

// Start is unsupported off Linux unless c is empty.
func Start(c CPUs, start func() error) error {
	if len(c) == 0 {
		return start()
	}
	return ErrUnsupported
}

// Of is unsupported off Linux.
func Of(pid int) (CPUs, error) { return nil, ErrUnsupported }
